"""Powerset decoding: the segmentation model's per-frame class over speaker *sets* -> activity.

segmentation-3.0 scores 7 classes per frame: {}, {0}, {1}, {2}, {0,1}, {0,2}, {1,2} (sets of
at most 2 of 3 local speakers, ordered by size, then lexicographically). Hard decoding takes
the most likely class and marks its members active, as pyannote's ``Powerset.to_multilabel``
with ``soft=False``.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np


def num_powerset_classes(num_speakers: int, max_set_size: int) -> int:
    """Number of speaker sets of size 0..max_set_size (7 for 3 speakers, sets of <= 2)."""
    return sum(comb(num_speakers, k) for k in range(max_set_size + 1))


@lru_cache(maxsize=None)
def _mapping(num_speakers: int, max_set_size: int) -> np.ndarray:
    rows = [
        [1.0 if s in members else 0.0 for s in range(num_speakers)]
        for size in range(max_set_size + 1)
        for members in combinations(range(num_speakers), size)
    ]
    mapping = np.array(rows, dtype=np.float32).reshape(-1, num_speakers)
    mapping.flags.writeable = False
    return mapping


def powerset_mapping(num_speakers: int, max_set_size: int) -> np.ndarray:
    """(classes, num_speakers) float32, read-only: row i is the membership of powerset class i."""
    if num_speakers < 1 or not 0 <= max_set_size <= num_speakers:
        raise ValueError(
            f"need num_speakers >= 1 and 0 <= max_set_size <= num_speakers, got {num_speakers}, {max_set_size}"
        )
    return _mapping(num_speakers, max_set_size)


def decode_powerset(scores: np.ndarray, num_speakers: int = 3, max_set_size: int = 2) -> np.ndarray:
    """Hard multilabel activity from powerset scores.

    scores: (..., classes) float, log-probabilities or logits (only the argmax matters;
        ties go to the lower class index, as torch/numpy argmax).
    Returns (..., num_speakers) float32 of 0.0/1.0, e.g. (chunks, frames, 7) -> (chunks, frames, 3).
    """
    mapping = powerset_mapping(num_speakers, max_set_size)
    scores = np.asarray(scores)
    if scores.shape[-1] != mapping.shape[0]:
        raise ValueError(
            f"expected {mapping.shape[0]} powerset classes for {num_speakers} speakers "
            f"(sets of <= {max_set_size}), got {scores.shape[-1]}"
        )
    return mapping[np.argmax(scores, axis=-1)]
