"""PLDA: the map from speaker embeddings to the space where VBx clusters them.

Parameters come in pyannote/BUT VBx's two files (community-1's ``plda/`` folder):
- ``xvec_transform.npz``: ``mean1`` (E,), ``lda`` (E, L), ``mean2`` (L,): centre, length-norm,
  LDA projection, centre again, length-norm (E = embedding size, L = LDA size).
- ``plda.npz``: ``mu`` (L,), ``tr`` (L, L), ``psi`` (L,): a two-covariance PLDA where ``tr``
  diagonalises it (within-class covariance W = inv(tr' tr), between-class
  B = inv(tr' diag(1/psi) tr)).
We solve the generalised eigenproblem B v = phi W v, order by decreasing phi, and project on
the eigenvectors: features then have identity within-class and diag(phi) between-class
covariance, which is the model VBx assumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.linalg import eigh

from witness.errors import ModelError

LDA_DIMENSION = 128  # community-1 keeps all 128 LDA dimensions


def _length_norm(x: np.ndarray, scale: float) -> np.ndarray:
    """Rows of x (n, d) rescaled to Euclidean norm ``scale``."""
    return scale * x / np.linalg.norm(x, axis=1, keepdims=True)


@dataclass(frozen=True)
class Plda:
    """mean1 (E,), lda (E, L), mean2 (L,), mu (L,) float64; transform (L, L) float64 with
    rows the generalised eigenvectors; phi (L,) float64 between-class eigenvalues,
    decreasing; dimension: how many leading PLDA dimensions features keep."""

    mean1: np.ndarray
    lda: np.ndarray
    mean2: np.ndarray
    mu: np.ndarray
    transform: np.ndarray
    phi_all: np.ndarray
    dimension: int = LDA_DIMENSION

    @classmethod
    def from_arrays(
        cls,
        mean1: np.ndarray,
        lda: np.ndarray,
        mean2: np.ndarray,
        mu: np.ndarray,
        tr: np.ndarray,
        psi: np.ndarray,
        dimension: int = LDA_DIMENSION,
    ) -> Plda:
        """Build from the raw arrays of the two npz files (shapes as in the module doc)."""
        mean1, lda, mean2, mu, tr, psi = (np.asarray(a, dtype=np.float64) for a in (mean1, lda, mean2, mu, tr, psi))
        within = np.linalg.inv(tr.T @ tr)
        between = np.linalg.inv((tr.T / psi) @ tr)
        eigenvalues, eigenvectors = eigh(between, within)  # ascending
        return cls(
            mean1=mean1,
            lda=lda,
            mean2=mean2,
            mu=mu,
            transform=eigenvectors.T[::-1].copy(),
            phi_all=eigenvalues[::-1].copy(),
            dimension=min(dimension, len(psi)),
        )

    @classmethod
    def from_npz(cls, transform_path: str | Path, plda_path: str | Path, dimension: int = LDA_DIMENSION) -> Plda:
        """Load ``xvec_transform.npz`` and ``plda.npz`` (ModelError naming the bad file)."""
        arrays = {}
        for path, keys in ((transform_path, ("mean1", "lda", "mean2")), (plda_path, ("mu", "tr", "psi"))):
            try:
                with np.load(path) as npz:
                    arrays.update({key: npz[key] for key in keys})
            except (OSError, ValueError, KeyError) as exc:
                raise ModelError(f"not a PLDA file with {', '.join(keys)} ({exc}); re-download it", path) from None
        mean1, lda, mean2, mu, tr, psi = (arrays[k] for k in ("mean1", "lda", "mean2", "mu", "tr", "psi"))
        rows, size = lda.shape if lda.ndim == 2 else (-1, -1)
        expected = {"mean1": (rows,), "mean2": (size,), "mu": (size,), "tr": (size, size), "psi": (size,)}
        if size < 1 or any(arrays[key].shape != shape for key, shape in expected.items()):
            raise ModelError(f"PLDA shapes do not match the LDA size {size}; re-download both files", plda_path)
        return cls.from_arrays(mean1, lda, mean2, mu, tr, psi, dimension)

    @property
    def phi(self) -> np.ndarray:
        """(dimension,) float64 between-class eigenvalues of the kept dimensions."""
        return self.phi_all[: self.dimension]

    def transform_embeddings(self, embeddings: np.ndarray) -> np.ndarray:
        """(n, dimension) float64 PLDA features of embeddings (n, E)."""
        x = np.asarray(embeddings, dtype=np.float64)
        x = _length_norm(x - self.mean1, np.sqrt(self.lda.shape[0]))
        x = _length_norm(x @ self.lda - self.mean2, np.sqrt(self.lda.shape[1]))
        return ((x - self.mu) @ self.transform.T)[:, : self.dimension]
