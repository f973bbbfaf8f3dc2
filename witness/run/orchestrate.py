"""Hosting a run: the ``Orchestrator`` is what the flow (``witness.run.flow``) and the Ray driver
(``witness.run.ray_pool``) need for one: the plan (``witness.run.placement``), the engines' jobs with
their models resolved in this process before any worker starts (``witness.run.jobs``), each file
decoded once into shared memory, a worker per engine, and the engines' results assembled
into a Transcript that records models, devices, the plan and timings. Which engines run is
``Sources``: words and turns from the engines, from files, or not at all. ``run`` is a pass of
files through it (the Python API's ``Witness`` keeps one between calls), ``probe`` and
``warm_up`` one on silence (``witness doctor``, ``witness warmup``).
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import numpy as np

from witness.accel.blas import blas_threads
from witness.assemble import assemble, audio_meta, engine_words, named_voices, read_words
from witness.audio import SAMPLE_RATE, write_wav
from witness.config import Settings
from witness.channels import MODES as CHANNEL_MODES
from witness.run.engines import FACTORIES, EngineResult, TurnsResult, WordsResult
from witness.errors import InputError
from witness.run.flow import FileJob, FileResult, Flow, default_jobs
from witness.run.jobs import EngineJobs, enrolled_voices, resolve_models, worker_jobs
from witness.merge import MergeOptions, exclusive_turns
from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices
from witness.run.placement import Devices, find_devices, plan_for
from witness.run.plan import Plan
from witness.progress import FileProgress, Progress
from witness.rttm import read_rttm
from witness.transcript import AudioMeta, Transcript, Turn
from witness.run.workers import SharedAudio, Worker

if TYPE_CHECKING:
    from witness.voices.store import Voice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sources:
    """Where a transcript's words and speaker turns come from. ``words``/``turns``: whether
    it has them at all (``witness diarize`` has no words, ``--no-diarize`` no turns);
    ``words_file``/``turns_file``: read from this file (a ``--words`` JSON, a ``--turns``
    RTTM: merge only) instead of from the engine."""

    words: bool = True
    turns: bool = True
    words_file: Path | None = None
    turns_file: Path | None = None

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that run, in serial order."""
        return tuple(name for name, wanted, file in (("asr", self.words, self.words_file),
                                                     ("diarization", self.turns, self.turns_file))
                     if wanted and file is None)


def run(files: Iterable[FileJob], settings: Settings, sources: Sources = Sources(), *, jobs: int | None = None,
        retries: int = 1, progress: FileProgress | None = None, model_progress: Progress | None = None,
        devices: Devices | None = None) -> Iterator[FileResult]:
    """The one path every command takes (transcribe, ``--no-diarize``, ``--words/--turns``,
    diarize, batch, warmup, doctor's probe): plan, resolve the models here, run the engines
    ``sources`` asks for in worker processes, merge. A FileResult per file as it finishes,
    with at most ``jobs`` files in flight (default: ``flow.default_jobs`` for the plan);
    a file whose worker died of a signal is tried ``retries`` more times. Stopping early
    (an error, Ctrl-C, closing the iterator) abandons the jobs in progress."""
    orchestrator = Orchestrator(settings, sources, devices, model_progress)
    completed = False
    try:
        flow = Flow(orchestrator, jobs or default_jobs(orchestrator.plan.mode), retries, False, progress)
        yield from flow.run(files)
        completed = True
    finally:
        orchestrator.close(timeout=10.0 if completed else 1.0)


def probe(settings: Settings, sources: Sources, seconds: float,
          model_progress: Progress | None = None) -> Transcript:
    """``run`` on ``seconds`` of silence: each engine ``sources`` asks for resolves and loads
    its models and runs once (``witness warmup``, ``witness doctor``); the transcript says
    what ran where. The run's error is raised."""
    with tempfile.TemporaryDirectory(prefix="witness-probe-") as folder:
        path = Path(folder) / "silence.wav"
        write_wav(path, np.zeros(round(SAMPLE_RATE * seconds), np.float32))
        quiet = replace(settings, voices=replace(settings.voices, use="none"))  # nobody to name in silence
        (result,) = run([FileJob(str(path))], quiet, sources, jobs=1, retries=0, model_progress=model_progress)
    if result.error is not None:
        raise result.error
    return result.transcript


def warm_up(settings: Settings, sources: Sources, seconds: float, model_progress: Progress | None = None) -> Transcript:
    """What ``witness warmup`` does: resolve every model a run with ``settings`` needs (the VAD
    that gates Whisper included), then ``probe`` with the speech gate off, so that whisper.cpp
    really runs its encoder and decoder once, on silence. With the gate on, silence is never
    decoded; on a GPU backend the first decode is what compiles whisper.cpp's compute pipelines
    (Vulkan builds each one lazily on first use, with no cache of its own: the GPU driver's
    shader cache keeps them for later processes)."""
    resolve_models(settings, sources.engines, model_progress)
    ungated = replace(settings, whisper=replace(settings.whisper, speech_gate=False))
    return probe(ungated, sources, seconds, model_progress)


