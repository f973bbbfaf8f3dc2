"""The one path through the engines: ``run`` is what every command calls.

It decides the devices and the plan (parallel or serial, every thread count), resolves the
models in this process before any worker starts (``resolve_models``), decodes each file once
into shared memory, hands it to the Whisper and diarization workers side by side or one
after the other as the plan says (the scheduling across files is ``witness.flow``), and
merges the results into a Transcript that records models, devices, the plan and timings.
Which engines run is ``Sources``: words and turns from the engines, from files, or not at all.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import numpy as np

from witness.accel.providers import ProviderChoice, available_providers, choose_provider
from witness.accel.vram import GpuMemory, free_vram, probe_gpus
from witness.accel.vram_need import VramNeed, estimate
from witness.asr.backend import gpu_backend_libraries
from witness.audio import SAMPLE_RATE, write_wav
from witness.config import DiarizationSettings, Settings
from witness.errors import InputError, UsageError
from witness.diarize.channels import LABELS as CHANNEL_LABELS, MODES as CHANNEL_MODES
from witness.engines import AsrJob, DiarizationJob, TurnsResult, WordsResult, asr_engine, diarization_engine
from witness.flow import FileJob, FileResult, Flow, default_jobs
from witness.merge import exclusive_turns
from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices
from witness.assemble import assemble, audio_meta, read_words
from witness.plan import EngineDevices, Plan, ThreadSettings, make_plan
from witness.progress import FileProgress, Progress
from witness.rttm import read_rttm
from witness.transcript import AudioMeta, Transcript, Turn
from witness.workers import SharedAudio, Worker

if TYPE_CHECKING:
    from witness.models.diarization_choice import DiarizationModels
    from witness.voices.store import Voice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Devices:
    """What each engine runs on (decided without touching a GPU in this process)."""

    asr_gpu_backend: str | None  # "vulkan", "cuda", … when whisper.cpp has one and may use it
    segmentation: ProviderChoice
    embedding: ProviderChoice
    gpus: tuple[GpuMemory, ...]

    def for_plan(self) -> EngineDevices:
        return EngineDevices(
            asr_gpu=self.asr_gpu_backend is not None,
            diarization_gpu=self.segmentation.on_gpu or self.embedding.on_gpu,
        )


def find_devices(settings: Settings, gpus: tuple[GpuMemory, ...] | None = None,
                 providers: tuple[str, ...] | None = None) -> Devices:
    """Where the engines would run with ``settings``: probes are injectable for tests."""
    gpus = probe_gpus() if gpus is None else gpus
    providers = available_providers() if providers is None else providers
    asr_gpu = None
    if settings.whisper.use_gpu:
        libraries = gpu_backend_libraries()
        asr_gpu = libraries[0] if libraries else None
    d = settings.diarization
    return Devices(
        asr_gpu_backend=asr_gpu,
        segmentation=choose_provider("segmentation", d.segmentation_device, providers),
        embedding=choose_provider("embedding", d.embedding_device, providers),
        gpus=gpus,
    )


def plan_for(settings: Settings, devices: Devices, cores: int | None = None) -> Plan:
    """The plan for a machine of ``cores`` CPU cores (default: this one's)."""
    fixed = ThreadSettings(settings.whisper.threads, settings.diarization.threads)
    need = vram_need(settings, devices)
    return make_plan(devices.for_plan(), free_vram(devices.gpus, settings.whisper.gpu_device),
                     cores or os.cpu_count() or 1, settings.plan, fixed, need.floor_gib if need else None)


def vram_need(settings: Settings, devices: Devices) -> VramNeed | None:
    """What the chosen models need on a GPU side by side (None: the Whisper model's size is
    unknown). With no diarization model on a GPU provider (a CPU machine) both count, as a
    GPU would run them; with one there (segmentation stays on the CPU under MIGraphX) only it."""
    d, w = settings.diarization, settings.whisper
    seg, emb = devices.segmentation.on_gpu, devices.embedding.on_gpu
    return estimate(settings.asr.model, d.segmentation, d.embedding, d.embedding_batch_size,
                    max(w.beam_size, w.best_of), seg or not emb, emb or not seg)


# What each engine's worker runs (tests wrap these, e.g. to kill a worker mid-job).
ENGINE_FACTORIES = {"asr": asr_engine, "diarization": diarization_engine}


def resolve_models(settings: Settings, names: Iterable[str], progress: Progress | None = None) -> dict[str, Any]:
    """The models of each engine in ``names``, resolved in this process (before any worker
    starts): found, downloaded or converted (``progress`` reports it), or ModelError under
    ``--offline``. "asr": a ``ResolvedModel``; "asr_vad": the Silero VAD that gates it (when
    ``whisper.speech_gate``); "diarization": a ``DiarizationModels``; "channel_vad": the
    Silero VAD that finds each party's speech in a stereo call (unless ``channels`` is "mix")."""
    models_dir, offline = settings.models.dir or None, settings.models.offline
    models: dict[str, Any] = {}
    if "asr" in names:
        from witness.models.whisper_models import resolve_model, resolve_vad

        models["asr"] = resolve_model(settings.asr.model, models_dir, offline=offline, progress=progress)
        if settings.whisper.speech_gate:
            models["asr_vad"] = str(resolve_vad(models_dir, offline=offline, progress=progress))
    if "diarization" in names:
        from witness.models.diarization_choice import choose_models

        models["diarization"] = choose_models(settings.diarization.embedding, models_dir, offline, progress,
                                              segmentation=settings.diarization.segmentation)
        if settings.diarization.channels != "mix":
            from witness.models.whisper_models import resolve_vad

            models["channel_vad"] = str(resolve_vad(models_dir, offline=offline, progress=progress))
    return models


def enrolled_voices(settings: Settings, models: DiarizationModels | None) -> tuple[Voice, ...]:
    """The enrolled voices ``settings.voices.use`` asks for when diarization runs (``models``),
    each checked against its embedding model (InputError naming a voice file of another)."""
    if models is None:
        return ()
    from witness.voices.store import voices_for_run

    return voices_for_run(settings.voices.use, models.embedding, models.embedding_path)


def worker_jobs(settings: Settings, devices: Devices, plan: Plan, models: dict[str, Any],
                channel_centroids: bool = False) -> dict[str, Any]:
    """Each engine's worker job: its resolved models, device and the plan's threads;
    ``channel_centroids``: a split stereo call's channels are embedded (voices to match)."""
    jobs: dict[str, Any] = {}
    if "asr" in models:
        jobs["asr"] = AsrJob(models["asr"], replace(settings.whisper, threads=plan.whisper_threads),
                             models.get("asr_vad"), settings.diarization.channels, models.get("channel_vad"))
    if "diarization" in models:
        jobs["diarization"] = diarization_job(settings.diarization, models["diarization"], devices,
                                              plan.onnx_threads_per_model, models.get("channel_vad"),
                                              channel_centroids)
    return jobs


def diarization_job(settings: DiarizationSettings, models: DiarizationModels, devices: Devices, threads: int,
                    channel_vad: str | None = None, channel_centroids: bool = False) -> DiarizationJob:
    """The diarization worker's job: ``settings`` translated, once, into the pipeline's types
    (0 in the settings: the model's default, no bound; UsageError on a value the pipeline
    refuses), with ``models`` resolved, the devices' providers and ``threads`` ONNX Runtime
    threads per model."""
    from witness.diarize.config import RuntimeOptions, SpeakerBounds, config_for

    runtime = RuntimeOptions(
        segmentation_providers=devices.segmentation, embedding_providers=devices.embedding,
        segmentation_threads=threads, embedding_threads=threads,
        embedding_batch_size=settings.embedding_batch_size or None,
    )
    try:
        config = config_for(models.embedding, settings.step, settings.threshold or None)
        bounds = SpeakerBounds(settings.num_speakers or None, settings.min_speakers or None,
                               settings.max_speakers or None)
    except ValueError as exc:  # a config file's value the CLI's options could not check
        raise UsageError(f"[diarization] {exc}") from None
    return DiarizationJob(models, config, runtime, bounds, settings.ge2e_variant, settings.channels, channel_vad,
                          channel_centroids)


@dataclass(frozen=True)
class Sources:
    """Where a transcript's words and speaker turns come from: their engine (True), nowhere
    (False: ``--no-diarize``; ``witness diarize`` has no words), or a file (``--words`` JSON,
    ``--turns`` RTTM: merge only)."""

    words: bool | Path = True
    turns: bool | Path = True

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that run, in serial order."""
        return tuple(name for name, source in (("asr", self.words), ("diarization", self.turns)) if source is True)


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
    """What the flow (``witness.flow``) needs for one ``run``: the plan, decoding, a worker
    per engine (started on demand, models resolved before the first), the results merged
    into a Transcript that records models, devices, the plan and timings. ``cores``: the
    machine the plan is for (default: this one; a Ray node for ``witness.ray_pool``)."""

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
        self._jobs: dict[str, Any] | None = None  # resolved before the first worker starts
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
        return self.sources.turns is True and self.settings.diarization.channels != "mix"

    def given(self, path: str) -> dict[str, Any]:
        """The results read from files instead of an engine (``--words``, ``--turns``), by
        engine name; InputError when such a file is unreadable or malformed."""
        given: dict[str, Any] = {}
        if isinstance(self.sources.words, Path):
            given["asr"] = WordsResult(tuple(read_words(self.sources.words)), "", None, 0.0)
        if isinstance(self.sources.turns, Path):
            turns = turns_for(self.sources.turns, path)
            given["diarization"] = TurnsResult(turns, exclusive_turns(turns), None, {}, 0.0)
        return given

    def transcript(self, meta: AudioMeta, results: dict[str, Any], timings: dict[str, float],
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
        words = asr.words if asr is not None else ()
        turns, exclusive = (diarization.turns, diarization.exclusive_turns) if diarization is not None else (None, None)
        if asr is not None and asr.channels and diarization is not None and diarization.info is not None \
                and diarization.info.get("method") == "channels":  # each word is its channel's party's
            words = tuple(replace(w, speaker=CHANNEL_LABELS[c]) for w, c in zip(words, asr.channels))
        voices = self._sentence_voices(audio, diarization) if asr is not None else None
        transcript = assemble(meta, words, turns, exclusive, self.settings.merge,
                              engines=engines, plan=self.plan.to_dict() if engines else None, voices=voices)
        if diarization is not None and diarization.centroids:
            transcript = self._named_voices(replace(transcript, speaker_embeddings=dict(diarization.centroids)))
        timings["merge"] = time.perf_counter() - start
        timings["total"] = timings["decode"] + timings["engines"] + timings["merge"]
        return replace(transcript, timings={k: round(v, 3) for k, v in timings.items()})

    def second_opinion_possible(self, diarization: Any) -> bool:
        """Whether the merge's second opinion can run on this diarization result (the model's
        CAM++ turns and centroids, ``[merge] second_opinion`` on), given the call's audio."""
        info = diarization.info if diarization is not None else None
        return bool(self.settings.merge.second_opinion and info is not None and info.get("method") == "model"
                    and info.get("embedding") == "campplus" and diarization.centroids)

    def _sentence_voices(self, audio: SharedAudio | None, diarization: Any) -> CentroidVoices | None:
        """What the merge's second opinion (``witness.opinion``) compares doubtful stretches
        with: the diarization's centroids, and the call's samples embedded here by the CAM++
        model that made them (loaded once, on the CPU). The parent runs it because only here
        do words, turns and audio meet: the workers see one engine's result each. None where
        it cannot run: no audio (a Ray driver that could not read the file), a stereo call's channels, another embedding model,
        no centroids, or ``[merge] second_opinion`` off."""
        if audio is None or not self.second_opinion_possible(diarization):
            return None
        if self._embed is None:
            from witness.diarize.embedding import CamPlusPlusEmbedder

            model = self.engine_jobs()["diarization"].models.embedding_path
            self._embed = CamPlusPlusEmbedder(model, min_clean_seconds=OPINION_MIN_SECONDS).embed
        return CentroidVoices(audio.open(), self._embed, diarization.centroids, OPINION_MIN_SECONDS)

    def _named_voices(self, transcript: Transcript) -> Transcript:
        """``transcript`` with the speakers that match an enrolled voice named by it, the
        scores recorded in ``engines.diarization.voices``."""
        if not self._voices:
            return transcript
        from witness.voices.match import THRESHOLD, match_voices, matches_info

        threshold = self.settings.voices.threshold or THRESHOLD
        matches = match_voices(transcript.speaker_embeddings, self._voices, threshold)
        engines = dict(transcript.engines)
        engines["diarization"] = {**engines["diarization"], "voices": matches_info(matches, self._voices, threshold)}
        return replace(transcript.rename_speakers({m.speaker: m.name for m in matches}), engines=engines)

    def worker(self, name: str) -> Worker:
        """The engine's worker, started (loading its model on its first job) when there is
        none or the last one ended. Every engine's models are resolved before the first."""
        worker = self._workers.get(name)
        if worker is None or not worker.alive:
            worker = self._workers[name] = Worker(name, ENGINE_FACTORIES[name], (self.engine_jobs()[name],))
        return worker

    def engine_jobs(self) -> dict[str, Any]:
        """Each engine's job (``worker_jobs``), its models resolved (and the enrolled voices
        loaded) on the first call; the workers, or Ray's actors (``witness.ray_pool``), build
        their engines from these."""
        if self._jobs is None:
            models = resolve_models(self.settings, self.names, self.model_progress)
            self._voices = enrolled_voices(self.settings, models.get("diarization"))
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
