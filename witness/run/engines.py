"""The two engines as worker jobs: built once from a picklable job, then called per file.

``asr_engine(job)`` and ``diarization_engine(job)`` run inside worker processes
(``witness.run.workers``); each returns a callable ``(audio: SharedAudio, progress) -> output`` whose output
is a small frozen dataclass that crosses the process boundary.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from witness.accel.providers import short_name
from witness.asr.options import WhisperOptions
from witness.progress import Progress
from witness.transcript import Turn, Word

if TYPE_CHECKING:
    import numpy as np

    from witness.diarize.config import DiarizationConfig, RuntimeOptions, SpeakerBounds
    from witness.diarize.pipeline import DiarizationOutput, Diarizer
    from witness.models.diarization_choice import DiarizationModels
    from witness.models.whisper_models import ResolvedModel
    from witness.run.workers import SharedAudio

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AsrJob:
    """What the Whisper worker builds its engine from: a model resolved by the parent
    (``whisper_models.resolve_model``) and how to decode, with the plan's thread count."""

    model: ResolvedModel
    options: WhisperOptions
    vad: str | None = None  # Silero VAD's file (``whisper_models.resolve_vad``): decode speech only
    channels: str = "mix"  # auto | split: a stereo call's channels may be transcribed apart (``witness.channels``)
    channel_vad: str | None = None  # Silero VAD's file for that


@dataclass(frozen=True)
class WordsResult:
    """What the Whisper worker hands back for a file (``info`` None: words read from a file)."""

    words: tuple[Word, ...]
    language: str
    info: Mapping[str, Any] | None  # AsrInfo.to_dict()
    seconds: float
    channels: tuple[int, ...] | None = None  # each word's channel, when a stereo call's were transcribed apart


@dataclass(frozen=True)
class DiarizationJob:
    """What the diarization worker builds its pipeline from, in the pipeline's own types (the
    parent translates the user's settings once, ``orchestrate.diarization_job``): models resolved
    by the parent (``diarization_choice.choose_models``), hyperparameters, providers and the
    plan's threads, the speaker bounds, and how a stereo call's channels are used."""

    models: DiarizationModels
    config: DiarizationConfig
    runtime: RuntimeOptions
    bounds: SpeakerBounds
    ge2e_variant: str = "pooled"
    channels: str = "auto"  # auto | mix | split (``witness.channels``)
    channel_vad: str | None = None  # Silero VAD's file: a stereo call's speakers may come from its channels
    channel_centroids: bool = False  # embed each split channel's speech (enrolled voices are to be matched)


@dataclass(frozen=True)
class TurnsResult:
    """What the diarization worker hands back for a file (``info`` None: turns read from a file)."""

    turns: tuple[Turn, ...]
    exclusive_turns: tuple[Turn, ...]
    info: Mapping[str, Any] | None  # models, path, providers, speakers found (and estimated), capped
    timings: Mapping[str, float]
    seconds: float
    centroids: Mapping[str, np.ndarray] = field(default_factory=dict)  # (dim,) float32 by speaker label


EngineResult = WordsResult | TurnsResult  # what a worker hands back for a file, by engine name


def asr_engine(job: AsrJob) -> Callable[[SharedAudio, Progress | None], WordsResult]:
    """Load the Whisper model once; the returned callable transcribes one file's samples:
    the mono mix, or each channel of a stereo call with one party per channel on its own
    (``job.channels``; ``witness.channels.parties_apart``)."""
    # whisper.cpp's OpenMP threads spin while they wait; beside diarization or any other
    # load that made a 60 s file take 88 s instead of 5 s on 2 cores (passive: they sleep).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from witness.asr.whisper import WhisperEngine

    engine = WhisperEngine(job.model.path, job.options, model_name=job.model.name, info=job.model.info,
                           vad_path=job.vad)
    parties = _parties_apart(job)

    def run(audio: SharedAudio, progress: Progress | None = None) -> WordsResult:
        start = time.perf_counter()
        stereo = audio.open_stereo() if parties is not None else None
        call = parties(stereo) if stereo is not None else None
        result = engine.transcribe_call(call, progress) if call is not None else engine.transcribe(audio.open(), progress)
        return WordsResult(result.words, result.language, result.info.to_dict(), time.perf_counter() - start,
                           result.channels)

    return run


