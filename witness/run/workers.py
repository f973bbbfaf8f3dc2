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
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from witness.run import shm
from witness.errors import WitnessError, engine_error

if TYPE_CHECKING:
    from witness.audio import AudioInfo

log = logging.getLogger(__name__)



class WorkerDied(WitnessError):
    """A worker process ended without answering (a native crash, a signal, out of memory)."""

    def __init__(self, name: str, exitcode: int | None, job: str = ""):
        how = f"signal {signal.Signals(-exitcode).name}" if exitcode and exitcode < 0 else f"exit code {exitcode}"
        self.signal_name = signal.Signals(-exitcode).name if exitcode and exitcode < 0 else None
        self.exitcode = exitcode
        super().__init__(f"the {name} worker died ({how}) while working on it", job or None)


@dataclass(frozen=True)
class SharedAudio:
    """A read-only view of decoded samples that any process can map: (length,) float32,
    in a file made and reaped by ``witness.run.shm``; for a two-channel file decoded with
    ``stereo``, its channels too (``stereo_path``: (length, 2) float32 interleaved)."""

    path: str
    length: int
    stereo_path: str | None = None

    @classmethod
    def create(cls, samples: np.ndarray) -> "SharedAudio":
        path = shm.new_file(shm.folder_for(samples.size * 4, "samples"))
        with open(path, "wb") as f:
            np.asarray(samples, dtype=np.float32).tofile(f)
        return cls(path, int(len(samples)))

    @classmethod
    def decode(cls, source: str | Path, stereo: bool = False) -> tuple[AudioInfo, "SharedAudio"]:
        """``source`` decoded straight into shared memory (it is never whole in this
        process), or into the disk's temp folder where shared memory has no room for it
        (``shm.folder_for``; a folder that fills up while it is written is left for the
        next); InputError for bad audio, NoRoom when no folder can hold it, and nothing
        left behind. ``stereo``: keep a two-channel file's channels as well (a call may
        have one party per channel)."""
        from witness.audio import decoded_bytes, probe

        size = decoded_bytes(probe(source), stereo)
        folder = shm.folder_for(size, source)
        while True:
            try:
                return cls._decode_in(folder, source, stereo)
            except OSError as exc:
                if exc.errno not in shm.FULL:
                    raise
                log.info("%s: %s filled up while its decoded audio was written", source, folder)
                folder = shm.folder_for(size, source, after=folder)

    @classmethod
    def _decode_in(cls, folder: Path, source: str | Path, stereo: bool) -> tuple[AudioInfo, "SharedAudio"]:
        from witness.audio import decode_to_file

        paths: list[str] = []
        try:  # to the return: a Ctrl-C once a file exists (the second being made, one dropped) leaves none
            paths.append(shm.new_file(folder))
            if stereo:
                paths.append(shm.new_file(folder))
            info, length = decode_to_file(source, *paths)
            if stereo and info.channels != 2:
                shm.remove(paths[1])
                del paths[1]
            return info, cls(paths[0], length, paths[1] if len(paths) > 1 else None)
        except BaseException:
            for path in paths:
                shm.remove(path)
            raise

    def open(self) -> np.ndarray:
        """The mono mix: (length,) float32."""
        if self.length == 0:
            return np.zeros(0, dtype=np.float32)
        return np.memmap(self.path, dtype=np.float32, mode="r", shape=(self.length,))

    def open_stereo(self) -> np.ndarray | None:
        """The two channels, (2, length) float32, when they were kept; else None."""
        if self.stereo_path is None or self.length == 0:
            return None
        from witness.audio import stereo_view

        return stereo_view(self.stereo_path, self.length)

    def unlink(self) -> None:
        shm.remove(self.path)
        if self.stereo_path is not None:
            shm.remove(self.stereo_path)


@dataclass(frozen=True)
class Job:
    key: str  # names the file in errors and progress
    audio: SharedAudio


@dataclass(frozen=True)
class Event:
    """What a worker says about the job ``key``: "start" (it began; payload None),
    "progress" (payload (stage, completed, total)), "done" (payload the result), "error"
    (payload the WitnessError) or "log" (a log line: (logger name, level, text), which
    ``next_event`` logs here and never returns). A worker answers its jobs in the order
    they were submitted."""

    kind: str
    key: str
    payload: Any = None


