"""VBx reproduces pyannote's responsibilities and priors; the PLDA transform whitens."""

from __future__ import annotations

import numpy as np
import pytest

from tests.diarize_data import load
from witness.diarize.plda import Plda
from witness.diarize.vbx import initial_responsibilities, vbx
from witness.errors import ModelError

TOLERANCE = 1e-8  # measured: 1e-16 (same float64 arithmetic as pyannote, another order)


def test_vbx_reproduces_pyannote(fixtures_dir):
    features = load(fixtures_dir, "pipeline_plda_features.npy")  # (27, 128)
    phi = load(fixtures_dir, "pipeline_plda_phi.npy")  # (128,)
    ahc = load(fixtures_dir, "pipeline_ahc_clusters.npy")  # (27,)
    copies = features.copy(), phi.copy(), ahc.copy()
    result = vbx(features, phi, ahc, fa=0.07, fb=0.8, max_iters=20)
    np.testing.assert_allclose(result.gamma, load(fixtures_dir, "pipeline_vbx_gamma.npy"), rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(result.pi, load(fixtures_dir, "pipeline_vbx_pi.npy"), rtol=0, atol=TOLERANCE)
    assert np.all(np.diff(result.elbo) > -1e-4)  # the bound never drops
    for before, after in zip(copies, (features, phi, ahc)):
        np.testing.assert_array_equal(before, after)


def test_initial_responsibilities_are_smoothed_one_hot():
    q = initial_responsibilities(np.array([0, 1, 1]), smoothing=7.0)
    assert q.shape == (3, 2)
    np.testing.assert_allclose(q.sum(axis=1), 1.0)
    assert q[0, 0] == pytest.approx(np.exp(7) / (np.exp(7) + 1))
    np.testing.assert_array_equal(initial_responsibilities(np.array([1, 0]), smoothing=-1), [[0, 1], [1, 0]])


def _random_plda(rng: np.random.Generator, embedding: int = 16, size: int = 8):
    """Parameters in the layout of pyannote's xvec_transform.npz and plda.npz."""
    return {
        "mean1": rng.normal(size=embedding),
        "lda": rng.normal(size=(embedding, size)),
        "mean2": rng.normal(size=size),
        "mu": rng.normal(size=size),
        "tr": rng.normal(size=(size, size)),
        "psi": rng.uniform(0.5, 20.0, size=size),
    }


def test_plda_transform_diagonalises_the_two_covariances():
    # plda.npz's `tr` maps to a space with identity within-class and diag(psi) between-class
    # covariance; the generalised eigenproblem must recover exactly that space: the same
    # eigenvalues (sorted, decreasing) and the same axes up to sign.
    params = _random_plda(np.random.default_rng(0))
    plda = Plda.from_arrays(**params)
    np.testing.assert_allclose(plda.phi, np.sort(params["psi"])[::-1], rtol=1e-9)
    tr, psi = params["tr"], params["psi"]
    within = np.linalg.inv(tr.T @ tr)
    between = np.linalg.inv((tr.T / psi) @ tr)
    np.testing.assert_allclose(plda.transform @ within @ plda.transform.T, np.eye(8), atol=1e-9)
    np.testing.assert_allclose(plda.transform @ between @ plda.transform.T, np.diag(plda.phi), atol=1e-8)
    order = np.argsort(-psi)
    np.testing.assert_allclose(np.abs(plda.transform), np.abs(tr[order]), atol=1e-8)


def test_plda_features_follow_the_documented_chain():
    params = _random_plda(np.random.default_rng(1))
    plda = Plda.from_arrays(**params, dimension=5)
    x = np.random.default_rng(2).normal(size=(4, 16)).astype(np.float32)
    before = x.copy()
    features = plda.transform_embeddings(x)
    assert features.shape == (4, 5) and plda.phi.shape == (5,)
    y = x - params["mean1"]
    y = np.sqrt(16) * y / np.linalg.norm(y, axis=1, keepdims=True)
    y = y @ params["lda"] - params["mean2"]
    y = np.sqrt(8) * y / np.linalg.norm(y, axis=1, keepdims=True)
    order = np.argsort(-params["psi"])[:5]
    np.testing.assert_allclose(np.abs(features), np.abs((y - params["mu"]) @ params["tr"][order].T), atol=1e-8)
    np.testing.assert_array_equal(x, before)


def test_plda_files_load_and_bad_files_are_refused(tmp_path):
    params = _random_plda(np.random.default_rng(3))
    np.savez(tmp_path / "xvec_transform.npz", **{k: params[k] for k in ("mean1", "lda", "mean2")})
    np.savez(tmp_path / "plda.npz", **{k: params[k] for k in ("mu", "tr", "psi")})
    plda = Plda.from_npz(tmp_path / "xvec_transform.npz", tmp_path / "plda.npz")
    np.testing.assert_allclose(plda.phi, np.sort(params["psi"])[::-1], rtol=1e-9)
    np.savez(tmp_path / "broken.npz", mu=params["mu"])
    with pytest.raises(ModelError, match="broken.npz"):
        Plda.from_npz(tmp_path / "xvec_transform.npz", tmp_path / "broken.npz")
    np.savez(tmp_path / "small.npz", mu=params["mu"][:4], tr=params["tr"], psi=params["psi"])
    with pytest.raises(ModelError, match="shapes"):
        Plda.from_npz(tmp_path / "xvec_transform.npz", tmp_path / "small.npz")
