"""Engines for worker tests: module-level so a spawned process can import them."""

from __future__ import annotations

from witness.errors import InputError


def summing_engine(scale: float):
    def run(audio, progress):
        progress("sum", 0, 1)
        progress("sum", 1, 1)
        return float(audio.open().sum()) * scale

    return run


def refusing_engine():
    def run(audio, progress):
        raise InputError("too quiet to transcribe")

    return run


def marking_engine(folder: str):
    """Marks its build (a line in ``folder``/built); each job answers how many builds there were."""
    from pathlib import Path

    built = Path(folder) / "built"
    with built.open("a") as f:
        f.write("built\n")

    def run(audio, progress):
        return len(built.read_text().splitlines())

    return run


def unbuildable_engine():
    raise InputError("no model here")


def sleeping_engine(seconds: float, marks: str | None = None, follow: tuple[str, int] | None = None):
    """Works ``seconds`` per job and says when: (start, end) on time.time()'s clock.

    ``marks``: a folder where the start of job n is marked (a file named n). ``follow``: (such
    a folder, the number of jobs): job n, but the last, ends only once mark n + 1 is there (a
    minute at most), so the marking engine's next job has started before this one ends, however
    long the processes took to start."""
    import time
    from pathlib import Path

    jobs = 0

    def run(audio, progress):
        nonlocal jobs
        jobs += 1
        start = time.time()
        if marks:
            (Path(marks) / str(jobs)).touch()
        time.sleep(seconds)
        if follow and jobs < follow[1]:
            deadline = time.monotonic() + 60
            while not (Path(follow[0]) / str(jobs + 1)).exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return start, time.time()

    return run


def crashing_engine(factory, on_job: int, *args):
    """``factory(*args)``'s engine in a worker that dies of SIGKILL on its ``on_job``-th job
    (0: on every job), as a native crash would."""
    import os
    import signal

    engine = factory(*args)
    jobs = 0

    def run(audio, progress):
        nonlocal jobs
        jobs += 1
        if not on_job or jobs == on_job:
            os.kill(os.getpid(), signal.SIGKILL)
        return engine(audio, progress)

    return run


def crash_in(monkeypatch, name: str, on_job: int = 0) -> None:
    """The orchestrator's ``name`` workers die on their ``on_job``-th job (0: on every job)."""
    _wrap_engine(monkeypatch, name, crashing_engine, on_job)


def crashing_once_engine(factory, marker: str, *args):
    """``factory(*args)``'s engine in a worker that dies of SIGKILL on its first job unless
    ``marker`` exists (it makes it first): one death in all, whichever of several worker
    processes (Ray actors) gets there first."""
    import os
    import signal

    engine = factory(*args)

    def run(audio, progress):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return engine(audio, progress)
        os.kill(os.getpid(), signal.SIGKILL)

    return run


def crash_once_in(monkeypatch, name: str, marker) -> None:
    """The first of the orchestrator's ``name`` engines to start a job dies (see ``crashing_once_engine``)."""
    _wrap_engine(monkeypatch, name, crashing_once_engine, str(marker))


def _wrap_engine(monkeypatch, name: str, wrapper, arg) -> None:
    """The orchestrator builds engine ``name`` as ``wrapper(its factory, arg, job)``."""
    from functools import partial

    from witness.run import engines

    factory = engines.FACTORIES[name]
    monkeypatch.setitem(engines.FACTORIES, name, partial(wrapper, factory, arg))


def logging_engine():
    """Logs a warning on each job, as an engine does (``no speech found``)."""
    import logging

    def run(audio, progress):
        logging.getLogger("witness.diarize.pipeline").warning("found 3 speakers, more than the 2 allowed: kept 2")
        return 1.0

    return run
