"""Reference turns to solo stretches, pieces and frame masks (hand-built turns)."""

from __future__ import annotations

import numpy as np
import pytest

from witness.evaluate.oracle import alone_mask, cut_pieces, solo_intervals
from witness.transcript import Turn

TURNS = [Turn(0.0, 4.0, "a"), Turn(3.0, 6.0, "b"), Turn(5.5, 9.0, "a"), Turn(8.0, 8.5, "a")]


def test_solo_intervals_remove_overlap_and_merge_own_turns():
    solo = solo_intervals(TURNS)
    assert solo["a"] == [(0.0, 3.0), (6.0, 9.0)]
    assert solo["b"] == [(4.0, 5.5)]
    assert solo_intervals([]) == {}


def test_cut_pieces():
    assert cut_pieces([(0.0, 7.0)], 1.5, 3.0) == [(0.0, 3.0), (3.0, 6.0)]
    assert cut_pieces([(0.0, 7.5)], 1.5, 3.0) == [(0.0, 3.0), (3.0, 6.0), (6.0, 7.5)]
    assert cut_pieces([(0.0, 1.0)], 1.5, 3.0) == []


def test_alone_mask_frame_centres():
    mask = alone_mask(TURNS, "b", start=3.0, num_frames=4, frame_step=1.0, frame_size=1.0)
    # frame centres 3.5, 4.5, 5.5, 6.5: b is alone only in [4, 5.5)
    assert mask.tolist() == [0.0, 1.0, 0.0, 0.0] and mask.dtype == np.float32
    assert alone_mask(TURNS, "nobody", 0.0, 3, 1.0, 1.0).sum() == pytest.approx(0.0)
