"""Cutting long audio at quiet moments."""

from __future__ import annotations

import numpy as np

from witness.asr.chunks import chunk_spans

SR = 16000


def test_short_audio_is_one_piece_and_zero_means_no_chunking():
    audio = np.ones(SR * 10, np.float32)
    assert chunk_spans(audio, SR, 30) == [(0, SR * 10)]
    assert chunk_spans(np.ones(SR * 100, np.float32), SR, 0) == [(0, SR * 100)]


def test_cuts_fall_in_the_quietest_frame_and_cover_everything():
    rng = np.random.default_rng(1)
    audio = rng.standard_normal(SR * 100).astype(np.float32)
    audio[SR * 25 : SR * 25 + SR // 10] = 0.0  # a pause just before the 30 s limit
    spans = chunk_spans(audio, SR, 30)
    assert spans[0] == (0, SR * 25)
    assert all(b - a <= SR * 30 for a, b in spans)
    assert [s for s, _ in spans[1:]] == [e for _, e in spans[:-1]] and spans[-1][1] == len(audio)
