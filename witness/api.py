"""The Python API, and the one way in: the command line, batch and Ray runs are its clients.

``transcribe(audio, **options)`` for one call, ``diarize(audio, **options)`` for speaker
turns alone, ``enroll(name, audio, ...)`` for a known voice, and ``Witness(**options)``,
which resolves the models once and keeps its engine workers between calls. The options are
the command line's, by the same names (``witness.options.RunOptions``), checked the same way.
Audio is a file path, the bytes of a file, or a numpy array of samples with its sample rate.

Nothing is printed: what the CLI would print goes to the ``witness`` logger (silent unless
the caller configures logging), progress to one ``hook`` (``witness.progress.Hook``, as
pyannote's), and errors are raised as the exceptions ``witness`` exports, with the CLI's
one-line messages.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence, Union

from witness.document import Transcript
from witness.errors import UsageError
from witness.options import keyword, settings_for
from witness.progress import Hook, file_progress, model_progress

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import Unpack

    from witness.config import Settings
    from witness.run.flow import FileJob, FileResult
    from witness.options import RunOptions
    from witness.run.orchestrate import Orchestrator
    from witness.run.ray_pool import RayOptions
    from witness.voices.store import Voice

Audio = Union[str, "os.PathLike[str]", bytes, "np.ndarray"]
ARRAY_NAME = "<array>"  # what a transcript of samples names its audio (``name=`` overrides)
BYTES_NAME = "<bytes>"


class Witness:
    """Transcripts of many calls with the models resolved once and the engine workers kept
    between calls (``close`` ends them; ``with Witness(...) as w:`` does it for you).

    ``options`` are ``transcribe``'s (the command line's names); ``hook`` gets the progress
    of every call. ``jobs``: files in flight in ``run`` (default: the plan's); ``retries``:
    tries more for a file whose engine worker died of a signal; ``ray``: run the engines on
    a Ray cluster (``witness.run.ray_pool.RayOptions``; ``run`` only, its actors live for one
    ``run``).

    Threads: a Witness may be shared between threads, but it runs one call at a time; a
    call made while another runs waits for it (use one Witness per thread to run calls side
    by side, each with its own workers and models in memory).
    """

    def __init__(self, *, hook: Hook | None = None, words: str | os.PathLike[str] | None = None,
                 turns: str | os.PathLike[str] | None = None, jobs: int | None = None, retries: int = 1,
                 ray: RayOptions | None = None, **options: Unpack[RunOptions]):
        settings = settings_for(options, keyword)
        self._setup(settings, bool(options.get("no_diarize")), hook, words, turns, jobs, retries, ray, True)

    @classmethod
    def from_settings(cls, settings: Settings, *, no_diarize: bool = False, hook: Hook | None = None,
                      words: str | os.PathLike[str] | None = None, turns: str | os.PathLike[str] | None = None,
                      jobs: int | None = None, retries: int = 1, ray: RayOptions | None = None,
                      keep_workers: bool = True) -> "Witness":
        """A Witness for ``settings`` made already (``witness.options.settings_for``: the
        command line makes them with its options' spelling). ``keep_workers`` False: each
        engine's worker ends as soon as no file of a ``run`` needs it (one run per Witness,
        as a command makes)."""
        self = cls.__new__(cls)
        self._setup(settings, no_diarize, hook, words, turns, jobs, retries, ray, keep_workers)
        return self

    def _setup(self, settings: Settings, no_diarize: bool, hook: Hook | None, words: Any, turns: Any,
               jobs: int | None, retries: int, ray: RayOptions | None, keep_workers: bool) -> None:
        from witness.accel.providers import quiet_runtime

        quiet_runtime()
        self.settings = settings
        self.no_diarize = no_diarize
        self.hook = hook  # may be changed between calls
        self.words_file = None if words is None else Path(words)
        self.turns_file = None if turns is None else Path(turns)
        self.jobs, self.retries, self.ray, self.keep_workers = jobs, retries, ray, keep_workers
        self._sessions: dict[bool, Orchestrator] = {}  # by "turns only": one per kind of call, made on first use
        self._lock = threading.RLock()
        self._closed = False

    # --- one call ------------------------------------------------------------------------

    def transcribe(self, audio: Audio, sample_rate: int | None = None, *, name: str | None = None) -> Transcript:
        """The speaker-labelled transcript of ``audio`` (a path, a file's bytes, or samples:
        a (n,) or (n, 2) float array at ``sample_rate`` Hz); ``name`` names the audio in
        the transcript and in errors (default: the path, or <bytes>/<array>)."""
        return self._one(audio, sample_rate, name, turns_only=False)

    def diarize(self, audio: Audio, sample_rate: int | None = None, *, name: str | None = None) -> Transcript:
        """Who spoke when in ``audio``: a transcript with speakers and turns, no words
        (``witness diarize``); its diarization worker is not the one ``transcribe`` uses."""
        return self._one(audio, sample_rate, name, turns_only=True)

    def _one(self, audio: Audio, sample_rate: int | None, name: str | None, turns_only: bool) -> Transcript:
        with audio_file(audio, sample_rate, name) as (path, given_as):
            from witness.run.flow import FileJob

            (result,) = self.run([FileJob(path)], turns_only=turns_only, jobs=1)
        if result.error is not None:
            raise result.error.named(given_as) if result.error.path == path else result.error
        transcript = result.transcript
        if transcript.audio.path != given_as:
            transcript = replace(transcript, audio=replace(transcript.audio, path=given_as))
        return transcript

    # --- many files ----------------------------------------------------------------------

    def run(self, files: Iterable[str | os.PathLike[str] | FileJob], *, turns_only: bool = False,
            jobs: int | None = None) -> Iterator[FileResult]:
        """Many files through the engines as a pipeline (while one is diarized the next is
        transcribed): a ``FileResult`` per file as it finishes, with its ``transcript`` (a
        ``witness.Transcript``) or the ``error`` that ended it (the others go on).
        ``turns_only``: speaker turns without words, as ``diarize``."""
        from witness.run.flow import FileJob

        jobs_in = (f if isinstance(f, FileJob) else FileJob(os.fspath(f)) for f in files)
        with self._lock:
            if self._closed:
                raise UsageError("this Witness is closed")
            for result in self._results(jobs_in, turns_only, jobs or self.jobs):
                if result.transcript is not None:
                    result = replace(result, transcript=Transcript.of(result.transcript))
                yield result

    def _results(self, files: Iterable[FileJob], turns_only: bool, jobs: int | None) -> Iterator[FileResult]:
        if self.ray is not None:
            from witness.run.ray_pool import run_on_ray

            yield from run_on_ray(files, self.settings, self.ray, diarize=not self.no_diarize, retries=self.retries,
                                  model_progress=self._model_progress)
            return
        from witness.run.flow import Flow, default_jobs

        host = self._session(turns_only)
        flow = Flow(host, jobs or default_jobs(host.plan.mode), self.retries, self.keep_workers,
                    file_progress(self.hook))
        completed = False
        try:
            yield from flow.run(files)
            completed = True
        finally:
            if not completed:  # jobs abandoned in the workers: fresh workers for the next call
                host.close(timeout=1.0)

    def engines(self, turns_only: bool = False) -> tuple[str, ...]:
        """The engines a call runs ("asr", "diarization"), in the order a serial plan runs them."""
        return self._session(turns_only).names

    def _session(self, turns_only: bool) -> Orchestrator:
        """The orchestrator of one kind of call (with words, or turns only), made on first use."""
        if turns_only not in self._sessions:
            from witness.run.orchestrate import Orchestrator, Sources

            sources = Sources(words=False, turns=True) if turns_only else Sources(
                turns=self.turns_file is not None or not self.no_diarize and self.words_file is None,
                words_file=self.words_file, turns_file=self.turns_file)
            self._sessions[turns_only] = Orchestrator(self.settings, sources, None, self._model_progress)
        return self._sessions[turns_only]

    def _model_progress(self, stage: str, done: int, total: int) -> None:
        """A model's download or conversion, to the hook of the moment."""
        report = model_progress(self.hook)
        if report is not None:
            report(stage, done, total)

    # --- the end -------------------------------------------------------------------------

    def close(self) -> None:
        """End the engine workers (each finishes its current job first, for up to 10 s).
        Calls after this raise UsageError."""
        with self._lock:
            self._closed = True
            for host in self._sessions.values():
                host.close(timeout=10.0)
            self._sessions.clear()

    def __enter__(self) -> "Witness":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def transcribe(audio: Audio, sample_rate: int | None = None, *, name: str | None = None, hook: Hook | None = None,
               **options: Unpack[RunOptions]) -> Transcript:
    """The speaker-labelled transcript of one call: ``Witness(**options).transcribe(audio)``,
    its workers closed afterwards (for many calls, keep a ``Witness``)."""
    with Witness(hook=hook, **options) as w:
        return w.transcribe(audio, sample_rate, name=name)


def diarize(audio: Audio, sample_rate: int | None = None, *, name: str | None = None, hook: Hook | None = None,
            **options: Unpack[RunOptions]) -> Transcript:
    """Who spoke when in one call (``witness diarize``): speakers and turns, no words."""
    with Witness(hook=hook, **options) as w:
        return w.diarize(audio, sample_rate, name=name)


def enroll(name: str, audio: Audio | Sequence[Audio], sample_rate: int | None = None, *, speaker: str | None = None,
           mode: str = "new", hook: Hook | None = None, **options: Unpack[RunOptions]) -> Voice:
    """Enroll ``name``'s voice from ``audio`` (one recording or several, each of ``name``
    alone, or one of several voices with ``speaker`` picking one) and save it, as ``witness
    enroll`` does: ``mode`` "new" refuses a name enrolled already, "add" adds these prints,
    "replace" starts over. Returns the saved voice (its ``path`` says where)."""
    recordings = list(audio) if isinstance(audio, (list, tuple)) else [audio]
    return enroll_with(name, recordings, settings_for(options, keyword), sample_rate, speaker, mode, hook)


def enroll_with(name: str, recordings: Sequence[Audio], settings: Settings, sample_rate: int | None = None,
                speaker: str | None = None, mode: str = "new", hook: Hook | None = None) -> Voice:
    """``enroll`` with the settings made already (the command line's, its options spelled as flags)."""
    from witness.models.store import cached_sha256
    from witness.run.jobs import resolve_models
    from witness.voices.enroll import check_mode, enrolled, enrollment_print
    from witness.voices.store import check_name, read_voice, save_voice, voice_path

    check_name(name)
    if speaker is not None and len(recordings) > 1:
        raise UsageError("--speaker picks a speaker of one recording: give one AUDIO with it")
    path = voice_path(name)
    existing = read_voice(path) if path.is_file() else None
    check_mode(existing, mode)  # before diarizing anything
    settings = enrollment_settings(settings)
    model = resolve_models(settings, ("diarization",), model_progress(hook)).diarization
    with Witness.from_settings(settings, hook=hook) as w:
        prints = [enrollment_print(w.diarize(recording, sample_rate), speaker) for recording in recordings]
    voice = enrolled(name, prints, model.embedding, cached_sha256(model.embedding_path), existing, mode)
    return replace(voice, path=save_voice(voice))


def enrollment_settings(settings: Settings) -> Settings:
    """``settings`` as enrolling diarizes: CAM++ clusters (centroids) of the mix, even of a
    stereo call, and no enrolled voice naming anyone."""
    return replace(settings, diarization=replace(settings.diarization, embedding="campplus", channels="mix"),
                   voices=replace(settings.voices, use="none"))


@contextlib.contextmanager
def audio_file(audio: Audio, sample_rate: int | None = None, name: str | None = None) -> Iterator[tuple[str, str]]:
    """(a file the decoder reads, what to call it) for ``audio``: a path as it is; bytes
    or samples in a temporary file, removed afterwards."""
    if isinstance(audio, (str, os.PathLike)):
        if sample_rate is not None:
            raise UsageError("sample_rate goes with samples (a numpy array), not with a file", os.fspath(audio))
        yield os.fspath(audio), name or os.fspath(audio)
        return
    with tempfile.TemporaryDirectory(prefix="witness-api-") as folder:
        path = Path(folder) / "audio"
        if isinstance(audio, (bytes, bytearray, memoryview)):
            path.write_bytes(audio)
            given_as = name or BYTES_NAME
        else:
            from witness.audio import write_float_wav

            if sample_rate is None:
                raise UsageError("samples need their sample_rate (e.g. sample_rate=16000)", name or ARRAY_NAME)
            write_float_wav(path, audio, sample_rate, name or ARRAY_NAME)
            given_as = name or ARRAY_NAME
        yield str(path), given_as
