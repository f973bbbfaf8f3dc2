"""Embedding masks: overlapped frames out when enough clean frames remain (pyannote's rule)."""

from __future__ import annotations

import numpy as np

from witness.diarize.masks import embedding_masks


def test_overlap_is_masked_only_when_enough_clean_frames_remain():
    activity = np.zeros((1, 100, 3), dtype=np.float32)
    activity[0, 0:60, 0] = 1  # speaker 0: 60 frames, 20 of them overlapped by speaker 1
    activity[0, 40:70, 1] = 1  # speaker 1: 30 frames, 10 clean
    before = activity.copy()
    masks, active = embedding_masks(activity, min_clean_frames=15)
    assert masks.shape == (1, 3, 100) and masks.dtype == np.float32
    np.testing.assert_array_equal(masks[0, 0], np.r_[np.ones(40), np.zeros(60)])  # clean only
    np.testing.assert_array_equal(masks[0, 1], activity[0, :, 1])  # too few clean: everything
    assert active.tolist() == [[True, True, False]] and not masks[0, 2].any()
    np.testing.assert_array_equal(activity, before)


def test_nan_frames_count_as_silence():
    activity = np.full((2, 10, 3), np.nan, dtype=np.float32)
    masks, active = embedding_masks(activity, 0)
    assert not masks.any() and not active.any()
