"""The last step of the diarization: a found speaker with next to no speech of its own joins
another (``SplitConfig.min_speaker_share``).

Clustering leaves pieces of one voice as speakers of their own where their centroids score
just under the s-norm cut (narrowband 2-speaker calls of corpus v2: extras of 1-24 s, mostly
one person's speech, ``scripts/stage_confusion.py --trace``). A found speaker whose exclusive
speech is under ``min_share`` of the call's goes to the speaker, of those at or above it, whose
centroid is the most similar (cosine; the one who talks most when either has none); one under
the larger ``SplitConfig.near_share`` goes to the speaker whose centroid's s-norm with its own is
the best, when that score is near the merge's cut (``NearVoice``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from witness.diarize.clustering import ScoreMerge, normalized, snorm_scores
from witness.diarize.split import joined
from witness.transcript import Turn, speech_seconds


def speech_shares(exclusive: tuple[Turn, ...]) -> dict[str, float]:
    """{speaker: share of the exclusive speech} of ``exclusive`` turns."""
    seconds = speech_seconds(exclusive)
    total = sum(seconds.values())
    return {s: x / total if total > 0 else 0.0 for s, x in seconds.items()}


def small_speaker_joins(exclusive: tuple[Turn, ...], centroids: Mapping[str, np.ndarray], min_share: float,
                        min_cosine: float = -1.0, fewest: int = 1, speakers: Iterable[str] = (),
                        near: NearVoice | None = None) -> dict[str, str]:
    """{speaker: the speaker it joins} for each speaker of ``exclusive`` (and of ``speakers``,
    those with no lone speech at 0) with under ``min_share`` of the speech whose closest centroid
    scores at least ``min_cosine``, or under ``near.share`` whose best s-norm with one of those
    at or above that share is at least ``near.floor`` (smallest first, while more than ``fewest``
    speakers are left)."""
    shares = {s: 0.0 for s in speakers} | speech_shares(exclusive)
    small = sorted((s for s in shares if shares[s] < max(min_share, near.share if near else 0.0)),
                   key=shares.__getitem__)
    joins = {}
    for speaker in small:
        if len(shares) - len(joins) <= fewest:
            break
        if shares[speaker] < min_share:
            to, cosine = _closest(speaker, [s for s in shares if shares[s] >= min_share], centroids, shares)
            if cosine >= min_cosine:
                joins[speaker] = to
                continue
        if near is not None and shares[speaker] < near.share:
            to = near.closest(speaker, [s for s in shares if shares[s] >= near.share], centroids)
            if to is not None:
                joins[speaker] = to
    return joins


@dataclass(frozen=True)
class NearVoice:
    """A found speaker with under ``share`` of the speech joins the speaker whose centroid scores
    best with its own by the s-norm merge's score (``clustering.snorm_scores`` against ``merge``'s
    cohort) when that score is at least ``merge.threshold - margin``: one voice the merge left in
    two pieces, its best pair just under the cut (``SplitConfig.near_share``)."""

    share: float
    margin: float
    merge: ScoreMerge

    @property
    def floor(self) -> float:
        return self.merge.threshold - self.margin

    def closest(self, speaker: str, kept: list[str], centroids: Mapping[str, np.ndarray]) -> str | None:
        """The speaker of ``kept`` scoring best with ``speaker`` if that score reaches ``floor``."""
        usable = [s for s in kept if _embedded(centroids.get(s))]
        if not usable or not _embedded(centroids.get(speaker)):
            return None
        rows = normalized(np.stack([centroids[speaker]] + [centroids[s] for s in usable]).astype(np.float64))
        scores = snorm_scores(rows, self.merge.cohort, self.merge.top)[0, 1:]
        best = int(np.argmax(scores))
        return usable[best] if scores[best] >= self.floor else None


def _closest(speaker: str, kept: list[str], centroids: Mapping[str, np.ndarray],
             shares: dict[str, float]) -> tuple[str, float]:
    """The speaker of ``kept`` whose centroid is the most similar to ``speaker``'s and that
    cosine; the one with the most speech (cosine 1) where a centroid is missing."""
    usable = [s for s in kept if _embedded(centroids.get(s))]
    if not usable or not _embedded(centroids.get(speaker)):
        return max(kept, key=shares.__getitem__), 1.0
    scores = normalized(np.stack([centroids[s] for s in usable])) @ normalized(centroids[speaker])
    return usable[int(np.argmax(scores))], float(scores.max())


def _embedded(centroid: np.ndarray | None) -> bool:
    return centroid is not None and bool(np.isfinite(centroid).all() and np.any(centroid))


def joined_turns(turns: tuple[Turn, ...], joins: Mapping[str, str]) -> tuple[Turn, ...]:
    """``turns`` with each speaker of ``joins`` renamed, touching or overlapping turns of one
    speaker made one, sorted by start."""
    renamed = joined(Turn(t.start, t.end, joins.get(t.speaker, t.speaker)) for t in turns)
    return tuple(sorted(renamed, key=lambda t: (t.start, t.end, t.speaker)))
