"""``opinion.piece_ratio`` on the sample call (real CAM++): the two halves of one
person's speech (Diane before and after 15 s, Sheila before and after 21 s, in 1 s pieces) score
near 1 against each other, and any half of one person against any of the other far below."""

from __future__ import annotations

import numpy as np

from witness.diarize.embedding import CamPlusPlusEmbedder
from witness.evaluate.stm import read_stm
from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices, piece_ratio


def _pieces(voices, segments, name, start, end):
    """1 s pieces (as the second opinion cuts them) of ``name``'s sentences that start in [start, end)."""
    regions = [(s.start + k, s.start + k + 1.0) for s in segments if s.speaker == name and start <= s.start < end
               for k in range(int(s.end - s.start))]
    return np.array([v for v in voices.vectors(regions) if v is not None])


def test_halves_of_one_voice_score_near_one_and_two_people_far_below(sample_call, sample_audio, campplus_onnx):
    embedder = CamPlusPlusEmbedder(campplus_onnx, min_clean_seconds=OPINION_MIN_SECONDS)
    voices = CentroidVoices(sample_audio, embedder.embed, {})
    segments = read_stm(sample_call / "sample.stm")
    halves = {"Diane": (_pieces(voices, segments, "Diane", 0, 15), _pieces(voices, segments, "Diane", 15, 31)),
              "Sheila": (_pieces(voices, segments, "Sheila", 0, 21), _pieces(voices, segments, "Sheila", 21, 31))}
    assert all(len(half) >= 2 for pair in halves.values() for half in pair)
    same = {name: piece_ratio(*pair) for name, pair in halves.items()}
    people = piece_ratio(np.concatenate(halves["Diane"]), np.concatenate(halves["Sheila"]))
    crossed = [piece_ratio(a, b) for a in halves["Diane"] for b in halves["Sheila"]]
    assert min(same.values()) > 0.85  # measured: Diane 0.88, Sheila 1.00
    assert max(crossed + [people]) < 0.7  # measured: halves 0.46-0.68, the two whole voices 0.62
