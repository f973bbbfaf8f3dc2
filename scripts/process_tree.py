"""The harness of the measurements that run `witness` itself: calls cut or tiled from the
sample call, and a command run while the memory and threads of its whole process tree are
sampled with psutil."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from scripts import SAMPLE_CALL  # noqa: E402

MIB = 2**20


def write_call(path: Path, seconds: float, offset: float = 0.0) -> Path:
    """A 16 kHz 16-bit wav of ``seconds`` of the sample call from ``offset``, tiled when longer."""
    from witness.audio import SAMPLE_RATE, load_audio, write_wav

    samples = load_audio(SAMPLE_CALL / "sample.wav").samples
    start, n = int(offset * SAMPLE_RATE), int(seconds * SAMPLE_RATE)
    reps = int(np.ceil((start + n) / len(samples)))
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_wav(path, np.tile(samples, reps)[start : start + n])


@dataclass
class Sample:
    at: float  # s since the start
    rss: int  # bytes, summed over the tree (shared pages counted once per process)
    pss: int  # bytes, proportional set size summed over the tree (shared pages split)
    processes: int
    by_process: dict[str, int] = field(default_factory=dict)  # "parent" / "<engine>-<pid>" -> RSS
    mark: int = 0  # what ``mark()`` said at that moment (e.g. files done)
    threads: dict[str, dict[int, float]] = field(default_factory=dict)  # process -> thread id -> CPU s


def write_calls(folder: Path, files: int, seconds: float) -> Path:
    """``folder`` with ``files`` calls of ``seconds`` each (call-000.wav, …: cuts of the
    sample call at different offsets), those already there kept."""
    for i in range(files):
        path = folder / f"call-{i:03d}.wav"
        if not path.exists():
            write_call(path, seconds, offset=(i * 1.7) % 20)
    return folder


def run_sampled(cmd: list[str], every: float = 0.2, mark: Callable[[], int] | None = None) -> tuple[float, list[Sample]]:
    """(wall seconds, samples) of ``cmd`` run from the repository root; SystemExit unless
    it exits with 0."""
    start = time.perf_counter()
    proc = psutil.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL)
    samples: list[Sample] = []
    while proc.poll() is None:
        samples.append(_sample(proc, time.perf_counter() - start, mark() if mark else 0))
        time.sleep(every)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {proc.returncode})")
    return time.perf_counter() - start, samples


def _sample(proc: psutil.Process, at: float, mark: int) -> Sample:
    rss = pss = 0
    by_process, threads = {}, {}
    tree = [proc] + proc.children(recursive=True)
    for p in tree:
        try:
            info = p.memory_full_info()
            name = "parent" if p.pid == proc.pid else f"{engine(p)}-{p.pid}"
            threads[name] = {t.id: t.user_time + t.system_time for t in p.threads()}
        except psutil.Error:
            continue
        rss += info.rss
        pss += info.pss
        by_process[name] = info.rss
    return Sample(at, rss, pss, len(tree), by_process, mark, threads)


RANK = ("asr", "diarization", "parent", "tracker", "worker")  # a label seen once is kept over those after it


@dataclass
class Process:
    """One process of the tree over a whole run."""

    label: str  # "parent", "<engine>-<pid>" (a worker is "worker-<pid>" until its engine's library loads)
    peak_rss: int = 0
    most_threads: int = 0
    cpu: dict[int, float] = field(default_factory=dict)  # thread id -> CPU s at its last sample


def processes(samples: list[Sample]) -> list[Process]:
    """Each process seen in ``samples``, labelled by what it turned out to run."""
    seen: dict[str, Process] = {}
    for s in samples:
        for label, rss in s.by_process.items():
            proc = seen.setdefault(label.rpartition("-")[2], Process(label))
            if RANK.index(label.partition("-")[0]) < RANK.index(proc.label.partition("-")[0]):
                proc.label = label  # every worker maps onnxruntime; whisper's library tells ASR apart
            proc.peak_rss = max(proc.peak_rss, rss)
            proc.most_threads = max(proc.most_threads, len(s.threads[label]))
            proc.cpu.update(s.threads[label])
    return sorted(seen.values(), key=lambda p: p.label)


def engine(p: psutil.Process) -> str:
    """Which engine a worker runs (one of ``RANK``), from the native libraries it has loaded so far."""
    if "resource_tracker" in " ".join(p.cmdline()):
        return "tracker"
    paths = " ".join(m.path for m in p.memory_maps())
    return "asr" if "whisper" in paths else "diarization" if "onnxruntime" in paths else "worker"


def witness(*args: str) -> list[str]:
    """A quiet ``witness`` command line (no progress, only errors)."""
    return [sys.executable, "-m", "witness", "-q", *args]


def load() -> str:
    one, five, _ = psutil.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {psutil.cpu_count()} cores"
