"""A second voice where clustering heard one: two speaker models must both hear two.

On short 2-speaker calls of two similar voices, every window embedding can mix both voices and
clustering finds one speaker. Here, only when the diarization found exactly one speaker, the
long turns the split embedded one by one (CAM++, ``split.embedded_turns``; each turn's middle
3 s) are cut into the two most different groups (spherical 2-means from the least similar
pair). The speaker becomes two when each group has at least ``MIN_TURNS`` turns, the groups'
CAM++ centroids score under ``CAM_COSINE``, and the same two groups, embedded again by a
second, independent model (Resemblyzer's GE2E), score under ``GE2E_COSINE``.

Why both: on the tuning corpus each model alone splits lone voices that the other keeps whole.
Corpus v1 tune part, the files the pipeline finds one speaker in: 16 calls with 2-3 speakers
against 114 lone voices (``onevoice-tune`` and ``muted-tune``: each 2-speaker call with its
quieter party muted, the call's own turn-taking and length kept). CAM++ under 0.72 alone
would split 6 calls and 2 lone voices, GE2E under 0.89 alone 8 and 2, both together 5 and none
(``scripts/second_voice_study.py``). Most merged calls stay merged: 5 have under 4 long turns
(or a group of one), and the other 6 score like one voice's groups (CAM++ 0.70-0.82, GE2E
0.87-0.92; the 12 lone voices with two groups: 0.61-0.87 and 0.84-0.93).
Check parts (``scripts/measure_counting.py --sets check,onevoice,muted``): 2 of the 10 calls
found as one right (v1 check_005 56.4 -> 10.4% DER, v2 check_013 13.7 -> 10.9%); lone voices
heard as one: ``onevoice`` unchanged (v1 37/38, v2 15/17), ``muted`` v1 37 -> 36 of 38
(check_004: 4 long turns at 0.681 and 0.844). Dev set unchanged (17.1%).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from witness.diarize.assign import label_centroids
from witness.diarize.clustering import normalized
from witness.diarize.features import SAMPLE_RATE

CAM_COSINE = 0.72
GE2E_COSINE = 0.89
MIN_TURNS = 2

Embed = Callable[[np.ndarray], np.ndarray]  # (1, samples) float32 -> (1, dim), NaN where too short


def two_means(normed: np.ndarray, rounds: int = 30) -> np.ndarray:
    """(n,) 0/1 groups of unit rows (n >= 2, dim): spherical 2-means started from the two
    least similar rows."""
    a, b = np.unravel_index(np.argmin(normed @ normed.T), (len(normed), len(normed)))
    centres, labels = normed[[a, b]], np.full(len(normed), -1)
    for _ in range(rounds):
        new = np.argmax(normed @ centres.T, axis=1)
        if (new == labels).all() or new.min() == new.max():
            return new
        labels = new
        centres = group_centroids(normed, labels)
    return labels


def group_centroids(normed: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(2, dim) unit centroids of the rows in groups 0 and 1."""
    return normalized(label_centroids(normed, labels, 2))


def centroid_cosine(normed: np.ndarray, labels: np.ndarray) -> float:
    a, b = group_centroids(normed, labels)
    return float(a @ b)


def two_voices(pieces: list[tuple[float, float]], normed: np.ndarray, signal: np.ndarray,
               embed_again: Embed) -> np.ndarray | None:
    """(n,) 0/1 voice of each of one speaker's embedded turns, from their ``pieces`` ((start,
    end) seconds of ``signal``) and ``normed`` ((n, dim) CAM++ unit rows of them); None when the
    two models do not both hear two voices."""
    if len(pieces) < 2 * MIN_TURNS:
        return None
    labels = two_means(normed)
    if np.bincount(labels, minlength=2).min() < MIN_TURNS or centroid_cosine(normed, labels) >= CAM_COSINE:
        return None
    again = []
    for a, b in pieces:
        again.append(embed_again(signal[None, int(a * SAMPLE_RATE):int(b * SAMPLE_RATE)])[0])
    again = np.asarray(again, dtype=np.float64)
    ok = np.isfinite(again).all(axis=1) & (np.abs(again).sum(axis=1) > 0)
    if np.bincount(labels[ok], minlength=2).min() < MIN_TURNS:
        return None
    return labels if centroid_cosine(normalized(again[ok]), labels[ok]) < GE2E_COSINE else None
