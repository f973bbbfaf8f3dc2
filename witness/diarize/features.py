"""Model input features in numpy: the GE2E power mel and the Kaldi-style log fbank.

Both work on 16 kHz mono float32 waveforms in [-1, 1], batched over leading axes.

- ``ge2e_mel``: what Resemblyzer's ``audio.wav_to_mel_spectrogram`` computes with librosa
  (>= 0.10) defaults: 400-sample (25 ms) periodic Hann window, 160-sample (10 ms) hop, frames
  centred (200 zeros padded at each end, so ``1 + samples // 160`` frames), power spectrum,
  40 Slaney mel bands with Slaney area normalisation, 0-8000 Hz (``melfilters.mel_filters``,
  the filterbank Whisper's files carry, at 40 bands). Power, not log.
- ``kaldi_fbank``: ``torchaudio.compliance.kaldi.fbank`` as pyannote and WeSpeaker call it
  (80 bins, 25/10 ms, ``snip_edges``, DC offset removed per frame, pre-emphasis 0.97, window
  "hamming" by default (WeSpeaker's and pyannote's choice; "povey" is Kaldi's default), FFT
  padded to 512, power, Kaldi mel scale 20-8000 Hz, log floored at float32 epsilon, no energy
  term, dither 0) on the waveform scaled to int16 range; ``mean_normalise`` subtracts the
  per-utterance mean of each bin as WeSpeaker does.
- ``campplus_fbank``: the same fbank as 3D-Speaker computes it for CAM++ (``Kaldi.fbank`` with
  torchaudio's defaults: "povey" window, on the waveform as loaded, in [-1, 1]). The scale only
  moves every log energy by a constant, except where the float32 floor binds (near-silent
  bands, e.g. above 4 kHz in telephone audio), so it is kept as trained.
"""

from __future__ import annotations

import logging
from functools import lru_cache

import numpy as np

from witness.audio import SAMPLE_RATE
from witness.models.melfilters import mel_filters

log = logging.getLogger(__name__)


GE2E_N_FFT = 400
GE2E_HOP = 160
GE2E_N_MELS = 40

FBANK_FRAME = 400
FBANK_HOP = 160
FBANK_N_FFT = 512
FBANK_N_MELS = 80
FBANK_LOW_HZ = 20.0
FBANK_PREEMPHASIS = 0.97
INT16_SCALE = 32768.0
_F32_EPS = float(np.finfo(np.float32).eps)


def finite_audio(waveform: np.ndarray, what: str = "audio") -> np.ndarray:
    """``waveform`` as float32 with NaN/Inf samples set to 0 (a copy only when needed).

    Non-finite samples would poison every model output they touch; they are counted and
    logged as a warning naming ``what``.
    """
    waveform = np.asarray(waveform, dtype=np.float32)
    bad = ~np.isfinite(waveform)
    count = int(bad.sum())
    if count:
        log.warning("%s: %d NaN/Inf samples set to 0 before the model", what, count)
        return np.where(bad, np.float32(0.0), waveform)
    return waveform


def _frames(waveform: np.ndarray, length: int, hop: int) -> np.ndarray:
    """Read-only strided view (..., n_frames, length) of frames starting every ``hop``."""
    if waveform.shape[-1] < length:
        return np.zeros((*waveform.shape[:-1], 0, length), dtype=waveform.dtype)
    view = np.lib.stride_tricks.sliding_window_view(waveform, length, axis=-1)
    return view[..., ::hop, :]


# ---------------------------------------------------------------- GE2E (librosa-style) mel


@lru_cache(maxsize=None)
def _hann(length: int) -> np.ndarray:
    """Periodic Hann window (as ``scipy.signal.get_window('hann', length)``)."""
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(length) / length)


