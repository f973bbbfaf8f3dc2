"""Speaker diarization of one signal: the stages called in order (orchestration only).

    samples ─▶ segmentation (worker thread, ``stream``) ─bounded queue─▶ masks + embeddings
            ─▶ loud frames heard as nobody on >= 25%: the silence-biased decoding kept, the windows
               it changed embedded again (``SegmentationConfig.silence_bias``; on ``RuntimeOptions.piece_workers``
               threads: the segmentation's core is free by then)
            ─▶ clustering (its s-norm cut by the audio's band, ``band``; GE2E's s-norm added
               on narrowband audio when the config asks: off, ``ClusteringConfig.second_weight``)
            ─▶ per-frame speaker count + reconstruction ─▶ turns
            ─▶ splitting (CAM++: a speaker whose turns are two voices becomes two, ``split``)
            ─▶ one speaker found: a second voice where CAM++ and GE2E both hear two (``second_voice``)
            ─▶ a speaker with next to no speech of its own, or little and scoring near the merge's
               cut with another, joins that other (``small_speakers``)

Segmentation windows stream into the embedding stage, so embedding starts with the first
windows (on the CPU the embedding thread also segments whenever no batch waits, so both cores
work until the last window); the per-window activity lands in one preallocated (windows, 589, 3) float32 array
(76 MB for 3 hours at a 1 s step; the silence-biased decoding in a bool one, 19 MB); besides it only the (windows, 3, dimension) float32 embeddings
and the clustering stage's per-embedding arrays grow with the file (no window audio is kept).
Without a segmentation model, Silero VAD speech regions are cut into pieces that are embedded
and clustered instead (``pieces``); the output says which path ran.

``Diarizer`` takes resolved model paths (``witness.models.diarization_choice``), the
hyperparameters (``config.config_for``) and how to run (``RuntimeOptions``: execution
providers and threads per model, batch sizes). Progress goes to one callback
``(stage, completed, total)`` per stage (segmentation, embedding, clustering, reconstruction,
splitting; on the fallback path vad, embedding, clustering); it may be called from the segmentation
thread, never concurrently, and never goes backwards within a stage.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

import numpy as np

from witness.accel.blas import blas_threads
from witness.accel.providers import CPU as CPU_PROVIDER
from witness.diarize.aggregate import speaker_count
from witness.diarize.band import narrowband
from witness.diarize.clustering import ScoreMerge, cluster, filter_embeddings, score_merge
from witness.diarize.config import ClusteringConfig, DiarizationConfig, RuntimeOptions, SpeakerBounds, config_for
from witness.diarize.embedding import CamPlusPlusEmbedder, GE2EEmbedder, SpeakerEmbedder, WeSpeakerEmbedder
from witness.diarize.features import SAMPLE_RATE, finite_audio
from witness.diarize.masks import embedding_masks
from witness.diarize.pieces import cluster_pieces, piece_batch, piece_centroids, piece_turns
from witness.diarize.pooled_partials import PooledGE2E
from witness.diarize.reconstruct import clip_turns, reconstruct
from witness.diarize.segmentation import (
    FRAME_SIZE_SAMPLES, FRAME_STEP_SAMPLES, FRAMES_PER_WINDOW, LOCAL_SPEAKERS, WINDOW_SAMPLES, SegmentationModel,
    cut_windows, levels_db, window_starts)
from witness.diarize.mixed import mixed_windows
from witness.diarize.second_voice import group_centroids, two_voices
from witness.diarize.small_speakers import NearVoice, joined_turns, small_speaker_joins
from witness.diarize.split import embedded_turns, middle, relabel, renumbered, split_speakers
from witness.diarize.stream import SegmentationStream
from witness.vad import SileroVad, fixed_subwindows
from witness.diarize.windows import Segmentations, SlidingWindow
from witness.models.diarization_choice import DiarizationModels
from witness.progress import Progress
from witness.transcript import Turn, speakers_in_order

log = logging.getLogger(__name__)


PATH_SEGMENTATION = "segmentation"
PATH_VAD = "vad-fallback"
GE2E_VARIANTS = ("pooled", "window")
PIECE_SECONDS = 2.0  # VAD fallback: speech regions cut into pieces this long…
MIN_PIECE_SECONDS = 1.0  # …a shorter remainder joins the piece before it


@dataclass(frozen=True)
class DiarizationOutput:
    """What a diarization run found.

    turns: regular turns (overlap kept), sorted by start; exclusive_turns: one speaker per
        instant (for matching words). Both end at the end of the audio.
    speakers: labels in order of first appearance (SPEAKER_00, SPEAKER_01, ...).
    path: "segmentation" or "vad-fallback" (no segmentation model could be had).
    embedding: the embedding model that ran ("ge2e-pooled", "ge2e-window", "wespeaker", "campplus").
    found_speakers: speakers clustering estimated on its own, before --num/--min/--max-speakers
        applied (``speakers`` is what the output has).
    capped: True when more speakers were found than --max-speakers (or --num-speakers) allow.
    timings: seconds per stage (segmentation and embedding overlap in time: "streaming" is
        their joint wall time, "re-embedding" the silence bias's pass after them when it ran), and "total".
    centroids: each speaker's cluster centroid, (dim,) float32 by label: the mean of the
        embeddings clustering gave that speaker (what known voices are matched against);
        a speaker none of whose speech could be embedded (a file under a second) has none.
    """

    turns: tuple[Turn, ...]
    exclusive_turns: tuple[Turn, ...]
    speakers: tuple[str, ...]
    path: str
    embedding: str
    found_speakers: int
    capped: bool
    timings: Mapping[str, float] = field(default_factory=dict)
    centroids: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def num_speakers(self) -> int:
        return len(self.speakers)


@dataclass(frozen=True)
class WindowEmbeddings:
    """segmentations: per-window local speaker activity (windows, 589, 3) float32 0/1.
    embeddings: (windows, 3, dim) float32 per (window, local speaker), NaN where none was
    taken (inactive, or too little audio). timings: seconds per stage.
    second: (windows, 3, 256) float32 the second model's (GE2E) embeddings of those that enter
    clustering, NaN elsewhere, once the clustering adds GE2E's score (``Diarizer.second_embeddings``)."""

    segmentations: Segmentations
    embeddings: np.ndarray
    timings: Mapping[str, float]
    second: np.ndarray | None = None
    unheard: float | None = None


@dataclass(frozen=True)
class PieceEmbeddings:
    """The VAD fallback's pieces: (start, end) seconds in time order, their (pieces, dim)
    float32 embeddings (NaN where a piece was too short), and seconds per stage."""

    pieces: tuple[tuple[float, float], ...]
    embeddings: np.ndarray
    timings: Mapping[str, float]


@dataclass(frozen=True)
class SpeakerTurns:
    """turns, exclusive_turns, centroids: as in ``DiarizationOutput``; found: speakers
    before the bounds; timings: seconds per stage."""

    turns: tuple[Turn, ...]
    exclusive_turns: tuple[Turn, ...]
    found: int
    timings: Mapping[str, float]
    centroids: Mapping[str, np.ndarray]


class _Reporter:
    """Serialises progress calls from two threads and keeps each stage from going backwards."""

    def __init__(self, progress: Progress | None):
        self._progress = progress
        self._lock = threading.Lock()
        self._done: dict[str, int] = {}

    def __call__(self, stage: str, completed: int, total: int) -> None:
        if self._progress is None:
            return
        with self._lock:
            if completed >= self._done.get(stage, -1):
                self._done[stage] = completed
                self._progress(stage, completed, total)


def _embedded(centroid: np.ndarray) -> bool:
    """Whether ``centroid`` is a print: clustering gives a speaker with no embedding a zero
    (or NaN) centroid, whose cosine similarity with any voice is NaN."""
    return bool(np.isfinite(centroid).all() and np.any(centroid))


def _capped(found: int, kept: int, bounds: SpeakerBounds) -> bool:
    """True when clustering ``found`` more speakers than the bounds allow; says on stderr
    (one line) whenever the ``kept`` speakers differ from what the bounds asked for."""
    if found > bounds.high:
        log.warning("found %d speakers, more than the %d allowed: kept %d", found, int(bounds.high), kept)
        return True
    if kept < bounds.low and (bounds.num_speakers or bounds.min_speakers):  # only what the user asked for
        asked = f"{bounds.low} speakers" if bounds.target else f"at least {bounds.low} speakers"
        log.warning("asked for %s, but only %d could be told apart (too little speech from the others)",
                    asked, kept)
    return False


class Diarizer:
    """Speaker diarization with resolved models (sessions start on first use).

    models: the files to run. config: hyperparameters (default: ``config_for`` the
    embedding model, 1 s window step). ge2e_variant: "pooled" (1.6 s partials embedded once
    along the file and pooled per window and speaker; the default) or "window" (each masked
    window embedded on its own); ignored for WeSpeaker.
    """

    def __init__(self, models: DiarizationModels, config: DiarizationConfig | None = None,
                 runtime: RuntimeOptions = RuntimeOptions(), ge2e_variant: str = "pooled"):
        if ge2e_variant not in GE2E_VARIANTS:
            raise ValueError(f"GE2E variant {ge2e_variant!r}: choose from {', '.join(GE2E_VARIANTS)}")
        if models.segmentation is None and models.vad is None:
            raise ValueError("need a segmentation model or, for the fallback path, a VAD model")
        self.models = models
        self.config = config or config_for(models.embedding)
        self.runtime = runtime
        self.ge2e_variant = ge2e_variant
        self.embedder = self._make_embedder()
        self.second = None if models.second is None or models.embedding != "campplus" else GE2EEmbedder(
            models.second, runtime.embedding_providers, threads=runtime.embedding_threads)
        self.segmentation = None if models.segmentation is None else SegmentationModel(
            models.segmentation, runtime.segmentation_providers, threads=runtime.segmentation_threads)
        self.vad = None if models.vad is None else SileroVad(
            models.vad, runtime.segmentation_providers, threads=runtime.segmentation_threads)

    def open_sessions(self) -> dict[str, str]:
        """Create every ONNX session now (on MIGraphX this compiles, or loads the cached
        program); returns the provider each model really runs on, by role."""
        models = {"segmentation": self.segmentation, "vad": self.vad, "embedding": self.embedder}
        return {role: model.session.provider for role, model in models.items() if model is not None}

    @property
    def embedding_name(self) -> str:
        return f"ge2e-{self.ge2e_variant}" if self.models.embedding == "ge2e" else self.models.embedding

    def _make_embedder(self) -> SpeakerEmbedder:
        rt, path = self.runtime, self.models.embedding_path
        extra = {} if rt.embedding_batch_size is None else {"batch_size": rt.embedding_batch_size}
        if self.models.embedding == "ge2e":
            return GE2EEmbedder(path, rt.embedding_providers, threads=rt.embedding_threads, **extra)
        if self.models.embedding == "wespeaker":
            return WeSpeakerEmbedder(path, rt.embedding_providers, threads=rt.embedding_threads, **extra)
        if self.models.embedding == "campplus":
            return CamPlusPlusEmbedder(path, rt.embedding_providers, threads=rt.embedding_threads, **extra)
        raise ValueError(f"embedding model {self.models.embedding!r}: expected ge2e, wespeaker or campplus")

    def run(self, samples: np.ndarray, bounds: SpeakerBounds = SpeakerBounds(),
            progress: Progress | None = None) -> DiarizationOutput:
        """Diarize ``samples`` ((n,) float32, 16 kHz mono; NaN/Inf are zeroed with a warning)."""
        began = time.perf_counter()
        signal = finite_audio(np.asarray(samples, dtype=np.float32).reshape(-1), "audio")
        duration = len(signal) / SAMPLE_RATE
        report = _Reporter(progress)
        with blas_threads(self.runtime.blas_threads):
            if self.segmentation is None:
                log.warning("diarizing from Silero VAD speech regions (no segmentation model)")
                pieces = self.embed_pieces(signal, report)
                result = self.cluster_piece_embeddings(pieces, bounds, report)
                path, timings = PATH_VAD, dict(pieces.timings)
            else:
                windows = self.embed_windows(signal, report)
                result = self.cluster_windows(windows, bounds, duration, report, signal)
                path, timings = PATH_SEGMENTATION, dict(windows.timings)
        timings.update(result.timings, total=time.perf_counter() - began)
        speakers = speakers_in_order(t.speaker for t in result.turns)
        return DiarizationOutput(result.turns, result.exclusive_turns, speakers, path, self.embedding_name,
                                 result.found, _capped(result.found, len(speakers), bounds), timings,
                                 {label: result.centroids[label] for label in speakers if label in result.centroids})

    def _window_embedder(self, signal: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """(starts (N,) int64 window starts, masks (N, 589) float32) -> (N, dim) float32."""
        if self.models.embedding == "ge2e" and self.ge2e_variant == "pooled":
            return PooledGE2E(self.embedder, signal).embed
        return lambda starts, masks: self.embedder.embed(cut_windows(signal, starts), masks)

    def embed_windows(self, signal: np.ndarray, progress: Progress | None = None) -> WindowEmbeddings:
        """Segmentation and embeddings of ``signal`` ((n,) float32, finite), side by side."""
        report = _Reporter(progress)
        rt = self.runtime
        step_samples = int(round(self.config.segmentation.window_step * SAMPLE_RATE))
        starts = window_starts(len(signal), step_samples)
        total = len(starts)
        activity = np.zeros((total, FRAMES_PER_WINDOW, LOCAL_SPEAKERS), dtype=np.float32)
        embeddings = np.full((total, LOCAL_SPEAKERS, self.embedder.dimension), np.nan,
                             dtype=np.float32)
        window_embed = self._window_embedder(signal)
        every = self.config.embed_every if total > self.config.long_file_windows else 1
        min_clean_frames = FRAMES_PER_WINDOW * self.embedder.min_clean_seconds * SAMPLE_RATE / WINDOW_SAMPLES

        def embed(index: np.ndarray, decoded: np.ndarray) -> None:
            """Embed each local speaker of windows ``index`` ((B,) window numbers; every
            ``every``-th only) from their activity ``decoded`` (B, frames, speakers)."""
            masks, active = embedding_masks(decoded, min_clean_frames)
            rows, speakers = np.nonzero(active & (index % every == 0)[:, None])
            if len(rows):
                embeddings[index[rows], speakers] = window_embed(starts[index[rows]], masks[rows, speakers])

        began, busy, embedded = time.perf_counter(), 0.0, 0
        # on the CPU this thread segments too whenever no batch waits (``stream``); a GPU keeps one caller
        share = rt.share_segmentation and self.segmentation.session.provider == CPU_PROVIDER
        silence = self.silence_bias(signal)
        stream = SegmentationStream(self.segmentation, signal, step_samples / SAMPLE_RATE,
                                    rt.windows_per_batch, rt.queue_batches, activity,
                                    lambda done: report("segmentation", done, total), share, silence)
        with stream:
            for batch in stream:
                t0 = time.perf_counter()
                embed(batch.first + np.arange(len(batch.activity)), batch.activity)
                busy += time.perf_counter() - t0
                embedded += len(batch.activity)  # batches may come out of order (``stream``)
                report("embedding", embedded, total)
        unheard = None if silence is None else stream.unheard / max(stream.loud, 1)
        timings = {}
        if unheard is not None and unheard >= self.config.segmentation.unheard_gate:
            t0 = time.perf_counter()
            changed = np.nonzero((stream.biased != (activity > 0)).any(axis=(1, 2)))[0]
            activity[changed] = stream.biased[changed]
            embeddings[changed] = np.nan
            # the segmentation's core is free by now: batches side by side, each writing its own rows, each
            # 1/workers of a stream batch (the peak memory of one; pooled GE2E keeps a cache, so one thread)
            workers = 1 if self.models.embedding == "ge2e" and self.ge2e_variant == "pooled" else rt.piece_workers
            size = max(1, -(-rt.windows_per_batch // max(1, workers)))
            with ThreadPoolExecutor(max(1, workers)) as pool:
                list(pool.map(lambda index: embed(index, activity[index]),
                              [changed[first:first + size] for first in range(0, len(changed), size)]))
            timings["re-embedding"] = time.perf_counter() - t0
            busy += timings["re-embedding"]
        timings.update(segmentation=stream.busy_seconds, embedding=busy, streaming=time.perf_counter() - began)
        window = SlidingWindow(0.0, WINDOW_SAMPLES / SAMPLE_RATE, step_samples / SAMPLE_RATE)
        segmentations = Segmentations(activity, window, FRAME_STEP_SAMPLES / SAMPLE_RATE, FRAME_SIZE_SAMPLES / SAMPLE_RATE)
        return WindowEmbeddings(segmentations, embeddings, timings, unheard=unheard)

    def silence_bias(self, signal: np.ndarray) -> tuple[float, float] | None:
        """(loud_db, bias) for ``SegmentationStream``'s second decoding of ``signal``: frames
        within ``loud_db`` of its speech level and ``loud_floor_db`` over its noise floor
        (``segmentation.levels_db``) are loud; None with the bias off."""
        config = self.config.segmentation
        if not config.silence_bias:
            return None
        speech, floor = levels_db(signal)
        return max(speech - config.loud_db, floor + config.loud_floor_db), config.silence_bias

    def cluster_windows(self, windows: WindowEmbeddings, bounds: SpeakerBounds, duration: float,
                        progress: Progress | None = None, signal: np.ndarray | None = None) -> SpeakerTurns:
        """Turns of embedded windows, ending at ``duration`` seconds; with the ``signal`` they
        came from, each speaker also gets the turn-by-turn second look (``split``)."""
        report = _Reporter(progress)
        clustering, seconds = self.clustering_for(signal), {}
        if clustering.second_weight > 0 and windows.second is None:
            if signal is None or self.second is None:
                clustering = replace(clustering, second_weight=0.0)
            else:
                began = time.perf_counter()
                windows = replace(windows, second=self.second_embeddings(windows, signal, clustering))
                seconds["second embedding"] = time.perf_counter() - began
        out = self._speaker_turns(windows, bounds, duration, report, clustering)
        merge = score_merge(clustering)
        if signal is None or self.config.split is None or merge is None:
            return replace(out, timings={**out.timings, **seconds})
        known: dict[tuple[float, float], np.ndarray] = {}
        if self.config.split.mixed_cosine is not None:
            out = self._unmixed(out, windows, bounds, duration, signal, known, report, clustering)
        out = self._split(out, signal, merge, bounds, report, known)
        out = self._small_joined(self._second_voice(out, signal, bounds, known), bounds, merge)
        return replace(out, timings={**out.timings, **seconds})

    def clustering_for(self, signal: np.ndarray | None) -> ClusteringConfig:
        """The clustering settings for ``signal``: on wideband audio (``band.narrowband``) the
        wideband s-norm cut where the config has one and no second model's score (without the
        signal, the config's)."""
        config = self.config.clustering
        if signal is None or (config.wideband_snorm_threshold is None and not config.second_weight):
            return config
        if narrowband(signal):
            return config
        wide = config.wideband_snorm_threshold
        return replace(config, snorm_threshold=config.snorm_threshold if wide is None else wide, second_weight=0.0)

    def second_embeddings(self, windows: WindowEmbeddings, signal: np.ndarray,
                          clustering: ClusteringConfig) -> np.ndarray:
        """(windows, 3, 256) float32: each (window, local speaker) embedding that enters
        ``clustering`` (``filter_embeddings``) embedded again by the second model (GE2E) from the
        same window audio and frame mask; NaN elsewhere."""
        train = filter_embeddings(windows.embeddings, windows.segmentations, clustering.min_active_ratio)
        out = np.full(windows.embeddings.shape[:2] + (self.second.dimension,), np.nan, dtype=np.float32)
        min_clean_frames = FRAMES_PER_WINDOW * self.embedder.min_clean_seconds * SAMPLE_RATE / WINDOW_SAMPLES
        starts = window_starts(len(signal), int(round(self.config.segmentation.window_step * SAMPLE_RATE)))
        per_call = self.runtime.windows_per_batch * 4
        for first in range(0, len(train.chunk_idx), per_call):
            chunks, speakers = train.chunk_idx[first:first + per_call], train.speaker_idx[first:first + per_call]
            masks, _ = embedding_masks(windows.segmentations.data[chunks], min_clean_frames)
            out[chunks, speakers] = self.second.embed(cut_windows(signal, starts[chunks]),
                                                      masks[np.arange(len(chunks)), speakers])
        return out

    def _speaker_turns(self, windows: WindowEmbeddings, bounds: SpeakerBounds, duration: float, report: _Reporter,
                       clustering: ClusteringConfig, exclude: np.ndarray | None = None) -> SpeakerTurns:
        """Clustering (without the ``exclude`` embeddings, ``clustering.cluster``) and reconstruction."""
        segmentations = windows.segmentations
        began = time.perf_counter()
        report("clustering", 0, 1)
        clusters = cluster(windows.embeddings, segmentations, clustering, bounds, exclude, windows.second)
        timings = {"clustering": time.perf_counter() - began}
        report("clustering", 1, 1)
        began = time.perf_counter()
        report("reconstruction", 0, 1)
        cap = bounds.num_speakers or bounds.max_speakers
        result = reconstruct(segmentations, clusters.hard, speaker_count(segmentations), max_speakers=cap)
        turns, exclusive = clip_turns(result.turns, duration), clip_turns(result.exclusive_turns, duration)
        timings["reconstruction"] = time.perf_counter() - began
        report("reconstruction", 1, 1)
        centroids = {label: clusters.centroids[k].astype(np.float32) for k, label in enumerate(result.labels)
                     if label is not None and k < clusters.num_clusters and _embedded(clusters.centroids[k])}
        return SpeakerTurns(turns, exclusive, clusters.found, timings, centroids)

    def _unmixed(self, found: SpeakerTurns, windows: WindowEmbeddings, bounds: SpeakerBounds, duration: float,
                 signal: np.ndarray, known: dict[tuple[float, float], np.ndarray], report: _Reporter,
                 clustering: ClusteringConfig) -> SpeakerTurns:
        """``found`` clustered again without the window embeddings that mix two voices
        (``mixed.mixed_windows``, from the long turns' pieces, which land in ``known``)."""
        began = time.perf_counter()
        config = self.config.split
        long, normed = embedded_turns(found.exclusive_turns, signal, self.embedder.embed, config, known,
                                      self.runtime.piece_workers)
        pieces = np.array([middle(t, config.turn_seconds) for t in long]).reshape(-1, 2)
        train = filter_embeddings(windows.embeddings, windows.segmentations, clustering.min_active_ratio)
        mixed = mixed_windows(windows.segmentations, train, pieces, normed, config.mixed_cosine)
        log.debug("window embeddings that mix two voices: %d of %d", int(mixed.sum()), len(train.chunk_idx))
        again = self._speaker_turns(windows, bounds, duration, report, clustering, mixed) if mixed.any() else found
        if again.found == 1 < found.found:  # the embeddings left out held a voice of their own: keep the first count
            again = found
        return replace(again, timings={**again.timings, "unmixing": time.perf_counter() - began})

    def _split(self, found: SpeakerTurns, signal: np.ndarray, merge: ScoreMerge, bounds: SpeakerBounds,
               report: _Reporter, known: dict[tuple[float, float], np.ndarray] | None = None) -> SpeakerTurns:
        """``found`` after the turn-by-turn second look at each speaker (``split_speakers``)."""
        began = time.perf_counter()
        report("splitting", 0, 1)
        split = split_speakers(found.turns, found.exclusive_turns, found.centroids, signal, self.embedder.embed,
                               merge, self.config.split, bounds.high, known, self.runtime.piece_workers)
        report("splitting", 1, 1)
        log.debug("second look at the speakers: %d split off, %d turns moved", split.added, split.moved)
        timings = {**found.timings, "splitting": time.perf_counter() - began}
        return SpeakerTurns(split.turns, split.exclusive_turns, found.found + split.added, timings, split.centroids)

    def _second_voice(self, found: SpeakerTurns, signal: np.ndarray, bounds: SpeakerBounds,
                      known: dict[tuple[float, float], np.ndarray]) -> SpeakerTurns:
        """``found``'s one speaker split in two where CAM++ and GE2E both hear two voices in its
        long turns (``second_voice``); any other ``found`` as it is."""
        if self.second is None or bounds.high < 2 or len({t.speaker for t in found.turns}) != 1:
            return found
        began, config = time.perf_counter(), self.config.split
        long, normed = embedded_turns(found.exclusive_turns, signal, self.embedder.embed, config, known,
                                      self.runtime.piece_workers)
        voices = two_voices([middle(t, config.turn_seconds) for t in long], normed, signal, self.second.embed)
        timings = {**found.timings, "second voice": time.perf_counter() - began}
        if voices is None:
            return replace(found, timings=timings)
        speaker = long[0].speaker
        names = [speaker, f"{speaker}.1"]
        centroids = dict(zip(names, group_centroids(normed, voices).astype(np.float32)))
        turns, exclusive, centroids = renumbered(relabel(found.turns, speaker, long, voices, names),
                                                 relabel(found.exclusive_turns, speaker, long, voices, names),
                                                 centroids)
        log.debug("a second voice in the one speaker found: %d of %d long turns", int(voices.sum()), len(long))
        return SpeakerTurns(turns, exclusive, found.found + 1, timings, centroids)

    def _small_joined(self, found: SpeakerTurns, bounds: SpeakerBounds, merge: ScoreMerge | None = None
                      ) -> SpeakerTurns:
        """``found`` with each speaker under ``min_speaker_share`` of the speech joined to the
        closest other, or under ``near_share`` to the one its s-norm (``merge``'s) is near the
        cut with, among at most ``near_speakers`` (``small_speakers``); as it is when the user
        fixed the count."""
        config = self.config.split
        if (config.min_speaker_share <= 0 and config.near_margin is None) or bounds.target is not None:
            return found
        speakers = {t.speaker for t in found.turns}
        near = None if merge is None or config.near_margin is None or len(speakers) > config.near_speakers else (
            NearVoice(config.near_share, config.near_margin, merge))
        joins = small_speaker_joins(found.exclusive_turns, found.centroids, config.min_speaker_share,
                                    config.small_speaker_cosine, bounds.low, speakers, near)
        if not joins:
            return found
        log.debug("speakers with next to no speech joined to another: %s", joins)
        turns, exclusive, centroids = renumbered(joined_turns(found.turns, joins),
                                                 joined_turns(found.exclusive_turns, joins), found.centroids)
        return SpeakerTurns(turns, exclusive, found.found - len(joins), found.timings, centroids)

    def embed_pieces(self, signal: np.ndarray, progress: Progress | None = None) -> PieceEmbeddings:
        """The fallback path's first half: VAD speech regions cut into pieces, each embedded."""
        report = _Reporter(progress)
        began = time.perf_counter()
        report("vad", 0, 1)
        pieces = tuple(fixed_subwindows(self.vad.speech_regions(signal), PIECE_SECONDS, MIN_PIECE_SECONDS))
        timings = {"vad": time.perf_counter() - began}
        report("vad", 1, 1)
        began = time.perf_counter()
        embeddings = np.full((len(pieces), self.embedder.dimension), np.nan, dtype=np.float32)
        per_call = self.runtime.windows_per_batch * 4
        for first in range(0, len(pieces), per_call):
            waveforms, masks = piece_batch(signal, list(pieces[first:first + per_call]))
            embeddings[first:first + len(waveforms)] = self.embedder.embed(waveforms, masks)
            report("embedding", first + len(waveforms), len(pieces))
        timings["embedding"] = time.perf_counter() - began
        return PieceEmbeddings(pieces, embeddings, timings)

    def cluster_piece_embeddings(self, pieces: PieceEmbeddings, bounds: SpeakerBounds,
                                 progress: Progress | None = None) -> SpeakerTurns:
        """The fallback path's second half: clustered pieces -> turns (no overlap)."""
        report = _Reporter(progress)
        began = time.perf_counter()
        report("clustering", 0, 1)
        durations = np.array([end - start for start, end in pieces.pieces])
        clusters = cluster_pieces(pieces.embeddings, durations, self.config.piece_clustering, bounds,
                                  self.embedder.min_clean_seconds)
        turns = piece_turns(list(pieces.pieces), clusters.labels)
        centroids = piece_centroids(pieces.embeddings, clusters.labels)
        report("clustering", 1, 1)
        return SpeakerTurns(turns, turns, clusters.found, {"clustering": time.perf_counter() - began}, centroids)
