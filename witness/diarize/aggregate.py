"""Overlap-add of per-window arrays onto the file-level frame grid.

Each window's frames are added onto the output frames they cover (pyannote's
``Inference.aggregate`` without Hamming weighting or warm-up). Memory stays flat: windows are
visited one at a time and only (output frames x columns) accumulators are allocated, never a
(windows x frames x speakers) copy, so a 3-hour file (10,800 windows) costs a few MB here on
top of the segmentation array the reconstruction needs anyway.
"""

from __future__ import annotations

import numpy as np

from witness.diarize.windows import Segmentations, SpeakerCount


def _chunk_span(segmentations: Segmentations, c: int, num_frames: int) -> tuple[int, int, int]:
    """(first output frame, last output frame + 1, number of chunk frames used) for chunk c."""
    first = segmentations.chunk_start_frame(c)
    stop = min(first + segmentations.frames_per_chunk, num_frames)
    return first, stop, stop - first


def speaker_count(segmentations: Segmentations, max_speakers: int | None = None) -> SpeakerCount:
    """Per-frame number of active speakers: the rounded average over the windows covering
    the frame of each window's number of active local speakers (pyannote's ``speaker_count``
    with no warm-up), capped at ``max_speakers`` when given.

    Frames covered by no window (or only by NaN frames) count 0 speakers. Rounding is
    half-to-even (``np.rint``), as pyannote.
    """
    num_frames = segmentations.num_frames
    total = np.zeros(num_frames, dtype=np.float64)  # sum of per-window counts
    covered = np.zeros(num_frames, dtype=np.int64)  # number of windows with a prediction
    for c in range(segmentations.num_chunks):
        first, stop, used = _chunk_span(segmentations, c, num_frames)
        per_frame = segmentations.data[c, :used].sum(axis=1)  # NaN where any speaker is NaN
        valid = ~np.isnan(per_frame)
        total[first:stop] += np.where(valid, per_frame, 0.0)
        covered[first:stop] += valid
    average = np.divide(total, covered, out=np.zeros_like(total), where=covered > 0)
    count = np.rint(average)
    if max_speakers is not None:
        count = np.minimum(count, max_speakers)
    return SpeakerCount(count.astype(np.uint8), segmentations.frames)


def cluster_activations(segmentations: Segmentations, hard_clusters: np.ndarray, num_clusters: int) -> np.ndarray:
    """Summed activity of each global speaker on the output frame grid.

    segmentations: the per-window activity (chunks, frames_per_chunk, local_speakers).
    hard_clusters: (chunks, local_speakers) int, global speaker of each local speaker; any
        negative value (-2) means "not assigned" and contributes nothing.
    Returns (num_frames, num_clusters) float32: for each window, the activity of global
    speaker k is the max over its local speakers assigned to k; windows are then summed
    (pyannote's ``reconstruct`` + ``aggregate(skip_average=True)``; NaN counts as 0).
    """
    hard_clusters = np.asarray(hard_clusters)
    if hard_clusters.shape != (segmentations.num_chunks, segmentations.num_local_speakers):
        raise ValueError(
            f"hard clusters must be (chunks, local speakers) = "
            f"{(segmentations.num_chunks, segmentations.num_local_speakers)}, got {hard_clusters.shape}"
        )
    num_frames = segmentations.num_frames
    activations = np.zeros((num_frames, num_clusters), dtype=np.float32)
    for c in range(segmentations.num_chunks):
        first, stop, used = _chunk_span(segmentations, c, num_frames)
        window = np.nan_to_num(segmentations.data[c, :used], nan=0.0)
        for k in np.unique(hard_clusters[c]):
            if k < 0:
                continue
            activations[first:stop, k] += window[:, hard_clusters[c] == k].max(axis=1)
    return activations
