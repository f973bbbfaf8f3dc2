"""The diarization hyperparameters equal pyannote's shipped values."""

from __future__ import annotations

import dataclasses

import pytest

from witness.diarize.config import (
    COMMUNITY_1,
    GE2E_CLUSTERING,
    GE2E_PIECE_CLUSTERING,
    PYANNOTE_3_1,
    ClusteringConfig,
    DiarizationConfig,
    ReconstructionConfig,
    SegmentationConfig,
    config_for,
)


def test_community_1_defaults():
    assert COMMUNITY_1 == DiarizationConfig()
    assert dataclasses.asdict(COMMUNITY_1) == {
        "segmentation": {"window_step": 1.0},
        "clustering": {
            "method": "vbx",
            "threshold": 0.6,
            "linkage": "centroid",
            "min_cluster_size": 12,
            "min_active_ratio": 0.2,
            "fa": 0.07,
            "fb": 0.8,
            "vbx_max_iters": 20,
            "vbx_init_smoothing": 7.0,
            "vbx_min_prior": 1e-7,
            "constrained_assignment": True,
        },
        "reconstruction": {"min_duration_off": 0.0},
        # Witness's own: the VAD fallback's pieces (pyannote has no such path)
        "piece_clustering": dataclasses.asdict(ClusteringConfig(method="ahc", threshold=0.7045654963945799)),
    }


def test_community_1_matches_the_fixture_parameters(fixtures_dir):
    # pipeline_params.json holds the parameters pyannote ran with when it made the fixtures
    text = (fixtures_dir / "pipeline_params.json").read_text()
    assert "'min_duration_off': 0.0" in text
    assert "'threshold': 0.6, 'Fa': 0.07, 'Fb': 0.8" in text


def test_pyannote_3_1_preset_differs_only_in_clustering():
    assert PYANNOTE_3_1.segmentation == SegmentationConfig()
    assert PYANNOTE_3_1.reconstruction == ReconstructionConfig()
    assert PYANNOTE_3_1.clustering == dataclasses.replace(
        ClusteringConfig(), method="ahc", threshold=0.7045654963945799, min_cluster_size=12, constrained_assignment=False
    )


def test_configs_are_frozen_and_validated():
    with pytest.raises(dataclasses.FrozenInstanceError):
        COMMUNITY_1.clustering.threshold = 0.7  # type: ignore[misc]
    with pytest.raises(ValueError, match="method"):
        ClusteringConfig(method="kmeans")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_cluster_size"):
        ClusteringConfig(min_cluster_size=0)


def test_each_embedding_model_has_its_own_clustering():
    wespeaker = config_for("wespeaker")
    assert wespeaker.clustering == PYANNOTE_3_1.clustering == wespeaker.piece_clustering
    ge2e = config_for("ge2e", window_step=2.0)
    assert ge2e.segmentation == SegmentationConfig(window_step=2.0)
    assert ge2e.clustering == GE2E_CLUSTERING and ge2e.piece_clustering == GE2E_PIECE_CLUSTERING
    # tuned by scripts/tune_ge2e_clustering.py: see the docstrings in config.py
    assert (GE2E_CLUSTERING.method, GE2E_CLUSTERING.linkage, GE2E_CLUSTERING.threshold) == ("ahc", "centroid", 0.46)
    assert GE2E_CLUSTERING.min_active_ratio == 0.4
    assert config_for("ge2e", threshold=0.5).clustering.threshold == 0.5
    with pytest.raises(ValueError, match="xvector"):
        config_for("xvector")
    with pytest.raises(ValueError, match="window step"):
        config_for("ge2e", window_step=0)
