"""The optimal speaker mapping that DER and WDER both score under (the Hungarian method)."""

from __future__ import annotations

from typing import Mapping

import numpy as np
from scipy.optimize import linear_sum_assignment


def optimal_mapping(agreement: Mapping[tuple[str, str], float]) -> dict[str, str]:
    """Hypothesis → reference labels maximising the total ``agreement[(hyp, ref)]`` of the
    mapped pairs (seconds together for DER, words for WDER). Pairs that never agree stay
    unmapped, as in pyannote.metrics' HungarianMapper."""
    hyp_labels = sorted({h for h, _ in agreement})
    ref_labels = sorted({r for _, r in agreement})
    h_index = {label: i for i, label in enumerate(hyp_labels)}
    r_index = {label: i for i, label in enumerate(ref_labels)}
    weights = np.zeros((len(hyp_labels), len(ref_labels)), dtype=np.float64)
    for (h, r), value in agreement.items():
        weights[h_index[h], r_index[r]] += value
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return {hyp_labels[i]: ref_labels[j] for i, j in zip(rows, cols) if weights[i, j] > 0}
