"""Powerset decoding equals pyannote's ``Powerset`` on its own arrays."""

from __future__ import annotations

import numpy as np
import pytest

from tests.diarize_data import load
from witness.diarize.powerset import decode_powerset, num_powerset_classes, powerset_mapping


@pytest.mark.parametrize(
    "num_speakers, max_set_size",
    [(n, k) for n in range(2, 5) for k in range(1, n + 1)],
)
def test_mapping_equals_pyannote(fixtures_dir, num_speakers, max_set_size):
    expected = load(fixtures_dir, f"powerset_mapping_{num_speakers}_{max_set_size}.npy")
    mapping = powerset_mapping(num_speakers, max_set_size)
    assert mapping.dtype == np.float32
    np.testing.assert_array_equal(mapping, expected)
    assert num_powerset_classes(num_speakers, max_set_size) == len(expected)


def test_hard_decoding_equals_pyannote(fixtures_dir):
    logits = load(fixtures_dir, "powerset_input_logits.npy")  # (1, 589, 7)
    before = logits.copy()
    activity = decode_powerset(logits, num_speakers=3, max_set_size=2)
    assert activity.shape == (1, 589, 3) and activity.dtype == np.float32
    np.testing.assert_array_equal(activity, load(fixtures_dir, "powerset_hard_output.npy"))
    np.testing.assert_array_equal(logits, before)
    assert activity.sum(axis=-1).max() <= 2  # never more than two speakers at once


def test_decoding_rejects_a_wrong_class_count():
    with pytest.raises(ValueError, match="expected 7 powerset classes"):
        decode_powerset(np.zeros((2, 10, 8), dtype=np.float32))
