"""ggml block quantisation: byte for byte what ggml's own Python package (gguf) writes."""

from __future__ import annotations

import numpy as np
import pytest
from gguf import GGMLQuantizationType, quants

from witness.models.quantize import dequantize, quantize

KINDS = {"q8_0": GGMLQuantizationType.Q8_0, "q5_0": GGMLQuantizationType.Q5_0, "q5_1": GGMLQuantizationType.Q5_1}


def weights() -> np.ndarray:
    """(64, 96) float32 like a weight matrix, with a zero block and a constant block."""
    array = np.random.default_rng(0).normal(scale=0.05, size=(64, 96)).astype(np.float32)
    array[0, :32] = 0.0
    array[1, 32:64] = 0.25
    return array


@pytest.mark.parametrize("kind", KINDS)
def test_quantize_matches_ggml(kind):
    array = weights()
    assert quantize(array, kind) == quants.quantize(array, KINDS[kind]).tobytes()


@pytest.mark.parametrize("kind, bound", [("q8_0", 0.005), ("q5_0", 0.04), ("q5_1", 0.04)])
def test_dequantize_round_trip(kind, bound):
    array = weights()
    data = quantize(array, kind)
    back = dequantize(data, kind, array.shape)
    reference = quants.dequantize(np.frombuffer(data, dtype=np.uint8).reshape(array.shape[0], -1), KINDS[kind])
    np.testing.assert_array_equal(back, reference)
    assert np.max(np.abs(back - array)) < bound * np.max(np.abs(array))


def test_quantize_refuses_ragged_rows():
    with pytest.raises(ValueError, match="multiple of 32"):
        quantize(np.zeros((2, 40), np.float32), "q8_0")
    with pytest.raises(ValueError, match="unknown quantisation"):
        quantize(np.zeros((2, 32), np.float32), "q4_0")
