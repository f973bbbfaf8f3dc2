"""Clustering of (window, local speaker) embeddings into global speakers.

1. ``filter_embeddings``: only embeddings whose local speaker talks alone in enough frames
   of its window (and that are not NaN) take part in clustering.
2. AHC (``ahc``): centroid linkage on L2-normalised embeddings, cut at a distance threshold;
   clusters smaller than ``min_cluster_size`` join the closest large one (``ahc_clusters``),
   unless, where the s-norm merge below finds 2 to ``small_speakers`` speakers from there,
   they score under its cut less ``small_apart`` with every large one (another voice:
   ``ahc_start``).
   With method "vbx" (pyannote community-1) the AHC clusters instead start VBx on PLDA
   features (``vbx_clusters``; a PLDA trained on the tuning corpus is shipped), whose
   surviving speakers are the count; steps 3 and the --num-speakers bounds below are then
   the fallback when the user's bounds break that count.
3. The count (CAM++): AHC over-clusters, then ``merge_by_snorm`` joins the pair of clusters
   whose centroids score highest by adaptive s-norm against a cohort of other speakers'
   embeddings shipped in witness/diarize/data (so the cut moves with the call's band and
   noise), while that score is above ``snorm_threshold``. A cannot-link from segmentation:
   two local speakers of one window are two people, so a pair of clusters holding two local
   speakers of one window scores ``cannot_link_penalty`` lower. With a second model's rows for
   the same embeddings (``SecondScore``: GE2E's, on narrowband audio), each pair's score is
   CAM++'s s-norm plus ``second_weight`` times that model's s-norm against its own cohort (off
   in every preset: measured and dropped, ``config.CAMPPLUS_CLUSTERING``).
4. ``--num-speakers``/``--min-speakers``/``--max-speakers`` bounds, then every (window, local
   speaker), filtered out or not, goes to its closest centroid (``assign``).
Nothing here modifies the caller's arrays.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

import fastcluster
import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from witness.diarize.assign import Clusters, assign, assign_by_overlap, label_centroids
from witness.diarize.config import ClusteringConfig, SpeakerBounds
from witness.diarize.vbx import load_plda, vbx
from witness.diarize.windows import Segmentations

log = logging.getLogger(__name__)

EUCLIDEAN_ONLY = ("centroid", "median", "ward")  # linkages defined for Euclidean distance


@dataclass(frozen=True)
class TrainingSet:
    """embeddings (n, dim) float32 (a copy): those entering clustering; chunk_idx,
    speaker_idx (n,) int64: the (window, local speaker) each came from."""

    embeddings: np.ndarray
    chunk_idx: np.ndarray
    speaker_idx: np.ndarray


@dataclass(frozen=True)
class SecondScore:
    """A second speaker model's s-norm added to the merge's: its rows (n, dim2) for the same
    rows the merge clusters (unit, or zero where none could be taken), its cohort (m, dim2)
    unit rows and the weight of its score."""

    rows: np.ndarray
    cohort: np.ndarray
    weight: float


@dataclass(frozen=True)
class ScoreMerge:
    """Merging after AHC (``merge_by_snorm``): cohort (m, dim) float64 unit rows, the
    ``top`` cohort scores that normalise each centroid, the s-norm score to merge above,
    what a pair of clusters holding two local speakers of one window loses from its score,
    and a second model's score added (``SecondScore``, None: CAM++'s alone)."""

    cohort: np.ndarray
    top: int
    threshold: float
    penalty: float = 0.0
    second: SecondScore | None = None


@lru_cache(maxsize=4)
def load_cohort(name: str) -> np.ndarray:
    """(m, dim) float64 unit rows of the cohort ``name`` shipped in witness/diarize/data."""
    with resources.files("witness.diarize").joinpath("data", name).open("rb") as f:
        return normalized(np.load(f))


def score_merge(config: ClusteringConfig, second: np.ndarray | None = None) -> ScoreMerge | None:
    """The s-norm merge ``config`` asks for (None when it names no cohort); with ``second``
    (the second model's rows, as ``SecondScore.rows``) and a ``config.second_weight`` above 0,
    that model's score added and the merge cut at ``config.second_snorm_threshold``."""
    if not config.cohort:
        return None
    if second is None or config.second_weight <= 0:
        return ScoreMerge(load_cohort(config.cohort), config.cohort_top, config.snorm_threshold,
                          config.cannot_link_penalty)
    cut = config.snorm_threshold if config.second_snorm_threshold is None else config.second_snorm_threshold
    return ScoreMerge(load_cohort(config.cohort), config.cohort_top, cut, config.cannot_link_penalty,
                      SecondScore(second, load_cohort(config.second_cohort), config.second_weight))


def second_rows(second: np.ndarray, train: TrainingSet) -> np.ndarray:
    """(n, dim2) float64 rows of ``second`` ((chunks, local speakers, dim2), NaN where not
    embedded) for ``train``'s rows: unit, or zero where the second model had none."""
    rows = np.nan_to_num(np.asarray(second, dtype=np.float64)[train.chunk_idx, train.speaker_idx])
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def filter_embeddings(
    embeddings: np.ndarray, segmentations: Segmentations, min_active_ratio: float = 0.2
) -> TrainingSet:
    """Keep embeddings (chunks, local, dim) whose local speaker is the only active speaker in
    at least ``min_active_ratio`` of the window's frames and that contain no NaN."""
    data = segmentations.data  # (chunks, frames, local) float32: no full-size temporaries below
    if np.isnan(data).any():
        data = np.nan_to_num(data, nan=0.0)
    alone = (np.sum(data, axis=2) == 1).astype(np.float32)  # (chunks, frames)
    clean_frames = np.einsum("cfs,cf->cs", data, alone)  # (chunks, local)
    enough = clean_frames >= min_active_ratio * segmentations.frames_per_chunk
    valid = ~np.any(np.isnan(embeddings), axis=2)
    chunk_idx, speaker_idx = np.nonzero(enough & valid)
    return TrainingSet(np.asarray(embeddings, dtype=np.float32)[chunk_idx, speaker_idx], chunk_idx, speaker_idx)


def normalized(embeddings: np.ndarray) -> np.ndarray:
    """float64 copy of embeddings, (n, dim) or (dim,), with unit-norm rows."""
    x = np.asarray(embeddings, dtype=np.float64)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _dendrogram(normed: np.ndarray, method: str) -> np.ndarray:
    """scipy linkage matrix (n - 1, 4) of unit-norm embeddings (n, dim).

    Centroid, median and ward linkage go through ``fastcluster.linkage_vector``: the same
    dendrogram as scipy's without the (n²/2) distance matrix (21,600 embeddings of a 3-hour
    call took 3.7 GB in scipy). The others (average, complete, single: on cosine distance)
    need that matrix.
    """
    if method in EUCLIDEAN_ONLY:
        return fastcluster.linkage_vector(normed, method=method, metric="euclidean")
    return linkage(normed, method=method, metric="cosine")


def _renumber(labels: np.ndarray) -> np.ndarray:
    """(n,) int64 labels renumbered 0..K-1 in increasing order of the old labels."""
    return np.unique(labels, return_inverse=True)[1].astype(np.int64)


def ahc(embeddings: np.ndarray, threshold: float, method: str = "centroid") -> np.ndarray:
    """(n,) int64 clusters 0..K-1 of embeddings (n, dim): merge until the closest pair of
    clusters is farther apart than ``threshold``."""
    if len(embeddings) < 2:
        return np.zeros(len(embeddings), dtype=np.int64)
    return _renumber(fcluster(_dendrogram(normalized(embeddings), method), threshold, criterion="distance"))


def _large_counts_after_merges(dendrogram: np.ndarray, min_size: int) -> np.ndarray:
    """(n - 1,) int: number of clusters of >= min_size items after merges 0..i."""
    n = len(dendrogram) + 1
    sizes = np.concatenate([np.ones(n), dendrogram[:, 3]])
    large = int(min_size <= 1) * n
    counts = np.empty(n - 1, dtype=np.int64)
    for i, (a, b, _, size) in enumerate(dendrogram):
        large += int(size >= min_size) - int(sizes[int(a)] >= min_size) - int(sizes[int(b)] >= min_size)
        counts[i] = large
    return counts


def _cut_for_count(dendrogram: np.ndarray, threshold: float, target: int, min_size: int) -> np.ndarray:
    """(n,) labels from the dendrogram cut whose number of large clusters is closest to
    ``target``, searching cuts in order of their merge distance from ``threshold`` (pyannote)."""
    counts = _large_counts_after_merges(dendrogram, min_size)
    best, best_count = len(dendrogram) - 1, 1  # every item merged into one cluster
    for i in np.argsort(np.abs(dendrogram[:, 2] - threshold)):
        if dendrogram[i, 3] < min_size:
            continue  # a merge into a small cluster cannot change the count
        if abs(counts[i] - target) < abs(best_count - target):
            best, best_count = i, counts[i]
        if counts[i] == target:
            break
    if best_count != target:  # the pipeline tells the user against what they asked for (the target may be capped)
        log.debug("no cut of the dendrogram gives %d large clusters: cut at %d", target, best_count)
    ranked = dendrogram.copy()
    ranked[:, 2] = np.arange(len(dendrogram))  # cut after merge `best`, whatever its distance
    return fcluster(ranked, best, criterion="distance")


def _merge_small(normed: np.ndarray, labels: np.ndarray, min_size: int, keep: ScoreMerge | None = None
                 ) -> np.ndarray:
    """Move clusters of < min_size items to the large cluster with the closest centroid; with
    ``keep``, a small cluster whose s-norm score (``snorm_scores``) with every large one is
    under ``keep.threshold`` stays a cluster of its own."""
    labels = _renumber(labels)
    sizes = np.bincount(labels)
    large, small = np.flatnonzero(sizes >= min_size), np.flatnonzero(sizes < min_size)
    if len(large) == 0:
        return np.zeros(len(labels), dtype=np.int64)
    if len(small) == 0:
        return labels
    centroids = normalized(label_centroids(normed, labels, len(sizes)))
    if keep is not None:
        apart = snorm_scores(centroids, keep.cohort, keep.top)[np.ix_(small, large)].max(axis=1) < keep.threshold
        large, small = np.concatenate([large, small[apart]]), small[~apart]
        if len(small) == 0:
            return labels
    nearest = large[np.argmax(centroids[small] @ centroids[large].T, axis=1)]  # cosine: closest
    destination = np.arange(len(sizes))
    destination[small] = nearest
    return _renumber(destination[labels])


def ahc_clusters(
    embeddings: np.ndarray,
    threshold: float,
    method: str = "centroid",
    min_cluster_size: int = 1,
    bounds: SpeakerBounds = SpeakerBounds(),
) -> np.ndarray:
    """(n,) int64 clusters 0..K-1 of embeddings (n, dim) by AHC alone (pyannote 3.1).

    The dendrogram is cut at ``threshold``; if the number of large clusters (>= the minimum
    size, shrunk to 10% of n on short files) breaks ``bounds``, the cut with the right count
    closest to the threshold is used instead; small clusters then join the closest large one.
    """
    return ahc_clusters_found(embeddings, threshold, method, min_cluster_size, bounds)[0]


def ahc_start(normed: np.ndarray, threshold: float, method: str, min_cluster_size: int,
              merge: ScoreMerge | None = None, rivals: np.ndarray | None = None,
              small_apart: float | None = None, small_speakers: int = 4) -> tuple[np.ndarray, int, np.ndarray]:
    """The AHC cut of unit rows ``normed`` (n >= 2) the s-norm ``merge`` starts from: its
    dendrogram, the smallest cluster kept (``min_cluster_size``, at most a tenth of the rows) and
    the labels, the smaller clusters merged into their nearest (``_merge_small``), but where
    ``merge`` from there finds 2 to ``small_speakers`` speakers, each scoring (CAM++'s s-norm)
    under its cut less ``small_apart`` with every large one kept: another voice."""
    min_size = min(min_cluster_size, max(1, round(0.1 * len(normed))))
    dendrogram = _dendrogram(normed, method)
    cut = fcluster(dendrogram, threshold, criterion="distance")
    labels = _merge_small(normed, cut, min_size)
    if (merge is not None and small_apart is not None
            and 2 <= merge_by_snorm(normed, labels, merge, rivals=rivals).max() + 1 <= small_speakers):
        labels = _merge_small(normed, cut, min_size, replace(merge, threshold=merge.threshold - small_apart))
    return dendrogram, min_size, labels


def ahc_clusters_found(
    embeddings: np.ndarray,
    threshold: float,
    method: str = "centroid",
    min_cluster_size: int = 1,
    bounds: SpeakerBounds = SpeakerBounds(),
    merge: ScoreMerge | None = None,
    rivals: np.ndarray | None = None,
    small_apart: float | None = None,
    small_speakers: int = 4,
) -> tuple[np.ndarray, int]:
    """``ahc_clusters`` and the number of large clusters the threshold gave before ``bounds``;
    ``rivals`` ((p, 2) indices of embeddings of two local speakers of one window) feed the
    merge's cannot-link; ``small_apart``, ``small_speakers``: which small clusters the merge
    starts from (``ahc_start``)."""
    n = len(embeddings)
    if n < 2:
        return np.zeros(n, dtype=np.int64), n
    normed = normalized(embeddings)
    dendrogram, min_size, labels = ahc_start(normed, threshold, method, min_cluster_size, merge, rivals,
                                             small_apart, small_speakers)
    if merge is not None:
        labels = merge_by_snorm(normed, labels, merge, rivals=rivals)
    num_large = int(labels.max()) + 1
    target = bounds.within(n).forced_count(num_large)
    if target is not None and target < num_large and merge is not None:
        labels = merge_by_snorm(normed, labels, replace(merge, threshold=-np.inf), floor=target, rivals=rivals)
    elif target is not None and num_large != target:
        labels = _merge_small(normed, _cut_for_count(dendrogram, threshold, target, min_size), min_size)
    return labels, num_large


def snorm_scores(centroids: np.ndarray, cohort: np.ndarray, top: int) -> np.ndarray:
    """(k, k) adaptive s-norm of the cosine scores between unit ``centroids`` (k, dim): each
    score standardised by the mean and deviation of the ``top`` highest scores of either
    centroid against the unit ``cohort`` (m, dim), and the two averaged."""
    raw = centroids @ centroids.T
    against = np.sort(centroids @ cohort.T, axis=1)[:, -top:]
    mean, spread = against.mean(axis=1), against.std(axis=1) + 1e-6
    return 0.5 * ((raw - mean[:, None]) / spread[:, None] + (raw - mean[None, :]) / spread[None, :])


def rival_pairs(train: TrainingSet) -> np.ndarray:
    """(p, 2) int64 indices of training embeddings of two different local speakers of one
    window: segmentation heard two people there, so they are not one speaker."""
    order = np.argsort(train.chunk_idx, kind="stable")  # one row per (window, local speaker)
    chunks = train.chunk_idx[order]
    most = int(np.bincount(chunks).max()) if len(chunks) else 0  # rows of the fullest window
    pairs = [np.stack([order[:-gap], order[gap:]], axis=1)[chunks[:-gap] == chunks[gap:]] for gap in range(1, most)]
    return np.concatenate(pairs).astype(np.int64) if pairs else np.zeros((0, 2), dtype=np.int64)


def _linked(labels: np.ndarray, rivals: np.ndarray | None, k: int) -> np.ndarray:
    """(k, k) bool: clusters holding the two sides of some rival pair."""
    linked = np.zeros((k, k), dtype=bool)
    if rivals is not None and len(rivals):
        linked[labels[rivals[:, 0]], labels[rivals[:, 1]]] = True
    return linked | linked.T


def merge_by_snorm(normed: np.ndarray, labels: np.ndarray, merge: ScoreMerge, floor: int = 1,
                   rivals: np.ndarray | None = None) -> np.ndarray:
    """Merge the two clusters whose centroids score highest (``snorm_scores``, less
    ``merge.penalty`` for clusters holding two sides of a ``rivals`` pair) while that score is
    above ``merge.threshold`` and more than ``floor`` clusters are left."""
    labels = _renumber(labels)
    while labels.max() + 1 > floor:
        a, b, score, _ = next_merge(normed, labels, merge, rivals)
        if score < merge.threshold:
            break
        labels = joined(labels, a, b)
    return labels


def next_merge(normed: np.ndarray, labels: np.ndarray, merge: ScoreMerge,
               rivals: np.ndarray | None = None) -> tuple[int, int, float, bool]:
    """The two clusters (0..k-1 ``labels``, k >= 2) the s-norm merge would join next, their
    score (less the cannot-link penalty) and whether they hold two sides of a ``rivals`` pair."""
    k = int(labels.max()) + 1
    scores = snorm_scores(normalized(label_centroids(normed, labels, k)), merge.cohort, merge.top)
    if merge.second is not None:
        centroids = label_centroids(merge.second.rows, labels, k)
        centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
        scores += merge.second.weight * snorm_scores(centroids, merge.second.cohort, merge.top)
    linked = _linked(labels, rivals, k)
    scores -= merge.penalty * linked
    np.fill_diagonal(scores, -np.inf)
    a, b = np.unravel_index(np.argmax(scores), scores.shape)
    return int(a), int(b), float(scores[a, b]), bool(linked[a, b])


def joined(labels: np.ndarray, a: int, b: int) -> np.ndarray:
    """``labels`` with clusters ``a`` and ``b`` one, renumbered 0..k-2."""
    return _renumber(np.where(labels == max(a, b), min(a, b), labels))


def _without(train: TrainingSet, exclude: np.ndarray | None) -> TrainingSet:
    """``train`` less the (window, local speaker) rows ``exclude`` marks, unless < 2 would be left."""
    if exclude is None:
        return train
    keep = ~exclude[train.chunk_idx, train.speaker_idx]
    if keep.sum() < 2:
        return train
    return TrainingSet(train.embeddings[keep], train.chunk_idx[keep], train.speaker_idx[keep])


def _fallback_centroid(embeddings: np.ndarray, train: TrainingSet, active: np.ndarray) -> np.ndarray:
    """(1, dim) float64: mean of the training embeddings, or of any valid active one."""
    pool = train.embeddings if len(train.embeddings) else np.asarray(embeddings)[active]
    pool = pool[~np.any(np.isnan(pool), axis=1)]
    return pool.mean(axis=0, keepdims=True) if len(pool) else np.zeros((1, embeddings.shape[2]))


def cluster(
    embeddings: np.ndarray,
    segmentations: Segmentations,
    config: ClusteringConfig = ClusteringConfig(),
    bounds: SpeakerBounds = SpeakerBounds(),
    exclude: np.ndarray | None = None,
    second: np.ndarray | None = None,
) -> Clusters:
    """Global speaker of every (window, local speaker).

    embeddings: (chunks, local_speakers, dim) float, NaN rows for skipped local speakers.
    segmentations: the binarised per-window activity the embeddings were taken from.
    exclude: (chunks, local_speakers) bool, embeddings kept out of clustering (they are still
    assigned), unless fewer than two would be left.
    second: (chunks, local_speakers, dim2) the second model's embeddings of (at least) the
    clustered ones, NaN elsewhere, for the s-norm merge when ``config`` adds its score.
    The result's ``found`` is the number of speakers before ``bounds`` forced a count.
    """
    active = segmentations.active_local_speakers()
    train = _without(filter_embeddings(embeddings, segmentations, config.min_active_ratio), exclude)
    n = len(train.embeddings)
    if n < 2 or min(n, bounds.high) < 2:  # one speaker, as pyannote: no clustering
        fallback = _fallback_centroid(embeddings, train, active)
        found = int(active.any()) if n < 2 else _labels_found(train, config, SpeakerBounds(), second)[1]
        return replace(assign(embeddings, fallback, active, constrained=False), found=found)
    labels, found = _labels_found(train, config, bounds, second)
    centroids = label_centroids(train.embeddings, labels, int(labels.max()) + 1)
    clusters = assign(embeddings, centroids, active, config.constrained_assignment)
    return replace(clusters, hard=_fill_unembedded(clusters.hard, embeddings, segmentations, active), found=found)


def _labels_found(train: TrainingSet, config: ClusteringConfig, bounds: SpeakerBounds,
                  second: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(n,) int64 clusters 0..K-1 of the training embeddings (n >= 2) within ``bounds``, and
    the number of speakers found before the bounds: by VBx when ``config`` asks for it (method
    "vbx") and its count keeps the bounds, else by AHC and the s-norm merge (``ahc_clusters_found``)."""
    if config.method == "ahc":
        return _ahc_labels_found(train, config, bounds, second)
    labels = vbx_clusters(train.embeddings, config)
    found = int(labels.max()) + 1
    if bounds.within(len(labels)).forced_count(found) is None:
        return labels, found
    return _ahc_labels_found(train, config, bounds, second)[0], found


def _ahc_labels_found(train: TrainingSet, config: ClusteringConfig, bounds: SpeakerBounds,
                      second: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """``ahc_clusters_found`` with ``config``'s AHC cut, s-norm merge (``second``'s score added
    when ``config`` asks for it) and cannot-link."""
    merge = score_merge(config, None if second is None else second_rows(second, train))
    return ahc_clusters_found(train.embeddings, config.threshold, config.linkage, config.min_cluster_size, bounds,
                              merge, rival_pairs(train), config.small_apart, config.small_speakers)


def vbx_clusters(embeddings: np.ndarray, config: ClusteringConfig) -> np.ndarray:
    """(n,) int64 clusters 0..K-1 of embeddings (n >= 2, dim): AHC cut at ``config.vbx_threshold``,
    into at least ``config.vbx_init_clusters`` (or n), starts VBx on ``config.plda``'s
    features; each embedding goes to its most likely speaker of those VBx keeps (prior above 1e-7)."""
    plda = load_plda(config.plda)
    dendrogram = _dendrogram(normalized(embeddings), config.linkage)
    cut = int(fcluster(dendrogram, config.vbx_threshold, criterion="distance").max())
    init = fcluster(dendrogram, min(len(embeddings), max(cut, config.vbx_init_clusters)), criterion="maxclust")
    posterior = vbx(plda.features(embeddings), plda.phi, _renumber(init), config.fa, config.fb)
    kept = posterior.responsibility[:, posterior.prior > 1e-7]
    return _renumber(np.argmax(kept, axis=1))


def _fill_unembedded(hard: np.ndarray, embeddings: np.ndarray, segmentations: Segmentations,
                     active: np.ndarray) -> np.ndarray:
    """Active local speakers without an embedding (NaN) get the speaker their neighbours'
    overlapping frames were given (``assign_by_overlap``) instead of an arbitrary one."""
    unsure = active & np.isnan(embeddings).any(axis=2)
    if not unsure.any():
        return hard
    window = segmentations.window
    starts = window.start + window.step * np.arange(len(hard))
    offsets = np.round(starts / segmentations.frame_step).astype(np.int64)
    return assign_by_overlap(hard, unsure, np.nan_to_num(segmentations.data), offsets)
