"""Speaker count, reconstruction and turns equal pyannote's on its own arrays."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.diarize_data import PREFIXES, load, segmentations
from witness.diarize.aggregate import speaker_count
from witness.diarize.clustering import cluster
from witness.diarize.reconstruct import binarize_top_speakers, reconstruct
from witness.diarize.windows import Segmentations, SlidingWindow, SpeakerCount
from witness.evaluate import diarization_error
from witness.rttm import read_rttm
from witness.transcript import Turn


def _hard_clusters(fixtures_dir, prefix):
    """pyannote's hard clusters where the fixtures have them, else our own clustering."""
    if prefix == "pipeline":
        return load(fixtures_dir, "pipeline_hard_clusters.npy")
    seg = segmentations(fixtures_dir, prefix)
    return cluster(load(fixtures_dir, f"{prefix}_embeddings_data.npy"), seg).hard


def _reference(fixtures_dir, prefix) -> list[Turn]:
    (turns,) = read_rttm(fixtures_dir / f"{prefix}_expected.rttm").values()
    return turns


@pytest.mark.parametrize("prefix", PREFIXES)
def test_speaker_count_equals_pyannote(fixtures_dir, prefix):
    seg = segmentations(fixtures_dir, prefix)
    before = seg.data.copy()
    count = speaker_count(seg)
    expected = load(fixtures_dir, f"{prefix}_speaker_counting_data.npy")  # (frames, 1) uint8
    assert count.data.dtype == np.uint8
    np.testing.assert_array_equal(count.data, expected[:, 0])
    assert count.frames == SlidingWindow(0.0, 0.0619375, 0.016875)
    np.testing.assert_array_equal(seg.data, before)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_discrete_diarization_equals_pyannote(fixtures_dir, prefix):
    seg = segmentations(fixtures_dir, prefix)
    hard = _hard_clusters(fixtures_dir, prefix)
    hard_before = hard.copy()
    result = reconstruct(seg, hard, speaker_count(seg))
    expected = load(fixtures_dir, f"{prefix}_discrete_diarization_data.npy")  # (frames, speakers)
    assert result.discrete.shape == expected.shape
    assert any(  # columns are our cluster numbers: equal up to renaming the speakers
        np.array_equal(result.discrete[:, list(order)], expected)
        for order in itertools.permutations(range(expected.shape[1]))
    )
    np.testing.assert_array_equal(hard, hard_before)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_turns_equal_pyannote_and_der_is_under_one_percent(fixtures_dir, prefix):
    seg = segmentations(fixtures_dir, prefix)
    result = reconstruct(seg, _hard_clusters(fixtures_dir, prefix), speaker_count(seg))
    reference = _reference(fixtures_dir, prefix)
    assert diarization_error(reference, result.turns, collar=0.0, skip_overlap=False).der < 0.01
    # stronger: the same boundaries (the RTTM keeps 6 decimals) and the same speaker grouping
    assert len(result.turns) == len(reference)
    for ours, theirs in zip(result.turns, reference):
        assert ours.start == pytest.approx(theirs.start, abs=1e-6)
        assert ours.end == pytest.approx(theirs.end, abs=1e-6)
    assert len({(o.speaker, t.speaker) for o, t in zip(result.turns, reference)}) == result.num_speakers


@pytest.mark.parametrize("prefix", PREFIXES)
def test_exclusive_turns_keep_one_speaker_per_instant(fixtures_dir, prefix):
    seg = segmentations(fixtures_dir, prefix)
    result = reconstruct(seg, _hard_clusters(fixtures_dir, prefix), speaker_count(seg))
    exclusive = result.exclusive_turns
    assert all(a.end <= b.start + 1e-9 for a, b in zip(exclusive, exclusive[1:]))
    for turn in exclusive:  # inside a regular turn of the same speaker
        assert any(r.speaker == turn.speaker and r.start <= turn.start and turn.end <= r.end for r in result.turns)
    assert sum(t.duration for t in exclusive) <= sum(t.duration for t in result.turns)


