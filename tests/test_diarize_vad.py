"""Silero VAD fallback: speech regions on the sample call, hysteresis, padding, sub-windows."""

from __future__ import annotations

import numpy as np
import pytest

from witness.vad import (
    CHUNK, SileroVad, VadOptions, fixed_subwindows, regions_from_probabilities)
from witness.rttm import read_rttm


@pytest.fixture(scope="module")
def vad(silero_vad):
    return SileroVad(silero_vad)


def _covered(regions, start, end):
    return sum(max(0.0, min(e, end) - max(s, start)) for s, e in regions)


def test_speech_regions_match_the_human_turns(vad, sample_audio, sample_call):
    regions = vad.speech_regions(sample_audio)
    turns = read_rttm(sample_call / "sample.rttm")["sample"]
    speech = sum(_covered(regions, t.start, t.end) for t in turns)
    assert speech / sum(t.end - t.start for t in turns) > 0.9
    assert _covered(regions, 0.0, 6.4) < 0.2  # the first 6.7 s hold no speech
    assert all(a < b for a, b in regions)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(regions, regions[1:]))
    assert regions[-1][1] <= len(sample_audio) / 16000


def test_probabilities_one_per_chunk(vad, sample_audio):
    probs = vad.probabilities(sample_audio[:16000 + 100])
    assert probs.shape == (-(-16100 // CHUNK),) and probs.dtype == np.float32
    assert ((probs >= 0) & (probs <= 1)).all()


def test_a_long_call_read_in_lanes_has_the_same_speech(vad, sample_audio):
    """Ten minutes (the sample call 20 times) read as stretches side by side in the batch
    dimension: the same regions as read in one go, and a short call is read in one go."""
    call = np.tile(sample_audio, 20)
    one = vad.probabilities(call, lanes=1)
    lanes = vad.probabilities(call)
    assert lanes.shape == one.shape
    assert np.abs(lanes - one).max() < 0.05
    assert regions_from_probabilities(lanes, len(call)) == regions_from_probabilities(one, len(call))
    assert np.array_equal(vad.probabilities(sample_audio), vad.probabilities(sample_audio, lanes=1))


@pytest.mark.parametrize("workers", [2, 3])
def test_lanes_read_on_several_threads_are_the_same_bit_for_bit(silero_vad, vad, sample_audio, workers):
    """Each thread reads a share of the lanes (four here) with its own state: what one thread
    reads of them, to the bit."""
    call = np.tile(sample_audio, 6)
    one = vad.probabilities(call, lanes=4, warmup=200)
    assert np.array_equal(SileroVad(silero_vad, workers=workers).probabilities(call, lanes=4, warmup=200), one)


def test_silence_and_bad_samples(vad, sample_audio):
    assert vad.speech_regions(np.zeros(48000, dtype=np.float32)) == []
    assert vad.speech_regions(np.zeros(0, dtype=np.float32)) == []
    dirty = sample_audio[100_000:180_000].copy()
    dirty[::1000] = np.nan
    assert len(vad.speech_regions(dirty)) >= 1


def test_hysteresis_min_speech_and_padding():
    opts = VadOptions(threshold=0.5, min_speech=0.25, min_silence=0.1, pad=0.03)
    probs = np.zeros(100)
    probs[10:30] = 0.9  # 20 chunks = 0.64 s of speech
    probs[30:32] = 0.4  # between the thresholds: still speech
    probs[50:53] = 0.9  # 3 chunks = 0.096 s: too short, dropped
    regions = regions_from_probabilities(probs, 100 * CHUNK, opts)
    assert len(regions) == 1
    (start, end), = regions
    assert start == pytest.approx(10 * CHUNK / 16000 - 0.03)
    assert end == pytest.approx(32 * CHUNK / 16000 + 0.03)


def test_short_dips_do_not_split_and_close_regions_share_the_gap():
    probs = np.zeros(60)
    probs[5:20] = 0.9
    probs[20:22] = 0.0  # 2 chunks = 64 ms < 100 ms of silence: the region goes on
    probs[22:40] = 0.9
    assert len(regions_from_probabilities(probs, 60 * CHUNK)) == 1
    probs[20:25] = 0.0  # 160 ms of silence: two regions, each padded by 30 ms
    first, second = regions_from_probabilities(probs, 60 * CHUNK)
    assert first[1] <= second[0]
    assert first[1] == pytest.approx(20 * CHUNK / 16000 + 0.03)


def test_speech_running_to_the_end_closes_at_the_end():
    probs = np.full(40, 0.9)
    (region,) = regions_from_probabilities(probs, 40 * CHUNK - 100)
    assert region == (0.0, (40 * CHUNK - 100) / 16000)


def test_fixed_subwindows():
    assert fixed_subwindows([(0.0, 5.0)], length=2.0, min_length=1.0) == [(0.0, 2.0), (2.0, 4.0), (4.0, 5.0)]
    assert fixed_subwindows([(0.0, 4.5)], length=2.0, min_length=1.0) == [(0.0, 2.0), (2.0, 4.5)]
    assert fixed_subwindows([(3.0, 3.4)], length=2.0, min_length=1.0) == [(3.0, 3.4)]
    assert fixed_subwindows([], 2.0) == []
    with pytest.raises(ValueError):
        fixed_subwindows([(0.0, 1.0)], length=0.0)
