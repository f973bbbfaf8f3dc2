"""VBx: Bayesian clustering of speaker embeddings in a PLDA space (Landini et al., 2022).

Embeddings are mapped by a PLDA trained on labelled speakers (``Plda``: each file's
embeddings centred on their own mean, which takes out what the file's band, codec and noise
add to every voice; then LDA, length norm and the two-covariance PLDA's simultaneous
diagonalisation, so that one speaker's embeddings in one file scatter with identity
covariance around a speaker mean drawn from N(0, diag(phi))). Variational Bayes then refines an AHC initialisation: each embedding's
responsibilities over the speakers, each speaker's posterior mean, and the speakers' priors;
a speaker whose prior collapses is dropped, so the count comes out of the model. ``fa``
scales the embeddings' evidence, ``fb`` the prior on speaker means (a larger ``fb``: fewer,
broader speakers). The (window, local speaker) embeddings are not one time sequence (up to
three per window, windows overlap), so there is no HMM: VBx's loop probability is 0, and the
model is a Bayesian mixture whose weights are the speakers' priors.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
from scipy.special import logsumexp


@dataclass(frozen=True)
class Plda:
    """A PLDA on one file's unit-norm embeddings (dim,) less their mean, unit-normed again:
    ``mean`` (dim,), ``lda`` (dim, d), ``lda_mean`` (d,) of the length-normed LDA features,
    ``transform`` (d, d) to the PLDA space and ``phi`` (d,) the between-speaker variances there
    (within-speaker: identity), largest first."""

    mean: np.ndarray
    lda: np.ndarray
    lda_mean: np.ndarray
    transform: np.ndarray
    phi: np.ndarray

    def features(self, embeddings: np.ndarray) -> np.ndarray:
        """(n, d) float64 PLDA features of one file's embeddings (n, dim)."""
        x = file_centred(embeddings)
        y = (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12) - self.mean) @ self.lda
        y *= np.sqrt(y.shape[1]) / np.linalg.norm(y, axis=1, keepdims=True)
        return (y - self.lda_mean) @ self.transform


def file_centred(embeddings: np.ndarray) -> np.ndarray:
    """(n, dim) float64: one file's embeddings (n, dim), unit-normed, less their mean."""
    x = np.asarray(embeddings, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    return x - x.mean(axis=0)


@lru_cache(maxsize=2)
def load_plda(name: str) -> Plda:
    """The PLDA ``name`` shipped in witness/diarize/data (an .npz of ``Plda``'s fields)."""
    with resources.files("witness.diarize").joinpath("data", name).open("rb") as f:
        data = np.load(f)
        return Plda(*(data[k].astype(np.float64) for k in ("mean", "lda", "lda_mean", "transform", "phi")))


@dataclass(frozen=True)
class Posterior:
    """What VBx leaves: ``responsibility`` (n, speakers) of each embedding and ``prior``
    (speakers,) of each speaker (summing to 1), for the speakers of the initialisation, and
    the evidence lower ``bound`` reached."""

    responsibility: np.ndarray
    prior: np.ndarray
    bound: float


def vbx(features: np.ndarray, phi: np.ndarray, init: np.ndarray, fa: float, fb: float,
        max_iters: int = 20, tolerance: float = 1e-4, smoothing: float = 7.0) -> Posterior:
    """Variational Bayes over PLDA ``features`` (n, d) with between-speaker variances ``phi``
    (d,), starting from the labels ``init`` (n,) int 0..K-1 (softened: each row a softmax of
    ``smoothing`` times its one-hot), until the evidence bound gains under ``tolerance``."""
    n, d = features.shape
    one_hot = (np.asarray(init)[:, None] == np.arange(int(init.max()) + 1)[None, :]).astype(np.float64)
    gamma = np.exp(smoothing * one_hot - logsumexp(smoothing * one_hot, axis=1, keepdims=True))
    prior = gamma.sum(axis=0) / n
    rho = features * np.sqrt(phi)  # (n, d)
    constant = -0.5 * (np.sum(features ** 2, axis=1) + d * np.log(2 * np.pi))  # (n,)
    ratio = fa / fb
    bound = -np.inf
    for _ in range(max_iters):
        inv_l = 1.0 / (1.0 + ratio * gamma.sum(axis=0)[:, None] * phi)  # (K, d) posterior variances
        alpha = ratio * inv_l * (gamma.T @ rho)  # (K, d) posterior means
        log_p = fa * (rho @ alpha.T - 0.5 * (inv_l + alpha ** 2) @ phi + constant[:, None])  # (n, K)
        with np.errstate(divide="ignore"):
            joint = log_p + np.log(prior)
        total = logsumexp(joint, axis=1, keepdims=True)
        gamma = np.exp(joint - total)
        prior = gamma.sum(axis=0) / n
        new_bound = float(total.sum()) + 0.5 * fb * float(np.sum(np.log(inv_l) - inv_l - alpha ** 2 + 1))
        if new_bound - bound < tolerance:
            bound = max(bound, new_bound)
            break
        bound = new_bound
    return Posterior(gamma, prior, bound)
