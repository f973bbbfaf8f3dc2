"""Where a transcription's time goes: the engine's own clock per stage, and whisper.cpp's counters.

``StageClock`` adds up wall seconds per named stage (the VAD, the packing, each decoding pass
by temperature, the word assembly); the engine keeps one for its whole life, and a benchmark
reads and resets it per file. ``parse_print_timings`` reads what ``whisper_print_timings``
logs (milliseconds and runs per phase: mel, sample, encode, decode, batchd, prompt; the
fallback counts) into seconds.
"""

from __future__ import annotations

import re
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Iterator

_PHASE = re.compile(r"whisper_print_timings:\s+(\w+) time =\s+([\d.]+) ms(?: /\s+(\d+) runs)?")
_FALLBACKS = re.compile(r"fallbacks =\s+(\d+) p /\s+(\d+) h")


class StageClock:
    """Wall seconds and counts per stage, added up until ``reset`` (decoders running at once
    add theirs from several threads)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self.seconds[name] += time.perf_counter() - start
                self.counts[name] += 1

    def reset(self) -> None:
        self.seconds.clear()
        self.counts.clear()


def parse_print_timings(text: str) -> dict[str, float]:
    """{phase: seconds, phase + " runs": count, "fallbacks p"/"fallbacks h": count} from the
    log of ``whisper_print_timings`` ("p": a window decoded again for a poor log-probability
    or entropy, "h": for a hallucinated segment)."""
    out: dict[str, float] = {}
    for phase, ms, runs in _PHASE.findall(text):
        out[phase] = float(ms) / 1000
        if runs:
            out[phase + " runs"] = int(runs)
    fallbacks = _FALLBACKS.search(text)
    if fallbacks:
        out["fallbacks p"], out["fallbacks h"] = int(fallbacks.group(1)), int(fallbacks.group(2))
    return out
