"""CAM++ in int8 (``witness.models.campplus_int8``), built from the real fp32 conversion with
the shipped ranges, on the sample call: the embeddings stay close to fp32's and the speakers
are the same; a damaged file or ranges of another conversion are refused."""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil

import numpy as np
import pytest

from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.errors import ModelError
from witness.evaluate import diarization_error
from witness.models import campplus_int8
from witness.models.diarization_choice import choose_embedding, choose_models
from witness.rttm import read_rttm


@pytest.fixture(scope="module")
def int8_file(campplus_onnx, tmp_path_factory):
    """The int8 model built here from the cache's fp32 conversion (as a user's first run builds it)."""
    out = tmp_path_factory.mktemp("int8") / "campplus-int8.onnx"
    return campplus_int8.build(campplus_onnx, out)


@pytest.fixture(scope="module")
def windows(default_models, campplus_onnx, int8_file, sample_audio):
    """The sample call's window embeddings by fp32 and int8 CAM++ (the same segmentation)."""
    out = {}
    for name, path in (("fp32", campplus_onnx), ("int8", int8_file)):
        models = dataclasses.replace(default_models, vad=None, embedding="campplus", embedding_path=path)
        diarizer = Diarizer(models, config_for("campplus"))
        out[name] = (diarizer, diarizer.embed_windows(sample_audio))
    return out


def test_int8_embeddings_are_close_to_fp32_on_the_sample_call(windows):
    fp32, int8 = (windows[k][1].embeddings.reshape(-1, 192) for k in ("fp32", "int8"))
    kept = np.isfinite(fp32).all(axis=1)
    assert kept.sum() >= 30 and np.array_equal(kept, np.isfinite(int8).all(axis=1))
    cosine = np.sum(fp32[kept] * int8[kept], axis=1)  # unit rows
    assert cosine.mean() >= 0.985 and cosine.min() >= 0.95  # measured 0.994 and 0.982 (41 rows)


def test_int8_hears_the_same_speakers_on_the_sample_call(windows, sample_call, sample_audio):
    (reference,) = read_rttm(sample_call / "sample.rttm").values()
    ders = {}
    for name, (diarizer, embedded) in windows.items():
        out = diarizer.cluster_windows(embedded, SpeakerBounds(), len(sample_audio) / 16000, signal=sample_audio)
        assert out.found == 2
        ders[name] = diarization_error(reference, out.turns).der
    assert ders["int8"] <= ders["fp32"] + 0.01  # measured 5.2% both


def test_campplus_is_fp32_by_default_and_int8_when_asked(default_models, campplus_onnx):
    assert choose_models("campplus").embedding_path == campplus_onnx
    int8 = choose_models("campplus", precision="int8")  # built into the cache once
    assert int8.embedding == "campplus"
    assert int8.embedding_path.name == campplus_int8.int8_name(campplus_onnx, campplus_int8.ranges_digest())


def test_the_config_key_picks_the_precision(default_models, campplus_onnx, tmp_path):
    from witness.config import load_settings
    from witness.run.jobs import resolve_models

    config = tmp_path / "int8.toml"
    config.write_text('[diarization]\nprecision = "int8"\n')
    models = resolve_models(load_settings(config), ("diarization",)).diarization
    assert models.embedding_path == choose_models("campplus", precision="int8").embedding_path


def test_a_damaged_int8_file_is_refused(default_models, campplus_onnx, tmp_path):
    name = campplus_int8.int8_name(campplus_onnx, campplus_int8.ranges_digest())
    shutil.copy(campplus_onnx, tmp_path / campplus_onnx.name)
    (tmp_path / name).write_bytes(b"not a model")
    with pytest.raises(ModelError, match="damaged or stale") as info:
        choose_embedding("campplus", tmp_path, precision="int8")
    assert name in str(info.value)


def test_ranges_of_another_conversion_are_refused_and_the_run_keeps_fp32(campplus_onnx, tmp_path, monkeypatch,
                                                                          caplog):
    ranges = json.loads(campplus_int8.RANGES.read_text())
    other = tmp_path / "ranges.json"
    other.write_text(json.dumps({**ranges, "converter": "0"}))
    with pytest.raises(ModelError, match="another conversion"):
        campplus_int8.build(campplus_onnx, tmp_path / "int8.onnx", other)
    assert not (tmp_path / "int8.onnx").exists()
    monkeypatch.setattr(campplus_int8, "RANGES", other)  # no file of these ranges is in the cache
    with caplog.at_level(logging.WARNING):
        assert choose_embedding("campplus", precision="int8") == ("campplus", campplus_onnx)
    assert "CAM++ runs in fp32" in caplog.text
