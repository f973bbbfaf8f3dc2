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


def _run(sample_call, settings):
    """The sample call through both engines in worker processes, as `witness` runs it."""
    from witness.run.flow import FileJob
    from witness.run.orchestrate import run

    (result,) = run([FileJob(str(sample_call / "sample.wav"))], settings)
    assert result.error is None
    return result.transcript


def _in_order(words):
    return sorted(words, key=lambda w: (w.start, w.end))  # as the merge orders them


def _opinion_settings(precision: str):
    from witness.config import Settings

    s = Settings()
    return dataclasses.replace(s, whisper=dataclasses.replace(s.whisper, use_gpu=False),
                               diarization=dataclasses.replace(s.diarization, segmentation_device="cpu",
                                                               embedding_device="cpu"),
                               merge=dataclasses.replace(s.merge, opinion_precision=precision))


@pytest.fixture(scope="module")
def int8_opinion_run(default_models, sample_call):
    """The sample call with the second opinion in int8 (diarization in fp32)."""
    return _run(sample_call, _opinion_settings("int8"))


@pytest.fixture(scope="module")
def remerged(int8_opinion_run, sample_audio, campplus_onnx):
    """That run's words merged again from its own turns and centroids, the second opinion
    embedding with each precision's file: {precision: (speaker per word, words moved)}."""
    from witness.diarize.embedding import CamPlusPlusEmbedder
    from witness.merge import merge
    from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices

    run = int8_opinion_run
    words = [dataclasses.replace(w, speaker=None) for w in _in_order(run.words)]
    out = {}
    for precision in ("fp32", "int8"):
        embedder = CamPlusPlusEmbedder(choose_models(opinion=precision).opinion, min_clean_seconds=OPINION_MIN_SECONDS)
        result = merge(words, run.exclusive_turns, voices=CentroidVoices(sample_audio, embedder.embed,
                                                                         run.speaker_embeddings))
        out[precision] = ([w.speaker for w in result.words], result.reopined)
    return out


def test_the_second_opinion_in_int8_gives_each_word_of_the_sample_call_the_speaker_fp32_gives(
        int8_opinion_run, remerged, campplus_onnx):
    """Measured: the same speaker on every word, as many words moved either way. The run
    itself embedded with the int8 file (its words have the int8 merge's speakers)."""
    assert choose_models(opinion="int8").opinion.name == campplus_int8.int8_name(campplus_onnx,
                                                                                campplus_int8.ranges_digest())
    (fp32, moved_fp32), (int8, moved_int8) = remerged["fp32"], remerged["int8"]
    assert moved_fp32 >= 1 and moved_int8 == moved_fp32
    assert int8 == fp32
    assert [w.speaker for w in _in_order(int8_opinion_run.words)] == int8
    name = campplus_int8.int8_name(campplus_onnx, campplus_int8.ranges_digest())
    assert int8_opinion_run.engines["diarization"]["opinion"] == {"model": name, "precision": "int8"}


def test_where_int8_cannot_be_built_the_second_opinion_runs_in_fp32_and_says_so(
        default_models, campplus_onnx, sample_call, remerged, tmp_path, monkeypatch, caplog):
    """Ranges of another conversion (no int8 file of them here): the run goes on, its second
    opinion embeds with the fp32 file (the words get fp32's speakers), one warning says so."""
    ranges = json.loads(campplus_int8.RANGES.read_text())
    other = tmp_path / "ranges.json"
    other.write_text(json.dumps({**ranges, "converter": "0"}))
    monkeypatch.setattr(campplus_int8, "RANGES", other)
    settings = _opinion_settings("int8")
    with caplog.at_level(logging.WARNING):
        transcript = _run(sample_call, settings)
    warnings = [r.getMessage() for r in caplog.records if "second opinion runs CAM++ in fp32" in r.getMessage()]
    assert len(warnings) == 1 and "another conversion" in warnings[0]
    assert [w.speaker for w in _in_order(transcript.words)] == remerged["fp32"][0]
    assert transcript.engines["diarization"]["opinion"] == {"model": campplus_onnx.name, "precision": "fp32"}


def test_the_second_opinion_shares_the_diarizations_file_when_the_precisions_agree(default_models, campplus_onnx):
    int8 = choose_models("campplus", precision="int8", opinion="int8")
    assert int8.opinion == int8.embedding_path != campplus_onnx
    assert choose_models("campplus", precision="int8", opinion="fp32").opinion == campplus_onnx
    assert choose_models("campplus", opinion="fp32").opinion == campplus_onnx
    assert choose_models("campplus").opinion is None  # no second opinion asked for (diarization alone)
    assert choose_models("ge2e", opinion="int8").opinion is None


def test_a_damaged_int8_file_stops_a_run_whose_second_opinion_wants_it(default_models, campplus_onnx, tmp_path):
    name = campplus_int8.int8_name(campplus_onnx, campplus_int8.ranges_digest())
    shutil.copy(campplus_onnx, tmp_path / campplus_onnx.name)
    (tmp_path / name).write_bytes(b"not a model")
    with pytest.raises(ModelError, match="damaged or stale"):
        choose_models("campplus", tmp_path, opinion="int8")