class Worker:
    """One long-lived engine process: ``factory(*args)`` builds the engine (a callable
    ``engine(audio: SharedAudio, progress) -> result``) once, on the first job, or with ``eager`` as
    soon as the process starts (while the caller decodes a file or another engine works); ``submit``
    queues jobs (served in order), ``next_event`` reads what the worker says."""

    def __init__(self, name: str, factory: Callable[..., Any], args: tuple = (), eager: bool = False):
        self.name = name
        ctx = multiprocessing.get_context("spawn")
        # Pipes, not Queues: the worker's sends are written before it takes the next job, so
        # an answer is never lost in a feeder thread when the process dies right after; and
        # pipes hold no semaphores, which a killed parent would leave to the resource tracker.
        inbox, self._inbox = ctx.Pipe(duplex=False)
        self._events, sender = ctx.Pipe(duplex=False)
        level = logging.getLogger().getEffectiveLevel()  # -v and --debug reach the worker's log
        self._process = ctx.Process(target=_serve, args=(name, factory, args, inbox, sender, level, eager),
                                    name=f"witness-{name}", daemon=True)
        self._process.start()
        # The worker holds the only sender (its death reads as end of file) and the only
        # inbox reader; this process the only inbox sender (its death ends the worker).
        sender.close()
        inbox.close()
        self.running: str | None = None  # the key of the job the worker has started and not answered

    def submit(self, job: Job) -> None:
        try:
            self._inbox.send(job)
        except OSError:
            pass  # the worker is gone: next_event says so, and the flow resubmits the job

    def next_event(self, timeout: float = 0.2) -> Event | None:
        """The worker's next event, or None after ``timeout`` s without one; WorkerDied
        (naming the job it was running, if any) once the process has ended."""
        while True:
            try:
                ready = self._events.poll(timeout)
                event = self._events.recv() if ready else None
            except (EOFError, OSError):
                event = None
                ready = True
            if event is None or event.kind != "log":
                break
            _relog(*event.payload)
            timeout = 0  # a log line is no answer: look again for what came after it
        if event is None:
            if ready or not self._process.is_alive():
                self._process.join(1.0)
                raise WorkerDied(self.name, self._process.exitcode, self.running or "")
            return None
        if event.kind == "start":
            self.running = event.key
        elif event.kind in ("done", "error"):
            self.running = None
        return event

    @property
    def alive(self) -> bool:
        return self._process.is_alive()

    @property
    def handles(self) -> tuple[Any, int]:
        """(event pipe, process sentinel): ready when there is an event or the worker ended;
        for ``multiprocessing.connection.wait`` over several workers."""
        return self._events, self._process.sentinel

    def close(self, timeout: float = 10.0) -> None:
        """Ask the worker to stop (it finishes its current job first), and make sure it does
        within ``timeout`` s."""
        if self._process.is_alive():
            try:
                self._inbox.send(None)
            except OSError:
                pass
            self._process.join(timeout)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout)
        self._inbox.close()
        self._events.close()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def end_helpers() -> None:
    """Stop the resource tracker that the spawn start method runs beside the first worker:
    it ends only after this process does, so a harness waiting on the process group would
    find it left behind. For the end of a command (a later worker starts a new one)."""
    from multiprocessing import resource_tracker

    resource_tracker._resource_tracker._stop()


def wait_any(workers: list[Worker], timeout: float) -> None:
    """Block until one of ``workers`` has an event or has ended, or ``timeout`` s pass."""
    from multiprocessing.connection import wait

    if workers:
        wait([h for w in workers for h in w.handles], timeout)


def _serve(name: str, factory: Callable[..., Any], args: tuple, inbox, events, level: int, eager: bool) -> None:
    """The worker process: build the engine (at once when ``eager``, else on the first job), then
    answer jobs until None.
    A parent that is gone (killed outright) ends the worker quietly: nobody is listening."""
    for stop in (signal.SIGINT, signal.SIGTERM):  # stopping is the parent's to handle (it closes us)
        signal.signal(stop, signal.SIG_IGN)
    events = _Sender(events)
    namer = _ToParent(events)
    root = logging.getLogger()
    root.setLevel(level)  # the parent's level (-v, --debug); the parent's handlers print, or not
    root.addHandler(namer)
    try:
        _answer_jobs(name, factory, args, inbox, events, namer, eager)
    except (BrokenPipeError, ConnectionResetError, EOFError):
        pass


class _Sender:
    """The worker's end of the event pipe, for the job's thread and any a library logs from."""

    def __init__(self, connection) -> None:
        self._connection = connection
        self._lock = threading.Lock()

    def send(self, event: Event) -> None:
        with self._lock:
            self._connection.send(event)


class _ToParent(logging.Handler):
    """A worker's log records, sent to the parent as "log" events (its logging prints them,
    or nothing: the Python API prints nothing unless asked), each line naming the file of
    the job at hand (``key``)."""

    def __init__(self, events: _Sender) -> None:
        super().__init__()
        self.events = events
        self.key = ""
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = f"{self.key}: {self.format(record)}" if self.key else self.format(record)
            self.events.send(Event("log", self.key, (record.name, record.levelno, text)))
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the parent is gone: nobody to tell


def _relog(name: str, level: int, text: str) -> None:
    """A worker's log line, logged in this process as if it were its own."""
    logging.getLogger(name).log(level, "%s", text)


def _answer_jobs(name: str, factory: Callable[..., Any], args: tuple, inbox, events, namer: _ToParent,
                 eager: bool) -> None:
    engine = None
    if eager:
        try:
            engine = factory(*args)
        except Exception:  # built again on the first job, whose error it becomes
            log.debug("the %s engine could not be built ahead of its first job", name, exc_info=True)
    while (job := _next_job(inbox)) is not None:
        namer.key = job.key
        events.send(Event("start", job.key))
        try:
            if engine is None:
                engine = factory(*args)
            result = engine(job.audio, lambda *p: events.send(Event("progress", job.key, p)))
            events.send(Event("done", job.key, result))
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as exc:  # reported, naming the file the job was for; the worker lives on
            events.send(Event("error", job.key, engine_error(name, exc, job.key)))


def _next_job(inbox) -> Job | None:
    """The next job; None when told to stop. A parent killed outright cannot close its
    workers: its end of the inbox closes with it, and the worker ends (EOFError)."""
    return inbox.recv()

