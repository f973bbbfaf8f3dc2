"""The VAD fallback's pieces: batching with masks, clustering with short pieces assigned,
turns from touching pieces."""

from __future__ import annotations

import numpy as np

from witness.diarize.config import GE2E_PIECE_CLUSTERING
from witness.diarize.pieces import cluster_pieces, piece_batch, piece_turns
from witness.transcript import Turn


def test_piece_batch_pads_and_masks_each_piece():
    signal = np.arange(48000, dtype=np.float32)
    waveforms, masks = piece_batch(signal, [(0.0, 1.0), (1.0, 2.5), (2.5, 2.51)])
    assert waveforms.shape == (3, 24000) and masks.shape == (3, 150)
    np.testing.assert_array_equal(waveforms[0, :16000], signal[:16000])
    assert not waveforms[0, 16000:].any() and masks[0].sum() == 100 and masks[1].sum() == 150
    assert masks[2].sum() == 1  # 160 samples: one 10 ms mask frame
    empty_w, empty_m = piece_batch(signal, [])
    assert empty_w.shape[0] == 0 and empty_m.shape[0] == 0


def _unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_short_and_unembedded_pieces_never_form_clusters():
    rng = np.random.default_rng(0)
    a, b, odd = rng.standard_normal((3, 16))
    rows = [a, a, b, b, a, odd, np.full(16, np.nan)]
    embeddings = np.stack([_unit(r + 0.05 * rng.standard_normal(16)) for r in rows])
    durations = np.array([2, 2, 2, 2, 2, 0.5, 0.3])  # the odd piece is too short to train on
    result = cluster_pieces(embeddings, durations, GE2E_PIECE_CLUSTERING)
    labels = result.labels.tolist()
    assert result.found == 2 and len(set(labels)) == 2
    assert labels[:5] == [0, 0, 1, 1, 0]
    assert labels[6] == labels[5]  # unembedded: the speaker of its neighbour in time


def test_no_trainable_pieces_is_one_speaker_or_none():
    assert cluster_pieces(np.full((2, 4), np.nan), np.ones(2), GE2E_PIECE_CLUSTERING).labels.tolist() == [0, 0]
    empty = cluster_pieces(np.zeros((0, 4)), np.zeros(0), GE2E_PIECE_CLUSTERING)
    assert empty.found == 0 and len(empty.labels) == 0


def test_touching_pieces_of_one_speaker_join():
    pieces = [(0.0, 2.0), (2.0, 4.0), (4.0, 5.0), (6.0, 7.0), (7.0, 8.0)]
    turns = piece_turns(pieces, np.array([3, 3, 1, 1, 3]))
    assert turns == (Turn(0.0, 4.0, "SPEAKER_00"), Turn(4.0, 5.0, "SPEAKER_01"),
                     Turn(6.0, 7.0, "SPEAKER_01"), Turn(7.0, 8.0, "SPEAKER_00"))
