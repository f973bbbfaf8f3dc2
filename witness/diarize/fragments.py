"""After the split: a speaker with little speech whose turns sound like another's joins it.

Window clustering and the turn-by-turn split over-count mostly by a fragment: a few turns of
one voice (a noisy or reverberant stretch, a codec's band) clustered apart from the rest of
it. The turn pieces the unmixing and the split embedded (``split.embedded_turns``: each long
exclusive turn's middle, no extra CAM++ runs) are a cleaner, single-turn view of each
speaker than the 10 s window embeddings. Each piece belongs to the speaker that holds at
least ``purity`` of it in the exclusive turns; each speaker's piece centroid (the unit mean of
its pieces) is scored against every other's by adaptive s-norm against the clustering's
cohort (``clustering.snorm_scores``). While more than ``floor`` speakers are left, the pair
scoring highest among those whose smaller speaker has under ``share`` of an equal share of
the speech (``share / speakers``, the speakers found before any merging: merged speakers do not
make the others look small) merges when that score is above ``score``; a speaker without an
embedded piece is never scored. The merged speaker keeps the larger one's label and centroid.
Off by default (``SplitConfig.fragment_score``: on the corpus check parts it set two
over-counted calls right but merged real voices with little speech on two others).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from witness.diarize.clustering import ScoreMerge, normalized, snorm_scores
from witness.transcript import Turn

Piece = tuple[float, float]


@dataclass(frozen=True)
class Merged:
    """turns, exclusive_turns: relabelled (a merged speaker's turns joined to the other's);
    centroids: without the merged speakers; merged: how many speakers were merged away."""

    turns: tuple[Turn, ...]
    exclusive_turns: tuple[Turn, ...]
    centroids: Mapping[str, np.ndarray]
    merged: int


def piece_owners(exclusive: tuple[Turn, ...], pieces: list[Piece], purity: float) -> list[str | None]:
    """Per piece (start, end seconds), the speaker whose exclusive turns cover at least
    ``purity`` of it, else None (the exclusive turns never overlap one another)."""
    ordered = sorted(exclusive, key=lambda t: t.start)
    starts = np.array([t.start for t in ordered])
    ends = np.array([t.end for t in ordered])
    owners: list[str | None] = []
    for a, b in pieces:
        held: dict[str, float] = {}
        for t in ordered[int(np.searchsorted(ends, a, side="right")):int(np.searchsorted(starts, b, side="left"))]:
            held[t.speaker] = held.get(t.speaker, 0.0) + min(b, t.end) - max(a, t.start)
        best = max(held, key=held.__getitem__) if held else None
        owners.append(best if best is not None and held[best] >= purity * (b - a) else None)
    return owners


def _joined(turns: tuple[Turn, ...], old: str, new: str) -> tuple[Turn, ...]:
    """``turns`` with ``old`` renamed ``new``; turns of one speaker that overlap or touch join."""
    out: list[Turn] = []
    for t in sorted((Turn(t.start, t.end, new if t.speaker == old else t.speaker) for t in turns),
                    key=lambda t: (t.speaker, t.start)):
        if out and out[-1].speaker == t.speaker and t.start <= out[-1].end:
            out[-1] = Turn(out[-1].start, max(out[-1].end, t.end), t.speaker)
        else:
            out.append(t)
    return tuple(sorted(out, key=lambda t: (t.start, t.end, t.speaker)))


def _best_pair(labels: np.ndarray, vectors: np.ndarray, speech: dict[str, float], merge: ScoreMerge,
               score: float, least: float) -> tuple[str, str] | None:
    """(larger, smaller) speaker of the pair to merge, or None: a pair of which one speaker
    has under ``least`` seconds of speech (module docstring)."""
    names = sorted(set(labels.tolist()))
    if len(names) < 2:
        return None
    centroids = normalized(np.stack([vectors[labels == name].mean(axis=0) for name in names]))
    scores = snorm_scores(centroids, merge.cohort, merge.top)
    small = np.array([speech[name] for name in names]) < least
    allowed = small[:, None] | small[None, :]
    scores = np.where(allowed, scores, -np.inf)
    np.fill_diagonal(scores, -np.inf)
    i, j = np.unravel_index(np.argmax(scores), scores.shape)
    if scores[i, j] <= score:
        return None
    a, b = names[i], names[j]
    return (a, b) if speech[a] >= speech[b] else (b, a)


def merge_fragments(turns: tuple[Turn, ...], exclusive: tuple[Turn, ...], centroids: Mapping[str, np.ndarray],
                    pieces: Mapping[Piece, np.ndarray], merge: ScoreMerge, score: float, share: float,
                    purity: float = 0.8, floor: int = 2) -> Merged:
    """Merge the fragment speakers of ``turns`` (module docstring).

    exclusive: the same speakers, one per instant; centroids by label; pieces: (start, end)
    seconds -> (dim,) embedding (NaN rows where too short), as the split keeps them;
    merge: the clustering's s-norm rule (its cohort and top); floor: never fewer speakers.
    """
    speech: dict[str, float] = {}
    for t in exclusive:
        speech[t.speaker] = speech.get(t.speaker, 0.0) + t.duration
    for t in turns:
        speech.setdefault(t.speaker, 0.0)
    kept = [p for p, v in pieces.items() if np.isfinite(v).all()]
    owners = piece_owners(exclusive, kept, purity)
    rows = [i for i, owner in enumerate(owners) if owner is not None]
    labels = np.array([owners[i] for i in rows], dtype=object)
    vectors = normalized(np.stack([pieces[kept[i]] for i in rows])) if rows else np.zeros((0, 1))
    centroids, merged = dict(centroids), 0
    least = share / len(speech) * sum(speech.values()) if speech else 0.0  # from the count found, not the count left
    while len(speech) > floor:
        pair = _best_pair(labels, vectors, speech, merge, score, least)
        if pair is None:
            break
        keep, gone = pair
        turns, exclusive = _joined(turns, gone, keep), _joined(exclusive, gone, keep)
        labels[labels == gone] = keep
        speech[keep] += speech.pop(gone)
        centroids.pop(gone, None)
        merged += 1
    return Merged(turns, exclusive, centroids, merged)
