"""Which frames of a window each local speaker's embedding is taken from (pyannote's rule).

A local speaker's embedding uses the frames where it speaks alone (overlapped frames masked
out) when more than ``min_clean_frames`` of them remain; otherwise its whole activity, overlap
included, as pyannote does, so that a speaker heard only in overlap still gets an embedding.
"""

from __future__ import annotations

import numpy as np


def embedding_masks(activity: np.ndarray, min_clean_frames: float) -> tuple[np.ndarray, np.ndarray]:
    """Frame masks for the (window, local speaker) embeddings.

    activity: (windows, frames, local_speakers) float32, hard 0/1 (NaN counts as 0).
    min_clean_frames: more single-speaker frames than this -> use only those.
    Returns masks (windows, local_speakers, frames) float32 0/1 and active
    (windows, local_speakers) bool (the local speaker is active somewhere in its window).
    """
    activity = np.nan_to_num(np.asarray(activity, dtype=np.float32), nan=0.0)
    alone = activity.sum(axis=2, keepdims=True) < 2
    clean = activity * alone
    use_clean = clean.sum(axis=1) > min_clean_frames  # (windows, local_speakers)
    masks = np.where(use_clean[:, None, :], clean, activity)
    return np.ascontiguousarray(masks.transpose(0, 2, 1)), activity.sum(axis=1) > 0