def ge2e_frames(waveform: np.ndarray, center: bool = True) -> np.ndarray:
    """The 400-sample frames behind ``ge2e_mel``: a read-only view (..., frames, 400).

    With ``center`` (librosa's default) 1 + samples // 160 frames, frame k centred on sample
    160 k over 200 padded zeros at each end; without, 1 + (samples - 400) // 160 frames, frame
    k covering samples [160 k, 160 k + 400) (for a caller that supplies the context itself).
    """
    waveform = np.asarray(waveform, dtype=np.float32)
    if center:
        pad = [(0, 0)] * (waveform.ndim - 1) + [(GE2E_N_FFT // 2, GE2E_N_FFT // 2)]
        waveform = np.pad(waveform, pad)
    return _frames(waveform, GE2E_N_FFT, GE2E_HOP)


def ge2e_mel_of_frames(frames: np.ndarray) -> np.ndarray:
    """Power mel of raw frames: (..., 400) float32 → (..., 40) float32 (periodic Hann window,
    power spectrum, Slaney filters). Lets a caller transform only the frames it keeps."""
    spectrum = np.fft.rfft(frames * _hann(GE2E_N_FFT).astype(np.float32), axis=-1)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    return (power @ mel_filters(GE2E_N_MELS, n_fft=GE2E_N_FFT).T).astype(np.float32)


def ge2e_mel(waveform: np.ndarray, center: bool = True) -> np.ndarray:
    """GE2E encoder input: power mel spectrogram.

    waveform: (..., samples) float32. Returns (..., frames, 40) float32, frames as in
    ``ge2e_frames``.
    """
    return ge2e_mel_of_frames(ge2e_frames(waveform, center))


def frame_energy(waveform: np.ndarray, hop: int = GE2E_HOP) -> np.ndarray:
    """Mean square of each ``hop``-sample block, one per centred mel frame.

    waveform: (..., samples) float32. Returns (..., 1 + samples // hop) float64: block k
    covers samples [k*hop - hop/2, k*hop + hop/2) (zeros beyond the ends).
    """
    waveform = np.asarray(waveform, dtype=np.float64)
    n_frames = 1 + waveform.shape[-1] // hop
    right = max(0, n_frames * hop - hop // 2 - waveform.shape[-1])  # negative: the tail is cut
    pad = [(0, 0)] * (waveform.ndim - 1) + [(hop // 2, right)]
    blocks = np.pad(waveform, pad)[..., :n_frames * hop].reshape(*waveform.shape[:-1], n_frames, hop)
    return np.mean(blocks ** 2, axis=-1)


# ---------------------------------------------------------------- Kaldi fbank


def _kaldi_mel(hz: np.ndarray) -> np.ndarray:
    return 1127.0 * np.log(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


@lru_cache(maxsize=None)
def kaldi_mel_filters(n_mels: int = FBANK_N_MELS, n_fft: int = FBANK_N_FFT,
                      sample_rate: int = SAMPLE_RATE, low_hz: float = FBANK_LOW_HZ) -> np.ndarray:
    """Kaldi's triangular filters, triangles in the mel domain: (n_mels, 1 + n_fft // 2) float64
    (the Nyquist column is zero, as in Kaldi)."""
    bin_mel = _kaldi_mel(np.arange(n_fft // 2) * sample_rate / n_fft)
    low, high = _kaldi_mel(low_hz), _kaldi_mel(sample_rate / 2.0)
    delta = (high - low) / (n_mels + 1)
    left = low + delta * np.arange(n_mels)[:, None]
    rising = (bin_mel[None, :] - left) / delta
    falling = (left + 2.0 * delta - bin_mel[None, :]) / delta
    filters = np.maximum(0.0, np.minimum(rising, falling))
    filters = np.concatenate([filters, np.zeros((n_mels, 1))], axis=1)
    filters.flags.writeable = False
    return filters


@lru_cache(maxsize=None)
def kaldi_window(kind: str, length: int = FBANK_FRAME) -> np.ndarray:
    """Kaldi's symmetric windows that the models were trained with: "hamming" (WeSpeaker) and
    "povey" (Hann ** 0.85, CAM++)."""
    cosine = np.cos(2.0 * np.pi * np.arange(length) / (length - 1))
    if kind == "hamming":
        return 0.54 - 0.46 * cosine
    if kind == "povey":
        return (0.5 - 0.5 * cosine) ** 0.85
    raise ValueError(f"window {kind!r}: expected hamming or povey")


def kaldi_fbank(waveform: np.ndarray, window: str = "hamming", scale: float = INT16_SCALE) -> np.ndarray:
    """80-bin Kaldi log mel filterbank (see the module docstring for every setting).

    waveform: (..., samples) float32 in [-1, 1], multiplied by ``scale`` first (int16 range
    by default). Returns (..., 1 + (samples - 400) // 160, 80) float32 (0 frames under 400
    samples).
    """
    return kaldi_fbank_of_frames(fbank_frames(waveform, scale), window)


def fbank_frames(waveform: np.ndarray, scale: float = INT16_SCALE) -> np.ndarray:
    """The 400-sample frames behind ``kaldi_fbank`` (every 160 samples, ``snip_edges``), of
    the waveform times ``scale``: (..., frames, 400) float64."""
    return _frames(np.asarray(waveform, dtype=np.float64) * scale, FBANK_FRAME, FBANK_HOP)


def kaldi_fbank_of_frames(frames: np.ndarray, window: str = "hamming") -> np.ndarray:
    """``kaldi_fbank`` of raw frames (..., 400) → (..., 80) float32: every step works within
    a frame, so a caller may transform only the frames it keeps."""
    frames = frames - frames.mean(axis=-1, keepdims=True)
    previous = np.concatenate([frames[..., :1], frames[..., :-1]], axis=-1)
    frames = (frames - FBANK_PREEMPHASIS * previous) * kaldi_window(window)
    spectrum = np.fft.rfft(frames, n=FBANK_N_FFT, axis=-1)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    energies = power @ kaldi_mel_filters().T
    return np.log(np.maximum(energies, _F32_EPS)).astype(np.float32)


CAMPPLUS_WINDOW, CAMPPLUS_SCALE = "povey", 1.0


def campplus_fbank(waveform: np.ndarray) -> np.ndarray:
    """CAM++ input before mean normalisation, as 3D-Speaker trains on it: ``kaldi_fbank`` with
    the "povey" window on the unscaled waveform. (..., samples) float32 → (..., frames, 80) float32."""
    return kaldi_fbank(waveform, window=CAMPPLUS_WINDOW, scale=CAMPPLUS_SCALE)


def mean_normalise(features: np.ndarray) -> np.ndarray:
    """Subtract each bin's mean over frames. features: (..., frames, bins) float32."""
    features = np.asarray(features, dtype=np.float32)
    return features - features.mean(axis=-2, keepdims=True)
