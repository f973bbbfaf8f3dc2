"""Assignment of every (window, local speaker) to a global speaker, given cluster centroids.

Scores are ``1 + cosine similarity`` to each centroid (pyannote's ``2 - cosine distance``).
Constrained assignment solves one small assignment problem per window (Hungarian algorithm)
so two local speakers of one window never share a global speaker; a local speaker left
without a cluster (more active local speakers than clusters) or inactive in the window gets
``UNASSIGNED``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

UNASSIGNED = -2  # pyannote's marker for "no global speaker" in hard clusters


@dataclass(frozen=True)
class Clusters:
    """Result of clustering.

    hard: (chunks, local_speakers) int32: global speaker of each local speaker, ``UNASSIGNED``
        (-2) for inactive or unassigned local speakers.
    soft: (chunks, local_speakers, num_clusters) float64: 1 + cosine similarity of each
        embedding to each centroid (NaN for a NaN embedding).
    centroids: (num_clusters, dimension) float64, in the embedding space (not normalised).
    found: the number of speakers clustering found before the speaker bounds forced another
        (``cluster`` sets it; 0 when the centroids were given).
    """

    hard: np.ndarray
    soft: np.ndarray
    centroids: np.ndarray
    found: int = 0

    @property
    def num_clusters(self) -> int:
        return self.centroids.shape[0]


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, m) float64 cosine similarity of rows of a (n, dim) and b (m, dim); NaN rows give NaN."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return a @ b.T


def weighted_centroids(embeddings: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(clusters, dim) float64 weighted means: embeddings (n, dim), weights (n, clusters) >= 0."""
    weights = np.asarray(weights, dtype=np.float64)
    return (weights.T @ np.asarray(embeddings, dtype=np.float64)) / weights.sum(axis=0)[:, None]


def label_centroids(embeddings: np.ndarray, labels: np.ndarray, num_clusters: int) -> np.ndarray:
    """(num_clusters, dim) float64 mean of the embeddings (n, dim) with each label (n,) int."""
    one_hot = np.asarray(labels)[:, None] == np.arange(num_clusters)[None, :]
    return weighted_centroids(embeddings, one_hot)


def _constrained_argmax(scores: np.ndarray) -> np.ndarray:
    """(chunks, local) int32: per window, the assignment maximising the summed scores."""
    hard = np.full(scores.shape[:2], UNASSIGNED, dtype=np.int32)
    for c, window in enumerate(scores):
        speakers, clusters = linear_sum_assignment(window, maximize=True)
        hard[c, speakers] = clusters
    return hard


def assign(embeddings: np.ndarray, centroids: np.ndarray, active: np.ndarray, constrained: bool) -> Clusters:
    """Give every (window, local speaker) its closest centroid.

    embeddings: (chunks, local_speakers, dim) float, NaN rows allowed.
    centroids: (num_clusters, dim) float.
    active: (chunks, local_speakers) bool; inactive local speakers end up ``UNASSIGNED``
        (and, when constrained, never take a cluster from an active one).
    """
    chunks, local, dim = embeddings.shape
    soft = 1.0 + cosine_similarity(embeddings.reshape(-1, dim), centroids).reshape(chunks, local, -1)
    if not np.any(np.isfinite(soft)):
        hard = np.zeros((chunks, local), dtype=np.int32)
    elif constrained:
        floor = np.nanmin(soft) - 1.0  # below any real score
        scores = np.where(np.isnan(soft) | ~active[:, :, None], floor, soft)
        hard = _constrained_argmax(scores)
    else:
        hard = np.argmax(np.nan_to_num(soft, nan=-np.inf), axis=2).astype(np.int32)
    hard = np.where(active, hard, UNASSIGNED).astype(np.int32)
    return Clusters(hard=hard, soft=soft, centroids=np.asarray(centroids, dtype=np.float64))


def assign_by_overlap(hard: np.ndarray, unsure: np.ndarray, activity: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Hard clusters where each ``unsure`` (window, local speaker) takes the global speaker
    whose activity in the overlapping windows coincides most with its own.

    Windows overlap (10 s windows at a 1 s step share 9 s), so a local speaker that has no
    embedding of its own (too little clean speech, or its window was not embedded) is heard
    in its neighbours too, where others were assigned from their embeddings.
    hard: (chunks, local) int32 from ``assign``; unsure: (chunks, local) bool, rows to redo.
    activity: (chunks, frames, local) float32 0/1. offsets: (chunks,) int64 first frame of
    each window on a common frame grid. Returns a new (chunks, local) int32 array. An unsure
    local speaker with no overlapping evidence keeps its cluster unless another local speaker
    of its window now has it (then ``UNASSIGNED``); two never share one.
    """
    out = hard.copy()
    sure = (hard >= 0) & ~unsure
    for c in np.flatnonzero(unsure.any(axis=1)):
        votes = _overlap_votes(c, hard, sure, activity, offsets)
        taken = {int(k) for k in hard[c, sure[c]]}
        decided: dict[int, int] = {}
        for (s, k), weight in sorted(votes.items(), key=lambda item: -item[1]):
            if weight > 0 and unsure[c, s] and s not in decided and k not in taken:
                decided[s] = k
                taken.add(k)
        for s in np.flatnonzero(unsure[c]):
            if s in decided:
                out[c, s] = decided[s]
            elif hard[c, s] in taken:
                out[c, s] = UNASSIGNED
    return out


def _overlap_votes(c: int, hard: np.ndarray, sure: np.ndarray, activity: np.ndarray,
                   offsets: np.ndarray) -> dict[tuple[int, int], float]:
    """{(local speaker of window c, global speaker): frames both active} over the windows
    overlapping window ``c`` whose local speakers are surely assigned."""
    frames = activity.shape[1]
    votes: dict[tuple[int, int], float] = {}
    near = np.flatnonzero((np.abs(offsets - offsets[c]) < frames) & sure.any(axis=1))
    for n in near[near != c]:
        shift = int(offsets[n] - offsets[c])
        mine = activity[c, max(0, shift):frames + min(0, shift)]  # (overlap, local)
        theirs = activity[n, max(0, -shift):frames - max(0, shift)]
        shared = mine.T @ theirs  # (local, local): frames where both are active
        for t in np.flatnonzero(sure[n]):
            for s in np.flatnonzero(shared[:, t] > 0):
                key = (int(s), int(hard[n, t]))
                votes[key] = votes.get(key, 0.0) + float(shared[s, t])
    return votes
