"""Engines for worker tests: module-level so a spawned process can import them."""

from __future__ import annotations

from witness.errors import InputError


def summing_engine(scale: float):
    def run(samples, progress):
        progress("sum", 0, 1)
        progress("sum", 1, 1)
        return float(samples.sum()) * scale

    return run


def refusing_engine():
    def run(samples, progress):
        raise InputError("too quiet to transcribe")

    return run


def sleeping_engine(seconds: float):
    """Works ``seconds`` per job and says when: (start, end) on time.time()'s clock."""
    import time

    def run(samples, progress):
        start = time.time()
        time.sleep(seconds)
        return start, time.time()

    return run
