"""VBx clustering (method "vbx") on the shipped PLDA: the file and its provenance, the model on
real CAM++ embeddings of the sample call, wideband and in telephone band, and the speaker
bounds winning over its count."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources

import numpy as np
import pytest

from witness.diarize.config import CAMPPLUS_CLUSTERING, SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.diarize.vbx import file_centred, load_plda
from witness.evaluate import diarization_error
from witness.models.diarization_choice import choose_models
from witness.rttm import read_rttm

VBX = dataclasses.replace(CAMPPLUS_CLUSTERING, method="vbx", plda="campplus_plda.npz")


def test_the_shipped_plda_fits_campplus_and_says_where_it_came_from():
    plda = load_plda("campplus_plda.npz")
    dims = len(plda.phi)
    assert plda.mean.shape == (192,) and plda.lda.shape == (192, dims) and plda.transform.shape == (dims, dims)
    assert np.all(plda.phi > 0) and np.all(np.diff(plda.phi) <= 0)  # largest between-speaker variance first
    provenance = json.loads(resources.files("witness.diarize").joinpath("data", "campplus_plda.json").read_text())
    assert provenance["dims"] == dims and provenance["made_by"].startswith("scripts/train_plda.py")
    assert all(call.split("/")[1] == "tune" for call in provenance["calls"])
    excluded = {s for corpus in provenance["corpora"].values() for s in corpus["check_speakers_excluded"]}
    assert provenance["speakers"] and not excluded & set(provenance["speakers"])  # no check-part speaker


def test_one_files_features_are_centred_on_that_file():
    rows = np.random.default_rng(0).normal(size=(50, 192)) + 3.0
    np.testing.assert_allclose(file_centred(rows).mean(axis=0), 0.0, atol=1e-12)
    features = load_plda("campplus_plda.npz").features(rows)
    assert features.shape == (50, len(load_plda("campplus_plda.npz").phi)) and np.isfinite(features).all()


@pytest.fixture(scope="module")
def sample_windows(default_models, sample_audio):
    """Segmentation-3.0 and real CAM++ window embeddings of the sample call (2 voices)."""
    models = choose_models("campplus")
    return Diarizer(dataclasses.replace(models, vad=None), config_for("campplus")).embed_windows(sample_audio)


def test_vbx_keeps_the_two_voices_of_the_sample_call(sample_windows, sample_call):
    """From 20 AHC clusters of the call's 37 training embeddings VBx keeps two speakers."""
    from witness.diarize.clustering import filter_embeddings, vbx_clusters

    train = filter_embeddings(sample_windows.embeddings, sample_windows.segmentations)
    labels = vbx_clusters(train.embeddings, VBX)
    assert labels.max() + 1 == 2 and min(np.bincount(labels)) >= 5
    models = choose_models("campplus")
    config = dataclasses.replace(config_for("campplus"), clustering=VBX)
    out = Diarizer(dataclasses.replace(models, vad=None), config).cluster_windows(sample_windows, SpeakerBounds(), 30.0)
    (reference,) = read_rttm(sample_call / "sample.rttm").values()
    assert out.found == 2 and diarization_error(reference, list(out.turns)).der < 0.08  # measured 5.2% (AHC: 5.2%)


@pytest.mark.parametrize("bounds, count", [(SpeakerBounds(num_speakers=3), 3), (SpeakerBounds(max_speakers=1), 1)])
def test_speaker_bounds_win_over_vbxs_count(sample_windows, bounds, count):
    from witness.diarize.clustering import cluster

    clusters = cluster(sample_windows.embeddings, sample_windows.segmentations, VBX, bounds)
    assert clusters.found == 2 and clusters.num_clusters == count


@pytest.fixture(scope="module")
def telephone_windows(default_models, sample_audio):
    """Real CAM++ window embeddings of the sample call through the corpus's telephone channel
    (300-3400 Hz, 8 kHz mu-law, ``corpus_acoustics.channel``)."""
    from scripts.corpus_acoustics import channel

    diarizer = Diarizer(dataclasses.replace(choose_models("campplus"), vad=None), config_for("campplus"))
    return diarizer.embed_windows(channel(sample_audio.astype(np.float64), "telephone", None).astype(np.float32))


def test_vbx_keeps_apart_the_telephone_band_voices_the_ahc_rule_merges(telephone_windows, sample_call):
    """In mu-law telephone band the AHC rule (the default) merges the call's two voices; VBx
    keeps them apart."""
    from witness.diarize.clustering import cluster

    windows = telephone_windows
    ahc, vbx = (cluster(windows.embeddings, windows.segmentations, c) for c in (CAMPPLUS_CLUSTERING, VBX))
    assert (ahc.found, vbx.found) == (1, 2)
    models = choose_models("campplus")
    config = dataclasses.replace(config_for("campplus"), clustering=VBX)
    out = Diarizer(dataclasses.replace(models, vad=None), config).cluster_windows(windows, SpeakerBounds(), 30.0)
    (reference,) = read_rttm(sample_call / "sample.rttm").values()
    assert out.found == 2 and diarization_error(reference, list(out.turns)).der < 0.2  # 14.3% (the AHC rule: 47.1%)
