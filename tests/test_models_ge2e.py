"""The Resemblyzer GE2E encoder: read without torch, converted to ONNX, checked against numpy.

The checkpoint comes through the model store (models dir, cache, else `pip download
Resemblyzer==0.1.4`), exactly as a user gets it.
"""

from __future__ import annotations

import pickle
import shutil
import struct

import numpy as np
import pytest

from witness.diarize.features import ge2e_mel
from witness.errors import ModelError
from witness.models import store
from witness.models.diarization_catalogue import GE2E_CHECKPOINT
from witness.models.ge2e import (
    convert, converted_name, forward_numpy, ge2e_onnx_path, load_weights, max_deviation)
from witness.models.torch_pickle import MAGIC_NUMBER, PROTOCOL_VERSION, load_legacy_checkpoint


@pytest.fixture(scope="module")
def checkpoint():
    return store.resolve(GE2E_CHECKPOINT)


@pytest.fixture(scope="module")
def converted(checkpoint, tmp_path_factory):
    out = tmp_path_factory.mktemp("ge2e") / converted_name(GE2E_CHECKPOINT.sha256)
    return convert(checkpoint, GE2E_CHECKPOINT.sha256, out)


@pytest.fixture(scope="module")
def sample_partials(sample_audio):
    """Thirteen real 1.6 s mel partials from the sample call, (13, 160, 40) float32."""
    mel = ge2e_mel(sample_audio)
    return np.stack([mel[s:s + 160] for s in range(650, 2850, 180)])


def test_checkpoint_reads_into_numpy_without_torch(checkpoint):
    state = load_legacy_checkpoint(checkpoint)
    model = state["model_state"]
    assert state["step"] == 1564501
    assert model["lstm.weight_ih_l0"].shape == (1024, 40)
    assert model["lstm.weight_hh_l2"].shape == (1024, 256)
    assert model["linear.weight"].shape == (256, 256)
    assert all(v.dtype == np.float32 and not v.flags.writeable for v in model.values())
    assert all(np.isfinite(v).all() for v in model.values())
    # optimizer state has its own tensors: every storage in the file was consumed
    assert isinstance(state["optimizer_state"], dict)


def _legacy_file(path, obj_pickle: bytes) -> None:
    with open(path, "wb") as f:
        for header in (MAGIC_NUMBER, PROTOCOL_VERSION, {"little_endian": True}):
            pickle.dump(header, f, protocol=2)
        f.write(obj_pickle)


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (shutil.copy, ("/dev/null", str(self.marker)))


def test_unpickler_refuses_arbitrary_globals(tmp_path):
    marker = tmp_path / "pwned"
    bad = tmp_path / "evil.pt"
    _legacy_file(bad, pickle.dumps({"model_state": _Evil(marker)}, protocol=2))
    with pytest.raises(ModelError, match="shutil.copy") as info:
        load_legacy_checkpoint(bad)
    assert str(bad) in str(info.value)
    assert not marker.exists()


def test_evil_pickle_in_the_header_is_refused_too(tmp_path):
    marker = tmp_path / "pwned"
    bad = tmp_path / "evil-header.pt"
    bad.write_bytes(pickle.dumps(_Evil(marker), protocol=2))
    with pytest.raises(ModelError):
        load_legacy_checkpoint(bad)
    assert not marker.exists()


def test_garbage_and_truncated_files_are_model_errors(tmp_path, checkpoint):
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all" * 10)
    with pytest.raises(ModelError, match="garbage.pt"):
        load_legacy_checkpoint(garbage)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(checkpoint.read_bytes()[:1_000_000])
    with pytest.raises(ModelError, match="truncated"):
        load_legacy_checkpoint(truncated)


def test_tensor_reaching_past_its_storage_is_refused(tmp_path):
    # A hand-made checkpoint whose tensor claims 10 elements of a 4-element storage.
    body = (b"\x80\x02}q\x00X\x01\x00\x00\x00wq\x01ctorch._utils\n_rebuild_tensor_v2\nq\x02"
            b"((X\x07\x00\x00\x00storageq\x03ctorch\nFloatStorage\nq\x04X\x01\x00\x00\x00kq\x05"
            b"X\x03\x00\x00\x00cpuq\x06K\x04Ntq\x07QK\x00K\n\x85K\x01\x85\x89Ntq\x08Rq\x09s.")
    path = tmp_path / "overreach.pt"
    _legacy_file(path, body)
    with open(path, "ab") as f:
        f.write(pickle.dumps(["k"], protocol=2))
        f.write(struct.pack("<q", 4) + np.arange(4, dtype="<f4").tobytes())
    with pytest.raises(ModelError, match="past its storage"):
        load_legacy_checkpoint(path)


def test_onnx_graph_equals_numpy_lstm_on_real_audio(converted, checkpoint, sample_partials):
    weights = load_weights(checkpoint)
    assert max_deviation(converted, weights, sample_partials) < 1e-4
    # dynamic frames: a 0.8 s partial and a 3 s one go through the same graph
    for frames in (80, 300):
        mels = np.stack([sample_partials[0, :1].repeat(frames, 0), sample_partials[1, :1].repeat(frames, 0)])
        assert max_deviation(converted, weights, mels) < 1e-4


def test_embeddings_are_unit_vectors_that_tell_frames_apart(checkpoint, sample_partials):
    emb = forward_numpy(load_weights(checkpoint), sample_partials)
    assert emb.shape == (13, 256)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert (emb >= 0).all()  # ReLU before the norm
    assert not np.allclose(emb[0], emb[-1], atol=1e-2)


def test_ge2e_onnx_path_converts_once_into_the_cache(checkpoint, empty_models_dir):
    shutil.copy(checkpoint, empty_models_dir / GE2E_CHECKPOINT.name)
    path = ge2e_onnx_path(models_dir=empty_models_dir, offline=True)
    assert path == store.cache_dir() / converted_name(GE2E_CHECKPOINT.sha256)
    stamp = path.stat().st_mtime_ns
    assert ge2e_onnx_path(models_dir=empty_models_dir, offline=True) == path
    assert path.stat().st_mtime_ns == stamp  # found, not converted again
    assert not list(path.parent.glob("*.tmp"))


def test_converted_file_in_models_dir_is_used_and_checked(converted, empty_models_dir):
    copy = empty_models_dir / converted.name
    shutil.copy(converted, copy)
    assert ge2e_onnx_path(models_dir=empty_models_dir, offline=True) == copy
    copy.write_bytes(copy.read_bytes()[:4000])
    with pytest.raises(ModelError, match="delete it") as info:
        ge2e_onnx_path(models_dir=empty_models_dir, offline=True)
    assert converted.name in str(info.value)


def test_checkpoint_failing_its_checksum_is_refused_naming_the_file(checkpoint, empty_models_dir):
    damaged = bytearray(checkpoint.read_bytes())
    damaged[5000] ^= 0xFF
    (empty_models_dir / GE2E_CHECKPOINT.name).write_bytes(bytes(damaged))
    with pytest.raises(ModelError) as info:
        ge2e_onnx_path(models_dir=empty_models_dir, offline=True)
    message = str(info.value)
    assert GE2E_CHECKPOINT.name in message and "\n" not in message
    assert "sha256" in message
