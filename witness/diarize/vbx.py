"""VBx: variational Bayes clustering of embeddings in PLDA space (Landini et al., 2022).

The model of "Bayesian HMM clustering of x-vector sequences (VBx) in speaker diarization:
theory, implementation and analysis on standard tasks" without the HMM transitions (pyannote
applies it to an unordered set of window embeddings, i.e. a GMM-like model): each speaker s
has a latent y_s ~ N(0, I); a feature x_t of speaker s is N(sqrt(phi) * y_s, I) in the
PLDA space, where phi (D,) are the between-class eigenvalues. Iterations alternate the
speaker posteriors q(y_s) = N(alpha_s, diag(inv_l_s)) and the responsibilities gamma, and
re-estimate the speaker priors pi; speakers whose prior collapses are dropped afterwards.
Equation numbers below refer to that paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp, softmax

PRIOR_FLOOR = 1e-8  # added to pi before its log, as pyannote/BUT's implementation


@dataclass(frozen=True)
class VbxResult:
    """gamma: (n, speakers) float64 responsibilities; pi: (speakers,) float64 priors;
    elbo: the evidence lower bound after each iteration (non-decreasing up to 1e-4)."""

    gamma: np.ndarray
    pi: np.ndarray
    elbo: tuple[float, ...]


def initial_responsibilities(labels: np.ndarray, smoothing: float) -> np.ndarray:
    """(n, clusters) float64: softmax(smoothing * one_hot(labels)); labels (n,) int in 0..K-1.
    A negative ``smoothing`` returns the plain one-hot matrix."""
    labels = np.asarray(labels, dtype=np.int64)
    one_hot = np.zeros((len(labels), int(labels.max()) + 1))
    one_hot[np.arange(len(labels)), labels] = 1.0
    return one_hot if smoothing < 0 else softmax(one_hot * smoothing, axis=1)


def vbx(
    features: np.ndarray,
    phi: np.ndarray,
    init_labels: np.ndarray,
    fa: float,
    fb: float,
    max_iters: int = 20,
    init_smoothing: float = 7.0,
    epsilon: float = 1e-4,
) -> VbxResult:
    """Run VBx from AHC labels.

    features: (n, D) float, embeddings already in PLDA space (``Plda.transform``).
    phi: (D,) float, PLDA between-class eigenvalues.
    init_labels: (n,) int, initial clusters 0..K-1 (one VBx speaker per cluster).
    fa, fb: acoustic scaling and speaker regularisation (community-1: 0.07, 0.8).
    Stops after ``max_iters`` iterations or when the ELBO improves by less than ``epsilon``.
    """
    x = np.asarray(features, dtype=np.float64)
    phi = np.asarray(phi, dtype=np.float64)
    gamma = initial_responsibilities(init_labels, init_smoothing)
    pi = np.full(gamma.shape[1], 1.0 / gamma.shape[1])
    dim = x.shape[1]
    g = -0.5 * (np.sum(x**2, axis=1, keepdims=True) + dim * np.log(2 * np.pi))  # (23), per-frame term
    rho = x * np.sqrt(phi)  # (18)
    elbo: list[float] = []
    for _ in range(max_iters):
        inv_l = 1.0 / (1.0 + fa / fb * gamma.sum(axis=0)[:, None] * phi)  # (17)
        alpha = fa / fb * inv_l * (gamma.T @ rho)  # (16)
        log_p = fa * (rho @ alpha.T - 0.5 * (inv_l + alpha**2) @ phi + g)  # (23)
        log_pi = np.log(pi + PRIOR_FLOOR)
        log_px = logsumexp(log_p + log_pi, axis=1)
        gamma = np.exp(log_p + log_pi - log_px[:, None])
        pi = gamma.sum(axis=0) / gamma.sum()
        elbo.append(float(log_px.sum() + fb * 0.5 * np.sum(np.log(inv_l) - inv_l - alpha**2 + 1)))  # (25)
        if len(elbo) > 1 and elbo[-1] - elbo[-2] < epsilon:
            break
    return VbxResult(gamma=gamma, pi=pi, elbo=tuple(elbo))
