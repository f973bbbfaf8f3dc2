"""Reconstruction: clustered windows -> per-frame speakers -> speaker turns.

Per output frame, the ``count`` global speakers with the highest summed activity are active
(pyannote's ``to_diarization``), never more than clustering found: where segmentation hears
more people at once than there are clusters, pyannote pads the frame with a speaker no
cluster holds, and one voice alone came out as two (``scripts/measure_counting.py --sets
onevoice-tune``: 44 of 77 one-voice files heard as one with the padding, 71 without; that
speaker holds no exclusive turn, so no word). Regular turns keep overlap; exclusive turns use
a count capped at 1, i.e. one speaker per instant, the one with the higher aggregated activity.
Turn boundaries sit at frame middles, as pyannote's ``Binarize``: a turn starts at the middle
of its first active frame and ends at the middle of the first inactive frame after it (or at
the middle of the last frame when the file ends first).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from witness.diarize.aggregate import cluster_activations
from witness.diarize.windows import Segmentations, SlidingWindow, SpeakerCount
from witness.transcript import Turn

SEGMENT_PRECISION = 1e-6  # pyannote.core drops segments not longer than this (seconds)


@dataclass(frozen=True)
class DiarizationResult:
    """Output of the numerical diarization stages.

    turns: regular turns (overlap kept), sorted by (start, end, speaker).
    exclusive_turns: at most one speaker per instant, same labels, same order.
    discrete: (frames, num_clusters) uint8, 1 where global speaker k is active in frame t
        (regular diarization; column k is hard-cluster k).
    labels: per column of ``discrete``, its SPEAKER_xx label, or None for a cluster that is
        never active; labels are numbered in order of first appearance.
    speaker_count: the per-frame count used (capped by ``max_speakers``).
    """

    turns: tuple[Turn, ...]
    exclusive_turns: tuple[Turn, ...]
    discrete: np.ndarray
    labels: tuple[str | None, ...]
    speaker_count: SpeakerCount

    @property
    def num_speakers(self) -> int:
        return sum(label is not None for label in self.labels)


def binarize_top_speakers(activations: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per frame, mark the ``count[t]`` columns with the highest activation active.

    activations: (frames, speakers) float; count: (frames,) int.
    Returns (frames, max(speakers, count.max())) uint8. Ties go to the lower column (stable
    sort). When a frame asks for more speakers than there are columns, zero-activity columns
    are appended, as pyannote does.
    """
    num_frames, num_speakers = activations.shape
    width = max(num_speakers, int(count.max(initial=0)))
    padded = np.zeros((num_frames, width), dtype=np.float32)
    padded[:, :num_speakers] = activations
    order = np.argsort(-padded, axis=1, kind="stable")  # best speaker first
    chosen = np.arange(width)[None, :] < np.asarray(count, dtype=np.int64)[:, None]
    binary = np.zeros((num_frames, width), dtype=np.uint8)
    np.put_along_axis(binary, order, chosen.astype(np.uint8), axis=1)
    return binary


def runs(active: np.ndarray) -> list[tuple[int, int]]:
    """(first, stop) frame index pairs of the runs of True in a 1-D bool array."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], active.astype(np.int8), [0]))))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def frames_to_segments(active: np.ndarray, frames: SlidingWindow) -> list[tuple[float, float]]:
    """Turns (start, end) in seconds of one speaker's (frames,) bool activity (``Binarize``)."""
    last = len(active) - 1
    segments = []
    for first, stop in runs(active):
        start, end = frames.middle_of(first), frames.middle_of(min(stop, last))
        if end - start > SEGMENT_PRECISION:
            segments.append((start, end))
    return segments


def _segments(discrete: np.ndarray, frames: SlidingWindow) -> list[tuple[float, float, int]]:
    """Sorted (start, end, cluster) triples from a (frames, clusters) 0/1 array."""
    return sorted(
        (start, end, k)
        for k in range(discrete.shape[1])
        for start, end in frames_to_segments(discrete[:, k] > 0, frames)
    )


def _labels(turns: list[tuple[float, float, int]], num_clusters: int) -> tuple[str | None, ...]:
    """SPEAKER_00, SPEAKER_01... in order of first appearance (turns sorted by start)."""
    labels: list[str | None] = [None] * num_clusters
    names = 0
    for _, _, k in turns:
        if labels[k] is None:
            labels[k] = f"SPEAKER_{names:02d}"
            names += 1
    return tuple(labels)


def _as_turns(triples: list[tuple[float, float, int]], labels: tuple[str | None, ...]) -> tuple[Turn, ...]:
    turns = (Turn(start, end, labels[k]) for start, end, k in triples)
    return tuple(sorted(turns, key=lambda t: (t.start, t.end, t.speaker)))


def reconstruct(
    segmentations: Segmentations,
    hard_clusters: np.ndarray,
    count: SpeakerCount,
    max_speakers: int | None = None,
) -> DiarizationResult:
    """Regular and exclusive turns from clustered windows.

    segmentations: per-window activity (chunks, frames_per_chunk, local_speakers).
    hard_clusters: (chunks, local_speakers) int, global speaker per local speaker, -2 = none.
    count: per-frame speaker count from ``speaker_count`` (same frame grid), capped at the
        number of clusters (module docstring).
    max_speakers: cap on the per-frame count (the user's --max-speakers / --num-speakers).
    """
    if max_speakers is not None:
        count = count.capped(max_speakers)
    hard_clusters = np.asarray(hard_clusters)
    num_clusters = int(hard_clusters.max(initial=-1)) + 1
    activations = cluster_activations(segmentations, hard_clusters, num_clusters)
    if len(count.data) != len(activations):
        raise ValueError(f"speaker count has {len(count.data)} frames, the windows cover {len(activations)}")
    discrete = binarize_top_speakers(activations, np.minimum(count.data, num_clusters))
    exclusive = binarize_top_speakers(activations, np.minimum(count.data, min(1, num_clusters)))
    frames = segmentations.frames
    regular = _segments(discrete, frames)
    labels = _labels(regular, discrete.shape[1])
    return DiarizationResult(
        turns=_as_turns(regular, labels),
        exclusive_turns=_as_turns(_segments(exclusive, frames), labels),
        discrete=discrete,
        labels=labels,
        speaker_count=count,
    )


def clip_turns(turns: tuple[Turn, ...], end: float) -> tuple[Turn, ...]:
    """``turns`` cut at ``end`` seconds (the end of the audio: the last window is zero-padded
    past it); turns left no longer than pyannote's precision are dropped."""
    clipped = (Turn(t.start, min(t.end, end), t.speaker) for t in turns)
    return tuple(t for t in clipped if t.end - t.start > SEGMENT_PRECISION)
