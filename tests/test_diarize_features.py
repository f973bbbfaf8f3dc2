"""Frontends: the GE2E power mel (pinned to librosa's output) and the Kaldi fbank (against
kaldi-native-fbank, an independent C++ implementation; a test-only dependency)."""

from __future__ import annotations

import logging

import kaldi_native_fbank as knf
import numpy as np
import pytest
from scipy.signal import ShortTimeFFT

from witness.diarize.features import (
    finite_audio, frame_energy, ge2e_mel, kaldi_fbank, kaldi_window, mean_normalise)
from witness.models.melfilters import mel_filters


def test_ge2e_mel_equals_librosa_on_the_sample_call(sample_audio):
    # Numbers printed by librosa 0.11.0:
    # librosa.feature.melspectrogram(y=sample_audio, sr=16000, n_fft=400, hop_length=160, n_mels=40)
    mel = ge2e_mel(sample_audio)
    assert mel.shape == (3001, 40) and mel.dtype == np.float32
    np.testing.assert_allclose(mel[1500, [0, 10, 20, 39]],
                               [9.8691107e-06, 3.5212404e-05, 2.2969265e-04, 9.3909103e-10], rtol=1e-4)
    assert mel.astype(np.float64).sum() == pytest.approx(540.4564, rel=1e-5)


def test_slaney_filters_equal_librosa():
    # librosa.filters.mel(sr=16000, n_fft=400, n_mels=40), values printed by librosa 0.11.0
    filters = mel_filters(40)
    assert filters.shape == (40, 201)
    np.testing.assert_allclose(filters[0, 1:4], [0.0073902095, 0.012404521, 0.0050143115], rtol=1e-6)
    assert filters[20].argmax() == 44 and filters[20].max() == pytest.approx(0.0071919174, rel=1e-6)
    assert list(np.flatnonzero(filters[39])[[0, -1]]) == [172, 199]
    # Slaney normalisation: every triangle has unit area in Hz (40 Hz per FFT bin)
    np.testing.assert_allclose(filters.sum(axis=1) * 40.0, 1.0, atol=0.05)  # sampled at 40 Hz bins


def test_ge2e_power_spectrum_equals_scipy_stft(sample_audio):
    """The STFT inside the mel, checked by scipy's independent ShortTimeFFT (periodic Hann,
    centred frames over zero padding) before the filters apply."""
    piece = sample_audio[100_000:116_000]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    stft = ShortTimeFFT(window, hop=160, fs=16000, mfft=400)
    power = np.abs(stft.stft(piece, p0=0, p1=1 + len(piece) // 160)) ** 2  # (201, frames)
    expected = (mel_filters(40) @ power).T
    np.testing.assert_allclose(ge2e_mel(piece), expected, rtol=1e-3, atol=1e-9)


def test_ge2e_mel_is_batched_and_uncentred_frames_match(sample_audio):
    batch = np.stack([sample_audio[:32000], sample_audio[32000:64000]])
    mel = ge2e_mel(batch)
    assert mel.shape == (2, 201, 40)
    np.testing.assert_allclose(mel[1], ge2e_mel(sample_audio[32000:64000]), rtol=1e-6)
    # uncentred frames over explicit context equal the centred frames of the longer signal
    inner = ge2e_mel(sample_audio[48000 - 200:48000 + 160 * 9 + 200], center=False)
    np.testing.assert_allclose(inner, ge2e_mel(sample_audio)[300:310], rtol=1e-4, atol=1e-10)


def test_frame_energy_blocks():
    wave = np.zeros(1000, dtype=np.float32)
    wave[400:480] = 1.0  # the first half of the block centred on sample 480
    energy = frame_energy(wave)
    assert energy.shape == (1 + 1000 // 160,)
    assert energy[3] == pytest.approx(0.5) and energy[2] == 0 and energy[4] == 0
    for length in (1, 80, 81, 159, 250, 1090):  # any length, not only multiples of the hop
        wave = np.ones(length, dtype=np.float32)
        energy = frame_energy(wave)
        assert energy.shape == (1 + length // 160,) and np.all(energy > 0)


def _knf_fbank(samples: np.ndarray, window: str) -> np.ndarray:
    opts = knf.FbankOptions()
    opts.frame_opts.dither = 0
    opts.frame_opts.samp_freq = 16000
    opts.frame_opts.window_type = window
    opts.mel_opts.num_bins = 80
    opts.use_energy = False
    fbank = knf.OnlineFbank(opts)
    fbank.accept_waveform(16000, (samples * 32768.0).tolist())
    fbank.input_finished()
    return np.array([fbank.get_frame(i) for i in range(fbank.num_frames_ready)])


@pytest.mark.parametrize("window", ["hamming", "povey"])
def test_kaldi_fbank_equals_kaldi_native_fbank(sample_audio, window):
    ours = kaldi_fbank(sample_audio, window)
    reference = _knf_fbank(sample_audio, window)
    assert ours.shape == reference.shape == (2998, 80)
    # kaldi-native-fbank computes in float32; the log-energies agree to a few 1e-4
    assert np.abs(ours - reference).max() < 2e-3
    assert np.median(np.abs(ours - reference)) < 1e-4


def test_kaldi_fbank_short_input_and_batches(sample_audio):
    assert kaldi_fbank(sample_audio[:399]).shape == (0, 80)
    assert kaldi_fbank(sample_audio[:400]).shape == (1, 80)
    batch = kaldi_fbank(np.stack([sample_audio[:16000], sample_audio[16000:32000]]))
    assert batch.shape == (2, 98, 80)
    np.testing.assert_allclose(batch[1], kaldi_fbank(sample_audio[16000:32000]), rtol=1e-6)
    # digital silence sits on the float32-epsilon floor instead of -inf
    assert np.isfinite(kaldi_fbank(np.zeros(16000, np.float32))).all()


def test_kaldi_windows():
    assert kaldi_window("hamming")[0] == pytest.approx(0.08)
    assert kaldi_window("povey")[0] == 0.0 and kaldi_window("povey")[199] == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="hamming"):
        kaldi_window("blackman")


def test_mean_normalise_centres_each_bin_without_touching_input(sample_audio):
    feats = kaldi_fbank(sample_audio[:48000])
    before = feats.copy()
    centred = mean_normalise(feats)
    np.testing.assert_allclose(centred.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_array_equal(feats, before)


def test_finite_audio_zeroes_counts_and_warns(caplog):
    wave = np.array([0.1, np.nan, 0.2, np.inf, -np.inf], dtype=np.float32)
    with caplog.at_level(logging.WARNING):
        clean = finite_audio(wave, "test input")
    np.testing.assert_array_equal(clean, np.array([0.1, 0.0, 0.2, 0.0, 0.0], dtype=np.float32))
    assert np.isnan(wave[1])  # the caller's array is untouched
    assert "test input: 3 NaN/Inf samples" in caplog.text
    fine = np.ones(4, dtype=np.float32)
    assert finite_audio(fine) is fine