def _parties_apart(job: AsrJob):
    """``stereo (2, n) -> StereoCall or None`` (``witness.channels.parties_apart``) for
    ``job``'s channels mode, or None when words always come from the mix."""
    if job.channels == "mix" or job.channel_vad is None:
        return None
    from functools import partial

    from witness.channels import parties_apart
    from witness.vad import SileroVad

    return partial(parties_apart, vad=SileroVad(job.channel_vad), mode=job.channels)


def diarization_info(diarizer: Diarizer, out: DiarizationOutput, providers: dict[str, str] | None = None) -> dict:
    """What a transcript records of a diarization run (its ``engines.diarization``)."""
    segmentation = diarizer.models.segmentation
    info = {
        "segmentation": None if segmentation is None else Path(segmentation).name,
        "embedding": out.embedding,
        "path": out.path,
        "speakers_found": len(out.speakers),
        "speakers_estimated": out.found_speakers,
        "capped": out.capped,
    }
    if providers is not None:
        info["providers"] = providers
    return info


def diarization_engine(job: DiarizationJob) -> Callable[[SharedAudio, Progress | None], TurnsResult]:
    """Open the models once; the returned callable diarizes one file's samples, or, for a
    stereo call with one party per channel (``job.channels``), takes its speakers from
    the channels (``witness.channels``; the transcript's ``method`` says which)."""
    from witness.diarize.pipeline import Diarizer

    diarizer = Diarizer(job.models, job.config, job.runtime, job.ge2e_variant)
    providers = {role: short_name(p) for role, p in diarizer.open_sessions().items()}  # after any fallback
    channels = _channel_splitter(job, diarizer)

    def run(audio: SharedAudio, progress: Progress | None = None) -> TurnsResult:
        start = time.perf_counter()
        stereo = audio.open_stereo() if channels is not None else None
        evidence, split = channels(stereo, progress=progress) if stereo is not None else (None, None)
        if evidence is not None:
            log.info("stereo: %s (%s)", "speakers from the channels" if split else "diarized from the mix",
                     evidence.reason)
        if split is not None:
            info = {"method": "channels", "channels": evidence.to_dict(), "speakers_found": 2}
            centroids = _channel_centroids(diarizer, stereo, split.exclusive_turns) if job.channel_centroids else {}
            seconds = time.perf_counter() - start
            return TurnsResult(split.turns, split.exclusive_turns, info, {"channels": seconds}, seconds, centroids)
        out = diarizer.run(audio.open(), job.bounds, progress)
        info = {"method": "model", **diarization_info(diarizer, out, providers)}
        if evidence is not None:
            info["channels"] = evidence.to_dict()
        return TurnsResult(out.turns, out.exclusive_turns, info, dict(out.timings), time.perf_counter() - start,
                           dict(out.centroids))

    return run


def _channel_centroids(diarizer: Diarizer, stereo: np.ndarray, exclusive_turns) -> dict[str, np.ndarray]:
    """Each channel speaker's centroid, (dim,) float32 by label: its own speech (where its
    channel is the louder) embedded from its own channel."""
    from witness.channels import LABELS
    from witness.diarize.pieces import speech_centroid

    centroids = {}
    for channel, label in enumerate(LABELS):
        regions = [(t.start, t.end) for t in exclusive_turns if t.speaker == label]
        centroid = speech_centroid(diarizer.embedder, stereo[channel], regions)
        if centroid is not None:
            centroids[label] = centroid
    return centroids


def _channel_splitter(job: DiarizationJob, diarizer: Diarizer):
    """``stereo (2, n) -> (evidence, ChannelTurns or None)`` for ``job``'s channels mode, or
    None when stereo files are diarized from the mix ("mix", or no VAD resolved)."""
    if job.channels == "mix" or job.channel_vad is None:
        return None
    from functools import partial

    from witness.channels import diarize_channels, same_voice_share
    from witness.accel.onnx_session import CPU
    from witness.vad import SileroVad

    vad = SileroVad(job.channel_vad, CPU, threads=job.runtime.segmentation_threads)
    return partial(diarize_channels, vad=vad, mode=job.channels,
                   voice_share=partial(same_voice_share, diarizer.embedder))


# Engine name -> what its worker (``witness.run.workers``) or Ray actor (``witness.run.ray_pool``) builds
# the engine with; the one table both use, so a test can wrap a real engine (make it crash) for both.
FACTORIES: dict[str, Callable[..., Callable[..., Any]]] = {"asr": asr_engine, "diarization": diarization_engine}
