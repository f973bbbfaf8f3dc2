"""Files through the engine workers as a pipeline: one file or a whole batch.

Each engine worker serves its own queue of files, in order. A file is decoded once (into
shared memory) when it enters the flow and released as soon as every engine has answered
for it; at most ``jobs`` files are in flight, so their decoded samples (about 230 MB per
hour of audio) are the memory a batch costs beyond the models. In a parallel plan each
file in flight is queued to both workers at once, so while one file is diarized the next
is transcribed; in a serial plan exactly one engine job runs at a time (Whisper, then
diarization, file after file) while the next file is decoded.

A worker that dies of a signal is replaced by a fresh one on demand: the file it was
working on is retried up to ``retries`` times, the files queued behind it are resubmitted
without counting a try. Any other failure (bad audio, an engine error, a second death,
an unexpected error while decoding or merging) ends that file with its error and the flow
goes on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Protocol

from witness.errors import WitnessError, file_error, internal_error
from witness.progress import FileProgress
from witness.transcript import AudioMeta, Transcript
from witness.run.workers import Event, Job, SharedAudio, Worker, WorkerDied, wait_any

log = logging.getLogger(__name__)

WAIT = 0.5  # s: longest sleep between looks at the workers (an event wakes the flow at once)


def default_jobs(mode: str) -> int:
    """Files in flight when ``--jobs`` is not given: in a serial plan the file being worked
    on plus the next one decoded; in a parallel plan one per engine plus one decoded."""
    return 3 if mode == "parallel" else 2


@dataclass(frozen=True)
class FileJob:
    """A file to transcribe. ``path`` also names it in errors and progress; ``sha256`` is
    the input's hash when the caller has it already ("": computed while decoding)."""

    path: str
    sha256: str = ""


@dataclass(frozen=True)
class FileResult:
    """How a file went: a transcript, or the error that ended it.

    ``attempts``: runs of its most-tried engine (1; 2 after a retry; 0 when it never
    reached an engine). ``seconds``: decoding, plus from its first engine job's start to its
    transcript (files in flight overlap, so these do not add up to a batch's wall time).
    """

    path: str
    transcript: Transcript | None
    error: WitnessError | None
    attempts: int
    seconds: float


class Host(Protocol):
    """What the flow needs from the orchestrator (``witness.run.orchestrate.Orchestrator``)."""

    names: tuple[str, ...]  # engines every file goes through, in serial order

    @property
    def mode(self) -> str: ...  # "parallel" or "serial"

    def decode(self, path: str, sha256: str = "") -> tuple[AudioMeta, SharedAudio]: ...

    def given(self, path: str) -> dict[str, Any]: ...  # results read from files, not from an engine

    def worker(self, name: str) -> Worker: ...

    def release(self, name: str, timeout: float = 10.0) -> None: ...

    def transcript(self, meta: AudioMeta, results: dict[str, Any], timings: dict[str, float],
                   audio: SharedAudio | None = None) -> Transcript: ...


def merged(host: Host, path: str, meta: AudioMeta, results: dict[str, Any], timings: dict[str, float],
           audio: SharedAudio | None = None) -> tuple[Transcript | None, WitnessError | None]:
    """(the file's transcript, None) from ``host.transcript``, or (None, the error) when the
    merge fails: a bug there (an engine's odd result) fails this file, not the run."""
    try:
        return host.transcript(meta, results, timings, audio), None
    except WitnessError as exc:
        return None, exc
    except Exception as exc:
        return None, internal_error(exc, path)


@dataclass
class _File:
    """A file in flight (mutable bookkeeping, private to the flow)."""

    path: str
    meta: AudioMeta
    audio: SharedAudio
    decode_seconds: float
    started: float | None = None  # when its first engine job began
    answered: float = 0.0  # when its last engine answer came
    submitted: set[str] = field(default_factory=set)  # engines holding a job for it
    results: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, WitnessError] = field(default_factory=dict)
    tries: dict[str, int] = field(default_factory=dict)

    def wants(self, name: str) -> bool:
        return not self.errors and name not in self.results and name not in self.submitted


