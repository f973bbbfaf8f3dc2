"""Speaker embeddings on the sample call: GE2E per window with masks, pooled partials, and
WeSpeaker (its frame plumbing here; the real model only where it has been downloaded)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from witness.diarize.embedding import (
    CamPlusPlusEmbedder,
    GE2EEmbedder, embed_by_length, Ge2eOptions, WeSpeakerEmbedder, keep_frames, partial_starts)
from witness.evaluate.oracle import alone_mask, cut_pieces, solo_intervals
from witness.diarize.pooled_partials import PooledGE2E
from witness.diarize.segmentation import (
    FRAME_SIZE_SAMPLES, FRAME_STEP_SAMPLES, FRAMES_PER_WINDOW, WINDOW_SAMPLES)
from witness.models import store
from witness.models.diarization_catalogue import WESPEAKER_RESNET34_LM
from witness.models.ge2e import ge2e_onnx_path
from witness.rttm import read_rttm

A, B = "speaker90", "speaker91"
FRAME_STEP, FRAME_SIZE = FRAME_STEP_SAMPLES / 16000, FRAME_SIZE_SAMPLES / 16000


@pytest.fixture(scope="module")
def turns(sample_call):
    return read_rttm(sample_call / "sample.rttm")["sample"]


@pytest.fixture(scope="module")
def ge2e():
    return GE2EEmbedder(ge2e_onnx_path())


def window_mask(turns, speaker: str, start: int) -> np.ndarray:
    """(589,) float32: 1 where ``speaker`` talks alone, over the window starting at sample ``start``."""
    return alone_mask(turns, speaker, start / 16000, FRAMES_PER_WINDOW, FRAME_STEP, FRAME_SIZE)


def solo_pieces(sample_audio, turns, seconds=1.5):
    """Pieces of ``seconds`` where one speaker talks alone: ((P, samples) float32, (P,) labels)."""
    pieces, labels = [], []
    for speaker, intervals in solo_intervals(turns).items():
        for s, _ in cut_pieces(intervals, seconds, seconds):
            pieces.append(sample_audio[int(s * 16000):int(s * 16000) + int(seconds * 16000)])
            labels.append(speaker)
    return np.stack(pieces), np.array(labels)


def test_ge2e_separates_the_two_speakers(ge2e, sample_audio, turns):
    pieces, labels = solo_pieces(sample_audio, turns)
    emb = ge2e.embed(pieces)
    assert emb.shape == (len(pieces), 256) and np.isfinite(emb).all()
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    sim = emb @ emb.T
    same = labels[:, None] == labels[None, :]
    upper = np.triu(np.ones_like(same), 1).astype(bool)
    assert sim[same & upper].mean() > sim[~same & upper].mean() + 0.05
    np.fill_diagonal(sim, -1)
    assert (labels[sim.argmax(axis=1)] == labels).mean() >= 0.8


def test_masks_pick_the_speaker_in_a_mixed_window(ge2e, sample_audio, turns):
    start = 8 * 16000  # 8-18 s: both speakers take turns
    window = sample_audio[start:start + WINDOW_SAMPLES]
    masks = np.stack([window_mask(turns, A, start), window_mask(turns, B, start)])
    by_mask = ge2e.embed(np.stack([window, window]), masks)
    pieces, labels = solo_pieces(sample_audio, turns)
    solo = ge2e.embed(pieces)
    centroid = {s: solo[labels == s].mean(axis=0) for s in (A, B)}
    assert by_mask[0] @ centroid[A] > by_mask[0] @ centroid[B]
    assert by_mask[1] @ centroid[B] > by_mask[1] @ centroid[A]


def test_too_little_clean_audio_gives_nan(ge2e, sample_audio):
    window = sample_audio[8 * 16000:8 * 16000 + WINDOW_SAMPLES]
    short = np.zeros(FRAMES_PER_WINDOW, np.float32)
    short[100:130] = 1  # 30 frames * 17 ms = 0.5 s < 1 s
    enough = np.zeros(FRAMES_PER_WINDOW, np.float32)
    enough[100:200] = 1  # 1.7 s
    emb = ge2e.embed(np.stack([window] * 4), np.stack([short, np.zeros_like(short), enough, 1 + 0 * short]))
    assert np.isnan(emb[0]).all() and np.isnan(emb[1]).all()
    assert np.isfinite(emb[2]).all() and np.isfinite(emb[3]).all()


def test_rows_do_not_influence_each_other(ge2e, sample_audio):
    windows = np.stack([sample_audio[i:i + 48000] for i in (130_000, 250_000, 380_000)])
    together = ge2e.embed(windows)
    alone = np.concatenate([ge2e.embed(w[None]) for w in windows])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_quiet_audio_is_raised_like_resemblyzer_does(ge2e, sample_audio):
    piece = sample_audio[250_000:282_000]
    np.testing.assert_allclose(ge2e.embed(piece[None] * 0.05), ge2e.embed(piece[None]), atol=1e-4)


def test_nan_audio_is_zeroed_with_a_warning(ge2e, sample_audio, caplog):
    piece = sample_audio[250_000:282_000].copy()
    piece[100:200] = np.nan
    with caplog.at_level(logging.WARNING):
        emb = ge2e.embed(piece[None])
    assert np.isfinite(emb).all()
    assert "100 NaN/Inf samples" in caplog.text


def test_keep_frames_takes_the_nearest_mask_value():
    masks = np.array([[1, 0, 0, 1]], dtype=np.float32)  # 4 mask frames over 400 samples
    keep = keep_frames(masks, 400, np.array([10, 120, 250, 399]), rows=1)
    assert keep.tolist() == [[True, False, False, True]]
    assert keep_frames(None, 400, np.arange(3), rows=2).all()
    with pytest.raises(ValueError, match="masks"):
        keep_frames(masks, 400, np.arange(3), rows=2)


@pytest.mark.parametrize("frames, starts", [
    (100, [0]), (160, [0]), (190, [0]), (200, [0, 77]), (237, [0, 77]), (400, [0, 77, 154, 231]),
])
def test_partials_follow_resemblyzer(frames, starts):
    # Resemblyzer's compute_partial_slices at rate 1.3, min_coverage 0.75, in mel frames
    assert partial_starts(frames, Ge2eOptions()).tolist() == starts


def test_pooled_partials_agree_with_per_window_embeddings(ge2e, sample_audio, turns, monkeypatch):
    starts = np.arange(0, 21) * 16000
    embedded = []  # partials per call to the real model
    real = ge2e.embed_partials
    monkeypatch.setattr(ge2e, "embed_partials", lambda mels: embedded.append(len(mels)) or real(mels))
    pooled = PooledGE2E(ge2e, sample_audio)
    rows, per_window_rows, masks = [], [], []
    for start in starts:
        for speaker in (A, B):
            mask = window_mask(turns, speaker, int(start))
            if mask.sum() > 300:  # > 5 s alone
                rows.append(start)
                masks.append(mask)
                per_window_rows.append(sample_audio[start:start + WINDOW_SAMPLES])
    pooled_emb = np.concatenate([pooled.embed(np.array([s]), m[None]) for s, m in zip(rows, masks)])
    monkeypatch.undo()
    per_window = ge2e.embed(np.stack(per_window_rows), np.stack(masks))
    assert np.isfinite(pooled_emb).all()
    cosines = np.sum(pooled_emb * per_window, axis=1)
    assert np.median(cosines) > 0.9
    # each partial was embedded once along the 30 s, far fewer than the per-window partials
    assert sum(embedded) <= 30 * 2
    assert len(pooled._cache) < sum(embedded)  # early partials were forgotten


def test_pooled_returns_nan_where_no_partial_is_clean(ge2e, sample_audio):
    pooled = PooledGE2E(ge2e, sample_audio)
    mask = np.zeros((1, FRAMES_PER_WINDOW), np.float32)
    mask[0, ::2] = 1  # half the frames: no partial reaches 90% clean
    assert np.isnan(pooled.embed(np.array([0]), mask)).all()


def _frame_mean_graph(path):
    """A stand-in with WeSpeaker's signature, (B, T, 80) -> (B, 256): the mean of the input
    frames times a fixed matrix. It tests the embedder's frame plumbing, not WeSpeaker."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = np.random.default_rng(0).standard_normal((80, 256)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["feats"], ["mean"], axes=[1], keepdims=0),
         helper.make_node("MatMul", ["mean", "w"], ["embs"])],
        "frame_mean",
        [helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["B", "T", 80])],
        [helper.make_tensor_value_info("embs", TensorProto.FLOAT, ["B", 256])],
        [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return weight


def test_wespeaker_embeds_only_the_kept_fbank_frames(tmp_path, sample_audio):
    weight = _frame_mean_graph(tmp_path / "stand-in.onnx")
    embedder = WeSpeakerEmbedder(tmp_path / "stand-in.onnx", min_clean_seconds=0.5)
    windows = np.stack([sample_audio[130_000:162_000], sample_audio[250_000:282_000], sample_audio[380_000:412_000]])
    masks = np.ones((3, 100), np.float32)
    masks[0, 50:] = 0  # first half only
    masks[2, :] = 0
    masks[2, :20] = 1  # 0.4 s: too little
    emb = embedder.embed(windows, masks)
    feats = embedder.features(windows)
    keep0 = (np.arange(feats.shape[1]) * 160 + 200) * 100 // 32000 < 50
    for row, keep in ((0, keep0), (1, np.ones(feats.shape[1], bool))):
        expected = feats[row, keep].mean(axis=0) @ weight
        np.testing.assert_allclose(emb[row], expected / np.linalg.norm(expected), atol=1e-5)
    assert np.isnan(emb[2]).all()


def test_wespeaker_resnet34_lm_on_the_sample_call(sample_audio, turns):
    path = store.find(WESPEAKER_RESNET34_LM)
    if path is None:
        pytest.skip("WeSpeaker ResNet34-LM is download-only and has not been downloaded here "
                    "(`witness models pull` when online)")
    pieces, labels = solo_pieces(sample_audio, turns)
    emb = WeSpeakerEmbedder(path).embed(pieces)
    sim = emb @ emb.T
    same = labels[:, None] == labels[None, :]
    upper = np.triu(np.ones_like(same), 1).astype(bool)
    assert sim[same & upper].mean() > sim[~same & upper].mean() + 0.1


@pytest.fixture(scope="module")
def campplus(campplus_onnx):
    return CamPlusPlusEmbedder(campplus_onnx)


def test_campplus_separates_the_two_speakers(campplus, sample_audio, turns):
    pieces, labels = solo_pieces(sample_audio, turns)
    emb = campplus.embed(pieces)
    assert emb.shape == (len(pieces), 192) and campplus.dimension == 192 and np.isfinite(emb).all()
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    sim = emb @ emb.T
    same = labels[:, None] == labels[None, :]
    upper = np.triu(np.ones_like(same), 1).astype(bool)
    assert sim[same & upper].mean() > sim[~same & upper].mean() + 0.2
    np.fill_diagonal(sim, -1)
    assert (labels[sim.argmax(axis=1)] == labels).mean() >= 0.8


def test_campplus_masks_pick_the_speaker_in_a_mixed_window(campplus, sample_audio, turns):
    start = 8 * 16000  # 8-18 s: both speakers take turns
    window = sample_audio[start:start + WINDOW_SAMPLES]
    masks = np.stack([window_mask(turns, A, start), window_mask(turns, B, start)])
    by_mask = campplus.embed(np.stack([window, window]), masks)
    pieces, labels = solo_pieces(sample_audio, turns)
    solo = campplus.embed(pieces)
    centroid = {s: solo[labels == s].mean(axis=0) for s in (A, B)}
    assert by_mask[0] @ centroid[A] > by_mask[0] @ centroid[B]
    assert by_mask[1] @ centroid[B] > by_mask[1] @ centroid[A]


def test_campplus_embeds_the_kept_frames_normalised_over_themselves(campplus, sample_audio):
    window = sample_audio[8 * 16000:8 * 16000 + WINDOW_SAMPLES]
    mask = np.zeros(FRAMES_PER_WINDOW, np.float32)
    mask[:295] = 1  # the first half of the window (295 * 17 ms = 5.0 s)
    short = np.zeros(FRAMES_PER_WINDOW, np.float32)
    short[100:125] = 1  # 25 frames * 17 ms = 0.42 s < 0.5 s
    emb = campplus.embed(np.stack([window] * 3), np.stack([mask, short, 0 * short]))
    assert np.isnan(emb[1]).all() and np.isnan(emb[2]).all()
    alone = campplus.embed(window[None, :80_320])  # the same 500 fbank frames (centres < 80 136), cut out
    assert emb[0] @ alone[0] > 0.9999


def test_campplus_rows_do_not_influence_each_other(campplus, sample_audio):
    windows = np.stack([sample_audio[i:i + 48000] for i in (130_000, 250_000, 380_000)])
    together = campplus.embed(windows)
    alone = np.concatenate([campplus.embed(w[None]) for w in windows])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_campplus_batches_equal_single_rows(campplus_onnx, sample_audio):
    """Rows that share a model call (equal kept-frame counts: here no masks) give what they
    give alone: 20 windows in calls of 16 + 4 rows vs 20 calls of one."""
    windows = np.stack([sample_audio[i:i + 48000] for i in range(0, 20 * 20_000, 20_000)])  # 3 s, 1.25 s apart
    batched = CamPlusPlusEmbedder(campplus_onnx, batch_size=16).embed(windows)
    single = CamPlusPlusEmbedder(campplus_onnx, batch_size=1).embed(windows)
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_pieces_embedded_by_length_on_two_threads_are_each_alone(campplus, sample_audio):
    """Pieces of the sample call grouped by filterbank frame count (6 of 3 s, one a call; 8 of
    1.2 s and one of 1.204 s, whose last samples the filterbank never reads: calls of 3 + 3 + 3;
    0.3 s, too short) and embedded on two threads: bit for bit what each gives alone, in order."""
    starts = [i * 60_000 for i in range(6)] + [i * 40_000 for i in range(9)] + [300_000, 410_000]
    lengths = [48_000] * 6 + [19_200] * 8 + [19_264, 40_000, 4_800]
    pieces = [sample_audio[s:s + n] for s, n in zip(starts, lengths)]
    together = embed_by_length(campplus.embed, pieces, workers=2)
    alone = [campplus.embed(piece[None])[0] for piece in pieces]
    assert len(together) == len(pieces) and np.isnan(together[-1]).all()
    for a, b in zip(together, alone):
        assert np.array_equal(a, b, equal_nan=True)


def test_campplus_features_of_the_kept_frames_only_are_those_of_the_whole_window(campplus, sample_audio, turns):
    """The fbank is computed for the kept frames only: the same rows as computing the whole
    window and then picking them (what the embedder did before), and the same embeddings."""
    from witness.diarize.embedding import keep_frames
    from witness.diarize.features import (FBANK_FRAME, FBANK_HOP, campplus_fbank, fbank_frames,
                                          kaldi_fbank_of_frames, mean_normalise)

    starts = [0, 8 * 16000, 20 * 16000]
    windows = np.stack([sample_audio[s:s + WINDOW_SAMPLES] for s in starts for _ in (A, B)])
    masks = np.stack([window_mask(turns, who, s) for s in starts for who in (A, B)])
    whole = campplus_fbank(windows)
    centres = np.arange(whole.shape[1]) * FBANK_HOP + FBANK_FRAME // 2
    keep = keep_frames(masks, WINDOW_SAMPLES, centres, len(windows))
    frames = fbank_frames(windows, 1.0)
    for row in range(len(windows)):
        np.testing.assert_allclose(kaldi_fbank_of_frames(frames[row, keep[row]], "povey"), whole[row, keep[row]],
                                   rtol=0, atol=1e-5)
    before = np.full((len(windows), 192), np.nan, np.float32)
    for row in np.flatnonzero(keep.sum(axis=1) >= 50):  # 0.5 s of kept frames
        before[row] = campplus.embed_features(mean_normalise(whole[row, keep[row]][None]))[0]
    np.testing.assert_allclose(campplus.embed(windows, masks), before, atol=1e-6)