class Orchestrator:
    """What the flow (``witness.run.flow``) needs for one ``run``: the plan, decoding, a worker
    per engine (started on demand, models resolved before the first), the results merged
    into a Transcript that records models, devices, the plan and timings. ``cores``: the
    machine the plan is for (default: this one; a Ray node for ``witness.run.ray_pool``)."""

    def __init__(self, settings: Settings, sources: Sources = Sources(), devices: Devices | None = None,
                 model_progress: Progress | None = None, cores: int | None = None):
        if settings.diarization.channels not in CHANNEL_MODES:
            raise InputError(f"[diarization] channels = {settings.diarization.channels!r}: choose from "
                             f"{', '.join(CHANNEL_MODES)}")
        self.settings = settings
        self.sources = sources
        if sources.engines:
            self.devices = devices or find_devices(settings)
            self.plan = plan_for(settings, self.devices, cores)
        else:  # merge only: nothing to place
            self.plan = Plan("serial", ("no engine runs: words and turns come from files",), 0, 0)
        self.model_progress = model_progress
        self._jobs: EngineJobs | None = None  # resolved before the first worker starts
        self._workers: dict[str, Worker] = {}
        self._voices: tuple[Voice, ...] = ()  # enrolled voices that name speakers, loaded with the models
        self._embed: Callable[[np.ndarray], np.ndarray] | None = None  # CAM++ for second opinions, on first use
        for reason in self.plan.reasons:
            log.info("plan: %s", reason)

    # --- what the flow calls ----------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        return self.sources.engines

    @property
    def mode(self) -> str:
        return self.plan.mode

    def decode(self, path: str, sha256: str = "") -> tuple[AudioMeta, SharedAudio]:
        """``path`` decoded into shared memory (/dev/shm when there is one); InputError for
        bad audio. ``sha256`` of the file when the caller has it (else computed)."""
        return decode_shared(path, sha256, self.decodes_stereo)

    @property
    def decodes_stereo(self) -> bool:
        """Whether a two-channel file's channels are kept: diarization may take the speakers from them."""
        return "diarization" in self.sources.engines and self.settings.diarization.channels != "mix"

    def given(self, path: str) -> dict[str, EngineResult]:
        """The results read from files instead of an engine (``--words``, ``--turns``), by
        engine name; InputError when such a file is unreadable or malformed."""
        given: dict[str, EngineResult] = {}
        if self.sources.words and self.sources.words_file is not None:
            given["asr"] = WordsResult(tuple(read_words(self.sources.words_file)), "", None, 0.0)
        if self.sources.turns and self.sources.turns_file is not None:
            turns = turns_for(self.sources.turns_file, path)
            given["diarization"] = TurnsResult(turns, exclusive_turns(turns), None, {}, 0.0)
        return given

    def transcript(self, meta: AudioMeta, results: dict[str, EngineResult], timings: dict[str, float],
                   audio: SharedAudio | None = None) -> Transcript:
        """Merge the engines' ``results`` (by engine name) into the file's Transcript;
        ``timings`` has "decode" and "engines" seconds, merge and total are added. ``audio``:
        the decoded call, for the merge's second opinion (None: no second opinion)."""
        start = time.perf_counter()
        engines, timings = {}, dict(timings)
        for name, result in results.items():
            if result.info is not None:  # from an engine, not a file
                engines[name], timings[name] = dict(result.info), result.seconds
        asr, diarization = results.get("asr"), results.get("diarization")
        words = engine_words(asr, diarization)
        turns, exclusive = (diarization.turns, diarization.exclusive_turns) if diarization is not None else (None, None)
        voices = self._sentence_voices(audio, diarization) if asr is not None else None
        if "diarization" in engines:
            engines["diarization"]["opinion"] = self._opinion_info() if voices is not None else "off"
        with blas_threads(1 if voices is not None else None):  # the second opinion's filterbanks: 2.4x faster
            transcript = assemble(meta, words, turns, exclusive, merge_options(self.settings),
                                  engines=engines, plan=self.plan.to_dict() if engines else None, voices=voices,
                                  centroids=diarization.centroids if diarization is not None else None)
        if transcript.speaker_embeddings:
            transcript = named_voices(transcript, self._voices, self.settings.voices.threshold)
        timings["merge"] = time.perf_counter() - start
        timings["total"] = timings["decode"] + timings["engines"] + timings["merge"]
        return replace(transcript, timings={k: round(v, 3) for k, v in timings.items()})

    def second_opinion_possible(self, diarization: TurnsResult | None) -> bool:
        """Whether the merge's second opinion can run on this diarization result (the model's
        CAM++ turns and centroids, ``[merge] second_opinion`` on), given the call's audio."""
        info = diarization.info if diarization is not None else None
        return bool(self.settings.merge.second_opinion and info is not None and info.get("method") == "model"
                    and info.get("embedding") == "campplus" and diarization.centroids)

    def _sentence_voices(self, audio: SharedAudio | None, diarization: TurnsResult | None) -> CentroidVoices | None:
        """What the merge's second opinion (``witness.opinion``) compares doubtful stretches
        with: the diarization's centroids, and the call's samples embedded here by CAM++ at the
        opinion's precision (``[merge] opinion_precision``; loaded once, on the CPU). The parent
        runs it because only here do words, turns and audio meet: the workers see one engine's
        result each. None where
        it cannot run: no audio (a Ray driver that could not read the file), a stereo call's channels, another embedding model,
        no centroids, or ``[merge] second_opinion`` off."""
        if audio is None or not self.second_opinion_possible(diarization):
            return None
        if self._embed is None:
            from witness.diarize.embedding import CamPlusPlusEmbedder

            model = self.engine_jobs().diarization.models.opinion
            self._embed = CamPlusPlusEmbedder(model, min_clean_seconds=OPINION_MIN_SECONDS).embed
        # as many embeddings at once as diarization runs ONNX models: the engines are done with this file
        return CentroidVoices(audio.open(), self._embed, diarization.centroids, OPINION_MIN_SECONDS,
                              workers=max(1, self.plan.onnx_threads))

    def _opinion_info(self) -> dict[str, str]:
        """What ``engines.diarization.opinion`` records of the second opinion's CAM++: its file
        and the precision that file holds (fp32 where int8 was asked for but could not be built)."""
        from witness.models.campplus_int8 import campplus_precision

        model = self.engine_jobs().diarization.models.opinion
        return {"model": model.name, "precision": campplus_precision(model)}

    def worker(self, name: str) -> Worker:
        """The engine's worker, started when there is none or the last one ended. Every engine's
        models are resolved before the first. An engine on the CPU loads its models as soon as its
        worker starts (``Worker`` eager), one on a GPU on its first job: a serial plan may be for
        want of VRAM, which the next engine must not take while the first works."""
        worker = self._workers.get(name)
        if worker is None or not worker.alive:
            worker = self._workers[name] = Worker(name, FACTORIES[name], (self.engine_jobs().by_name()[name],),
                                                  eager=not self._on_gpu(name))
        return worker

    def _on_gpu(self, name: str) -> bool:
        devices = self.devices.for_plan()
        return devices.asr_gpu if name == "asr" else devices.diarization_gpu

    def engine_jobs(self) -> EngineJobs:
        """Each engine's job (``worker_jobs``), its models resolved (and the enrolled voices
        loaded) on the first call; the workers, or Ray's actors (``witness.run.ray_pool``), build
        their engines from these."""
        if self._jobs is None:
            models = resolve_models(self.settings, self.names, self.model_progress)
            self._voices = enrolled_voices(self.settings, models.diarization)
            self._jobs = worker_jobs(self.settings, self.devices, self.plan, models, bool(self._voices))
        return self._jobs

    def release(self, name: str, timeout: float = 10.0) -> None:
        """Close the engine's worker (waiting up to ``timeout`` s for its current job)."""
        worker = self._workers.pop(name, None)
        if worker is not None:
            worker.close(timeout)

    def close(self, timeout: float = 10.0) -> None:
        for name in list(self._workers):
            self.release(name, timeout)


def decode_shared(path: str, sha256: str = "", stereo: bool = False) -> tuple[AudioMeta, SharedAudio]:
    """``path`` decoded into shared memory (with its two channels when ``stereo``), and what
    the transcript says of it; InputError for bad audio. ``sha256``: as ``audio_meta``."""
    info, audio = SharedAudio.decode(path, stereo=stereo)
    return audio_meta(info, audio.length, sha256), audio


def turns_for(rttm: Path, path: str) -> tuple[Turn, ...]:
    """The turns of ``rttm`` for the audio file ``path``: those of its file id (the file's
    stem), else every turn in it."""
    by_file = read_rttm(rttm)
    return tuple(by_file.get(Path(path).stem) or [t for ts in by_file.values() for t in ts])


def merge_options(settings: Settings) -> MergeOptions:
    """``[merge]``, less the second opinion's joins of one voice found twice (``split_gap``,
    ``voice_join``) where the user asked for three speakers or more: ``--num-speakers`` and
    ``--min-speakers`` win."""
    asked = settings.diarization
    return replace(settings.merge, split_gap=0.0, voice_join=0.0) if max(asked.num_speakers, asked.min_speakers) >= 3 \
        else settings.merge
