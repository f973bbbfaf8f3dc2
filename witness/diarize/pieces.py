"""Diarization from independent speech pieces: the path taken when no segmentation model
can be had (Silero VAD regions cut by ``vad.fixed_subwindows``).

Each piece is embedded whole. Pieces with at least ``min_train_seconds`` of audio are
clustered with the embedding model's AHC settings; then every piece goes to its closest
centroid, so short, unreliable pieces never form clusters of their own. A piece too short to
embed at all takes the speaker of the nearest embedded piece in time. Consecutive pieces of
one speaker that touch become one turn. One speaker per instant: no overlap can be seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from witness.diarize.assign import cosine_similarity, label_centroids
from witness.diarize.clustering import ahc_clusters_found
from witness.diarize.config import ClusteringConfig, SpeakerBounds
from witness.diarize.features import SAMPLE_RATE
from witness.vad import fixed_subwindows
from witness.transcript import Turn

MASK_HOP = 160  # samples per mask frame (10 ms)


@dataclass(frozen=True)
class PieceClusters:
    """labels: (pieces,) int64 speaker 0..K-1 of every piece; found: clusters before bounds."""

    labels: np.ndarray
    found: int


def piece_batch(signal: np.ndarray, pieces: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """The pieces' audio for an embedder: waveforms (N, longest) float32, zero-padded, and
    masks (N, ceil(longest / 160)) float32, 1 over each piece's own samples."""
    spans = [(int(round(s * SAMPLE_RATE)), int(round(e * SAMPLE_RATE))) for s, e in pieces]
    longest = max((e - s for s, e in spans), default=0)
    waveforms = np.zeros((len(spans), max(longest, 1)), dtype=np.float32)
    mask_frames = max(1, -(-longest // MASK_HOP))
    masks = np.zeros((len(spans), mask_frames), dtype=np.float32)
    for row, (s, e) in enumerate(spans):
        audio = np.asarray(signal[s:e], dtype=np.float32)
        waveforms[row, :len(audio)] = audio
        masks[row, :-(-len(audio) // MASK_HOP)] = 1.0
    return waveforms, masks


def cluster_pieces(embeddings: np.ndarray, durations: np.ndarray, config: ClusteringConfig,
                   bounds: SpeakerBounds = SpeakerBounds(), min_train_seconds: float = 1.0) -> PieceClusters:
    """Speaker of every piece.

    embeddings: (pieces, dim) float32, NaN rows for pieces too short to embed, in time order.
    durations: (pieces,) float seconds of audio per piece.
    """
    embeddings = np.asarray(embeddings, dtype=np.float32)
    n = len(embeddings)
    finite = ~np.isnan(embeddings).any(axis=1) if n else np.zeros(0, dtype=bool)
    train = finite & (np.asarray(durations) >= min_train_seconds)
    if train.sum() < 2:
        return PieceClusters(np.zeros(n, dtype=np.int64), int(n > 0))
    labels, found = ahc_clusters_found(
        embeddings[train], config.threshold, config.linkage, config.min_cluster_size, bounds)
    centroids = label_centroids(embeddings[train], labels, int(labels.max()) + 1)
    assigned = np.zeros(n, dtype=np.int64)
    assigned[finite] = np.argmax(cosine_similarity(embeddings[finite], centroids), axis=1)
    embedded = np.flatnonzero(finite)
    for row in np.flatnonzero(~finite):
        assigned[row] = assigned[embedded[np.argmin(np.abs(embedded - row))]]
    return PieceClusters(np.unique(assigned, return_inverse=True)[1].astype(np.int64), found)


def _speaker_names(labels: np.ndarray) -> dict[int, str]:
    """SPEAKER_00, SPEAKER_01... for the (pieces,) int labels of time-ordered pieces, in
    order of first appearance."""
    return {label: f"SPEAKER_{n:02d}" for n, label in enumerate(dict.fromkeys(np.asarray(labels).tolist()))}


def piece_turns(pieces: list[tuple[float, float]], labels: np.ndarray) -> tuple[Turn, ...]:
    """Turns from time-ordered pieces and their (pieces,) int labels: touching pieces of one
    speaker join; speakers are named as ``_speaker_names`` says."""
    names = _speaker_names(labels)
    turns: list[Turn] = []
    for (start, end), label in zip(pieces, np.asarray(labels).tolist()):
        name = names[label]
        if turns and turns[-1].speaker == name and start <= turns[-1].end:
            turns[-1] = Turn(turns[-1].start, max(end, turns[-1].end), name)
        else:
            turns.append(Turn(start, end, name))
    return tuple(turns)


def piece_centroids(embeddings: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Each speaker's centroid, (dim,) float32 by the label ``piece_turns`` gives it: the
    mean of its pieces' embeddings (pieces, dim) that are not NaN (speakers with none left out)."""
    embeddings = np.asarray(embeddings, dtype=np.float32)
    finite = ~np.isnan(embeddings).any(axis=1) if len(embeddings) else np.zeros(0, dtype=bool)
    labels = np.asarray(labels)
    return {name: embeddings[finite & (labels == label)].mean(axis=0)
            for label, name in _speaker_names(labels).items() if (finite & (labels == label)).any()}


def speech_centroid(embedder, signal: np.ndarray, regions: list[tuple[float, float]],
                    piece_seconds: float = 10.0, pieces_per_call: int = 16) -> np.ndarray | None:
    """(dim,) float32 mean embedding of one speaker's speech ``regions`` (s) in ``signal``
    ((n,) float32), cut into pieces of up to ``piece_seconds`` (a segmentation window's
    length, so the mean is like a cluster centroid); None when no piece could be embedded."""
    pieces = fixed_subwindows(regions, piece_seconds, embedder.min_clean_seconds)
    rows = []
    for first in range(0, len(pieces), pieces_per_call):
        rows.append(embedder.embed(*piece_batch(signal, pieces[first:first + pieces_per_call])))
    embeddings = np.concatenate(rows) if rows else np.zeros((0, 1), dtype=np.float32)
    finite = embeddings[~np.isnan(embeddings).any(axis=1)]
    return finite.mean(axis=0).astype(np.float32) if len(finite) else None
