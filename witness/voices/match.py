"""Diarized speakers named by enrolled voices.

Each speaker's cluster centroid is scored against each voice (cosine similarity with the
voice's mean print); the pairs are assigned one to one (Hungarian algorithm, highest total
score), so two speakers never take the same name, and a pair below the threshold stays
SPEAKER_NN. The threshold is calibrated on the dev set (scripts/calibrate_voices.py): the
lowest at which at most 1% of different-speaker pairs are accepted (one 6 s print against
the centroid of 12 s of another speaker: 0.89% of 672 pairs at 0.60). It rejects 35% of
the 126 same-speaker pairs, nearly all of them across recordings (78% of 55 such pairs:
telephone band or noise against wideband): a name is given only when sure. A voice of two
prints scored by their mean rejects 18% at 0.15% false accepts, the better single print
16% at 0.73%: the mean is what is scored, and enrolling a second recording helps most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from witness.diarize.assign import cosine_similarity
from witness.voices.store import Voice

THRESHOLD = 0.60  # cosine similarity; see the module docstring


@dataclass(frozen=True)
class VoiceMatch:
    """Speaker ``speaker`` (SPEAKER_NN) is the enrolled voice ``name``, with ``score``."""

    speaker: str
    name: str
    score: float


def match_voices(centroids: Mapping[str, np.ndarray], voices: Sequence[Voice],
                 threshold: float = THRESHOLD) -> tuple[VoiceMatch, ...]:
    """The speakers (label -> (dim,) centroid) that are enrolled voices: one to one, best
    total score first, each at or above ``threshold``; in label order."""
    labels = sorted(centroids)
    if not labels or not voices:
        return ()
    scores = cosine_similarity(np.stack([centroids[label] for label in labels]), np.stack([v.vector() for v in voices]))
    rows, cols = linear_sum_assignment(scores, maximize=True)
    return tuple(VoiceMatch(labels[r], voices[c].name, float(scores[r, c]))
                 for r, c in zip(rows, cols) if scores[r, c] >= threshold)


def matches_info(matches: Sequence[VoiceMatch], voices: Sequence[Voice], threshold: float) -> dict[str, Any]:
    """What a transcript's JSON records (``engines.diarization.voices``)."""
    return {
        "threshold": threshold,
        "compared": [v.name for v in voices],
        "matches": [{"name": m.name, "replaced": m.speaker, "score": round(m.score, 4)} for m in matches],
    }