def test_overlap_goes_to_the_speaker_with_more_activity():
    window = SlidingWindow(0.0, 10.0, 1.0)
    data = np.zeros((2, 100, 2), dtype=np.float32)
    data[0, 10:60, 0] = 1  # speaker A, seen by both windows (output frames 10-59)
    data[1, 0:50, 0] = 1  # (the second window starts 1 s = 10 frames later)
    data[0, 40:90, 1] = 1  # speaker B, seen by the first window only
    seg = Segmentations(data, window, frame_step=0.1, frame_duration=0.1)
    hard = np.array([[0, 1], [0, -2]])
    count = SpeakerCount(np.full(seg.num_frames, 2, dtype=np.uint8), seg.frames)
    result = reconstruct(seg, hard, count)
    assert result.labels == ("SPEAKER_00", "SPEAKER_01")
    a, b = result.exclusive_turns[0], result.exclusive_turns[1]
    assert (a.speaker, b.speaker) == ("SPEAKER_00", "SPEAKER_01")
    assert a.end == pytest.approx(b.start)
    assert b.start == pytest.approx(seg.frames.middle_of(60))  # B only once A stops


def test_labels_follow_first_appearance():
    window = SlidingWindow(0.0, 10.0, 1.0)
    data = np.zeros((1, 100, 3), dtype=np.float32)
    data[0, 50:60, 0] = 1
    data[0, 10:20, 2] = 1
    data[0, 23:30, 2] = 1  # after a 0.3 s gap, the same speaker again
    seg = Segmentations(data, window, frame_step=0.1, frame_duration=0.1)
    count = speaker_count(seg)
    hard = np.array([[0, -2, 1]])
    plain = reconstruct(seg, hard, count)
    assert plain.labels == ("SPEAKER_01", "SPEAKER_00")
    assert [t.speaker for t in plain.turns] == ["SPEAKER_00", "SPEAKER_00", "SPEAKER_01"]


def test_max_speakers_caps_the_count(fixtures_dir):
    seg = segmentations(fixtures_dir, "3speakers")
    count = speaker_count(seg)
    assert count.data.max() == 2
    capped = reconstruct(seg, _hard_clusters(fixtures_dir, "3speakers"), count, max_speakers=1)
    assert capped.speaker_count.data.max() == 1
    assert capped.turns == capped.exclusive_turns
    assert speaker_count(seg, max_speakers=1).data.max() == 1


def test_silence_gives_no_turns(fixtures_dir):
    seg = segmentations(fixtures_dir, "short")
    silent = Segmentations(np.zeros_like(seg.data), seg.window, seg.frame_step, seg.frame_duration)
    result = reconstruct(silent, np.full((1, 3), -2), speaker_count(silent))
    assert result.turns == () and result.exclusive_turns == () and result.num_speakers == 0


def test_more_speakers_asked_than_clusters_pads_like_pyannote():
    activations = np.array([[0.0, 3.0], [2.0, 1.0], [0.0, 0.0]], dtype=np.float32)
    binary = binarize_top_speakers(activations, np.array([1, 3, 0]))
    np.testing.assert_array_equal(binary, [[0, 1, 0], [1, 1, 1], [0, 0, 0]])


def test_never_more_speakers_than_clusters(fixtures_dir):
    """Where segmentation hears two people at once but clustering found one voice, the frame
    gets that voice alone: pyannote pads it with a speaker no cluster holds (a lone voice came
    out as two)."""
    seg = segmentations(fixtures_dir, "3speakers")
    count = speaker_count(seg)
    assert count.data.max() >= 2
    one = np.where(seg.active_local_speakers(), 0, -2)
    result = reconstruct(seg, one, count)
    assert result.num_speakers == 1 and {t.speaker for t in result.turns} == {"SPEAKER_00"}
    assert {t.speaker for t in result.exclusive_turns} == {"SPEAKER_00"}
    silent = reconstruct(seg, np.full_like(one, -2), count)
    assert silent.turns == () and silent.exclusive_turns == ()
