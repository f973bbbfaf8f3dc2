"""Engine worker processes and the audio they share.

Whisper and diarization each run in their own spawned (not forked) process, so the two GPU
driver stacks never share a process and a native crash takes down one worker, not Witness.
A worker builds its engine once and then serves jobs, one file each, until closed: a single
file is a batch of one. Audio is decoded once by the parent and handed over as a
memory-mapped float32 file (in /dev/shm when there is one), which every worker maps
read-only: no copy per worker.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from witness.errors import WitnessError

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
CRASH_FOR_TESTS = "WITNESS_TEST_CRASH"  # "<worker name>[:<job number>]": that job dies of SIGKILL


class WorkerDied(WitnessError):
    """A worker process ended without answering (a native crash, a signal, out of memory)."""

    def __init__(self, name: str, exitcode: int | None, job: str = ""):
        how = f"signal {signal.Signals(-exitcode).name}" if exitcode and exitcode < 0 else f"exit code {exitcode}"
        self.signal_name = signal.Signals(-exitcode).name if exitcode and exitcode < 0 else None
        super().__init__(f"the {name} worker died ({how}) while working on it", job or None)


@dataclass(frozen=True)
class SharedAudio:
    """A read-only view of decoded samples that any process can map: (length,) float32."""

    path: str
    length: int

    @classmethod
    def create(cls, samples: np.ndarray) -> "SharedAudio":
        folder = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        fd, path = tempfile.mkstemp(prefix="witness-audio-", suffix=".f32", dir=folder)
        with os.fdopen(fd, "wb") as f:
            np.asarray(samples, dtype=np.float32).tofile(f)
        return cls(path, int(len(samples)))

    def open(self) -> np.ndarray:
        if self.length == 0:
            return np.zeros(0, dtype=np.float32)
        return np.memmap(self.path, dtype=np.float32, mode="r", shape=(self.length,))

    def unlink(self) -> None:
        Path(self.path).unlink(missing_ok=True)


@dataclass(frozen=True)
class Job:
    key: str  # names the file in errors and progress
    audio: SharedAudio
    number: int = 0


class Worker:
    """One long-lived engine process: ``factory(*args)`` builds the engine (a callable
    ``engine(samples, progress) -> result``) once; ``run(job)`` sends a job and waits."""

    def __init__(self, name: str, factory: Callable[..., Any], args: tuple = ()):
        self.name = name
        ctx = multiprocessing.get_context("spawn")
        self._inbox = ctx.Queue()
        self._outbox = ctx.Queue()
        self._process = ctx.Process(target=_serve, args=(name, factory, args, self._inbox, self._outbox),
                                    name=f"witness-{name}", daemon=True)
        self._process.start()
        self._jobs = 0

    def submit(self, job: Job) -> None:
        self._jobs += 1
        self._inbox.put(Job(job.key, job.audio, self._jobs))

    def result(self, key: str, progress: Progress | None = None) -> Any:
        """Wait for the answer to the job ``key``; WorkerDied if the process ends first."""
        while True:
            done, value = self.poll(key, progress)
            if done:
                return value

    def poll(self, key: str, progress: Progress | None = None, timeout: float = 0.2) -> tuple[bool, Any]:
        """One wait of at most ``timeout`` s: (True, result) when the job is done, else
        (False, None); progress messages go to ``progress``; errors are raised."""
        try:
            kind, *payload = self._outbox.get(timeout=timeout)
        except queue.Empty:
            if not self._process.is_alive():
                raise WorkerDied(self.name, self._process.exitcode, key) from None
            return False, None
        if kind == "progress":
            if progress:
                progress(*payload)
            return False, None
        if kind == "error":
            raise payload[0]
        return True, payload[0]

    def run(self, job: Job, progress: Progress | None = None) -> Any:
        self.submit(job)
        return self.result(job.key, progress)

    @property
    def alive(self) -> bool:
        return self._process.is_alive()

    def close(self, timeout: float = 10.0) -> None:
        """Ask the worker to stop, and make sure it does."""
        if self._process.is_alive():
            try:
                self._inbox.put(None)
            except (OSError, ValueError):
                pass
            self._process.join(timeout)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout)
        self._inbox.close()
        self._outbox.close()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(name: str, factory: Callable[..., Any], args: tuple, inbox, outbox) -> None:
    """The worker process: build the engine on the first job, then answer jobs until None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    engine = None
    while (job := inbox.get()) is not None:
        _maybe_crash_for_tests(name, job.number)
        try:
            if engine is None:
                engine = factory(*args)
            result = engine(job.audio.open(), lambda stage, done, total: outbox.put(("progress", stage, done, total)))
            outbox.put(("done", result))
        except WitnessError as exc:  # the same kind (exit code), naming the file the job was for
            outbox.put(("error", type(exc)(exc.message, exc.path or job.key)))
        except Exception as exc:  # a bug or a library error: reported, the worker lives on
            outbox.put(("error", WitnessError(f"{name} failed: {type(exc).__name__}: {exc}", job.key)))


def _maybe_crash_for_tests(name: str, number: int) -> None:
    spec = os.environ.get(CRASH_FOR_TESTS, "")
    for item in filter(None, spec.split(",")):
        who, _, which = item.partition(":")
        if who == name and (not which or int(which) == number):
            os.kill(os.getpid(), signal.SIGKILL)