class Flow:
    """One pass of files through ``engines``' workers (see the module docstring)."""

    def __init__(self, engines: Host, jobs: int, retries: int = 1, keep_workers: bool = True,
                 progress: FileProgress | None = None):
        self.engines = engines
        self.jobs = max(1, jobs)
        self.retries = retries
        self.keep_workers = keep_workers  # False: a worker is closed once no file needs it
        self.progress = progress
        self._files: dict[str, _File] = {}  # in flight, oldest first
        self._queued: dict[str, list[str]] = {name: [] for name in engines.names}  # submitted, unanswered
        self._workers: dict[str, Worker] = {}  # the worker each engine's queued jobs went to

    def run(self, files: Iterable[FileJob]) -> Iterator[FileResult]:
        """Results as files finish (in order, except that a file that fails to decode is
        reported at once). Stopping early (an exception, Ctrl-C, closing the iterator)
        releases the decoded audio of every file in flight; the workers are the caller's."""
        source = iter(files)
        upcoming = next(source, None)
        try:
            while upcoming is not None or self._files:
                if upcoming is not None and len(self._files) < self.jobs:
                    failed = self._admit(upcoming)
                    upcoming = next(source, None)
                    if failed is not None:
                        yield failed
                    self._dispatch()
                    continue
                yield from self._collect(WAIT, more_files=upcoming is not None)
        finally:
            for f in self._files.values():
                f.audio.unlink()
            self._files.clear()

    def _admit(self, job: FileJob) -> FileResult | None:
        """Decode ``job`` into shared memory; a FileResult with the error if that fails. Every
        engine's worker is started first: in a serial plan the next engine's start-up then runs
        beside the decoding and the first engine's work instead of after it, on a core that
        would idle (a single file's workers start, decode and engine load are one-thread work)."""
        if job.path in self._files:
            raise ValueError(f"{job.path} is already in flight")
        for name in self.engines.names:  # started (their models loading) while this file is decoded
            self.engines.worker(name)
        start = time.perf_counter()
        try:
            given = self.engines.given(job.path)
            meta, audio = self.engines.decode(job.path, job.sha256)
        except Exception as exc:  # this file fails, the others go on
            return FileResult(job.path, None, file_error(exc, job.path), 0, time.perf_counter() - start)
        self._files[job.path] = _File(job.path, meta, audio, time.perf_counter() - start, results=given)
        return None

    def _dispatch(self) -> None:
        """Parallel: queue every file in flight to every engine that still needs it.
        Serial: when no job is running, start the oldest file's next engine."""
        if self.engines.mode == "parallel":
            for f in self._files.values():
                for name in self.engines.names:
                    if f.wants(name):
                        self._submit(f, name)
            return
        if any(self._queued.values()):
            return
        for f in self._files.values():
            name = next((n for n in self.engines.names if f.wants(n)), None)
            if name is not None:
                self._submit(f, name)
                return

    def _submit(self, f: _File, name: str) -> None:
        worker = self._workers[name] = self.engines.worker(name)
        worker.submit(Job(f.path, f.audio))
        self._queued[name].append(f.path)
        f.submitted.add(name)

    def _collect(self, timeout: float, more_files: bool) -> Iterator[FileResult]:
        """Wait up to ``timeout`` s for the busy workers and take in everything they said;
        close the workers no file needs any more (unless kept), give the workers their next
        jobs, and only then yield the files that are now finished (the caller writes them
        while the workers go on)."""
        busy = {name: self._workers[name] for name, keys in self._queued.items() if keys}
        wait_any(list(busy.values()), timeout)
        for name, worker in busy.items():
            try:
                while (event := worker.next_event(0)) is not None:
                    self._on_event(name, event)
            except WorkerDied as died:
                self._on_death(name, died)
        if not self.keep_workers:
            self._release_idle(more_files)
        self._dispatch()
        yield from self._finished()

    def _on_event(self, name: str, event: Event) -> None:
        f = self._files.get(event.key)
        if f is None:
            return
        now = time.perf_counter()
        if event.kind == "start":
            f.started = f.started or now
            f.tries[name] = f.tries.get(name, 0) + 1
        elif event.kind == "progress":
            if self.progress is not None:
                self.progress(event.key, *event.payload)
        else:
            self._queued[name].remove(event.key)
            f.submitted.discard(name)
            f.answered = now
            if event.kind == "done":
                f.results[name] = event.payload
            else:
                f.errors[name] = event.payload

    def _on_death(self, name: str, died: WorkerDied) -> None:
        """The file the worker was on (the oldest in its queue if it had not started one)
        gets a try counted, and the error once it is out of retries or the death was not
        a signal; every file in the queue goes back to be resubmitted to a fresh worker."""
        keys, self._queued[name] = self._queued[name], []
        self.engines.release(name, timeout=0)
        for key in keys:
            self._files[key].submitted.discard(name)
        blamed = died.path if died.path in keys else (keys[0] if keys else None)
        if blamed is None:
            return
        f = self._files[blamed]
        if died.path != blamed:  # it died before saying it had started this job
            f.tries[name] = f.tries.get(name, 0) + 1
        if died.signal_name is None or f.tries[name] > self.retries:
            f.errors[name] = WorkerDied(name, died.exitcode, blamed)
            f.answered = time.perf_counter()
            return
        log.warning("%s: the %s worker died (signal %s); trying again in a fresh worker",
                    blamed, name, died.signal_name)

    def _finished(self) -> Iterator[FileResult]:
        for key, f in list(self._files.items()):
            if f.submitted or any(f.wants(n) for n in self.engines.names):
                continue
            del self._files[key]
            try:
                result = self._result(f)  # the merge may read the decoded audio (a second opinion)
            finally:
                f.audio.unlink()
            yield result

    def _result(self, f: _File) -> FileResult:
        attempts = max(f.tries.values(), default=0)
        engines = f.answered - f.started if f.started is not None else 0.0
        error = next((f.errors[n] for n in self.engines.names if n in f.errors), None)
        if error is None:
            transcript, error = merged(self.engines, f.path, f.meta, f.results,
                                       {"decode": f.decode_seconds, "engines": engines}, f.audio)
        if error is not None:
            return FileResult(f.path, None, error, attempts, f.decode_seconds + engines)
        return FileResult(f.path, transcript, None, attempts, transcript.timings["total"])

    def _release_idle(self, more_files: bool) -> None:
        """Close each worker that no file in flight or to come needs any more."""
        if more_files:
            return
        for name in self.engines.names:
            if not self._queued[name] and not any(f.wants(name) for f in self._files.values()):
                self.engines.release(name)
