"""The user's settings translated, once, into what each engine's worker builds from: the
models resolved in this process before any worker starts (``resolve_models``: found,
downloaded or converted), and each engine's typed job (``worker_jobs``: its models, device
and the plan's threads)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from witness.config import DiarizationSettings, Settings
from witness.run.engines import AsrJob, DiarizationJob
from witness.errors import UsageError
from witness.run.placement import Devices
from witness.run.plan import Plan
from witness.progress import Progress

if TYPE_CHECKING:
    from witness.models.diarization_choice import DiarizationModels
    from witness.models.whisper_models import ResolvedModel
    from witness.voices.store import Voice


@dataclass(frozen=True)
class Models:
    """The model files of a run, resolved in this process (None: its engine does not run, or
    does without)."""

    asr: ResolvedModel | None = None  # Whisper
    asr_vad: str | None = None  # the Silero VAD that gates Whisper (``whisper.speech_gate``)
    diarization: DiarizationModels | None = None
    channel_vad: str | None = None  # the Silero VAD that finds each party's speech in a stereo call


@dataclass(frozen=True)
class EngineJobs:
    """Each engine's worker job (None: the engine does not run)."""

    asr: AsrJob | None = None
    diarization: DiarizationJob | None = None

    def by_name(self) -> dict[str, AsrJob | DiarizationJob]:
        """The jobs by engine name ("asr", "diarization"), for code that serves either."""
        return {name: job for name, job in (("asr", self.asr), ("diarization", self.diarization)) if job is not None}


def resolve_models(settings: Settings, names: Iterable[str], progress: Progress | None = None) -> Models:
    """The models of each engine in ``names`` ("asr", "diarization"), resolved in this
    process (before any worker starts): found, downloaded or converted (``progress`` reports
    it), or ModelError under ``--offline``. The channels' VAD comes with diarization unless
    ``channels`` is "mix"."""
    from witness.models.whisper_models import resolve_vad

    models_dir, offline = settings.models.dir or None, settings.models.offline
    models = Models()
    if "asr" in names:
        from witness.models.whisper_models import resolve_model

        models = replace(models, asr=resolve_model(settings.asr.model, models_dir, offline=offline, progress=progress))
        if settings.whisper.speech_gate:
            models = replace(models, asr_vad=str(resolve_vad(models_dir, offline=offline, progress=progress)))
    if "diarization" in names:
        from witness.models.diarization_choice import choose_models

        opinion = settings.merge.opinion_precision if settings.merge.second_opinion else None
        models = replace(models, diarization=choose_models(settings.diarization.embedding, models_dir, offline,
                                                           progress, segmentation=settings.diarization.segmentation,
                                                           precision=settings.diarization.precision,
                                                           opinion=opinion))
        if settings.diarization.channels != "mix":
            models = replace(models, channel_vad=str(resolve_vad(models_dir, offline=offline, progress=progress)))
    return models


def enrolled_voices(settings: Settings, models: DiarizationModels | None) -> tuple[Voice, ...]:
    """The enrolled voices ``settings.voices.use`` asks for when diarization runs (``models``),
    each checked against its embedding model (InputError naming a voice file of another)."""
    if models is None:
        return ()
    from witness.voices.store import voices_for_run

    return voices_for_run(settings.voices.use, models.embedding, models.embedding_path)


def worker_jobs(settings: Settings, devices: Devices, plan: Plan, models: Models,
                channel_centroids: bool = False) -> EngineJobs:
    """Each engine's worker job: its resolved models, device and the plan's threads;
    ``channel_centroids``: a split stereo call's channels are embedded (voices to match)."""
    jobs = EngineJobs()
    if models.asr is not None:
        jobs = replace(jobs, asr=AsrJob(models.asr, replace(settings.whisper, threads=plan.whisper_threads),
                                        models.asr_vad, settings.diarization.channels, models.channel_vad))
    if models.diarization is not None:
        jobs = replace(jobs, diarization=diarization_job(settings.diarization, models.diarization, devices,
                                                         plan.onnx_threads_per_model, models.channel_vad,
                                                         channel_centroids))
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
