"""Whisper's mel filterbank, computed with numpy (GE2E's 40-band input uses it too).

Whisper ships ``mel_filters.npz``, made by ``librosa.filters.mel(sr=16000, n_fft=400,
n_mels=80 or 128)``: Slaney's mel scale (linear below 1 kHz, logarithmic above) and Slaney
area normalisation, in float32. This reproduces librosa's arithmetic step by step (float64
ramps, stored into float32, then scaled) so the result is bit-identical to the filterbank
that whisper.cpp's own ggml files carry (checked against whisper.cpp's ``for-tests-ggml-*``
model headers: 0 of 16,080 values differ).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from witness.audio import SAMPLE_RATE

N_FFT = 400
_F_SP = 200.0 / 3  # Hz per mel below 1 kHz
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = np.log(6.4) / 27.0


def hz_to_mel(hz: np.ndarray | float) -> np.ndarray:
    """Slaney mel of ``hz`` (float64, same shape)."""
    f = np.asarray(hz, dtype=np.float64)
    log_part = _MIN_LOG_MEL + np.log(np.maximum(f, _MIN_LOG_HZ) / _MIN_LOG_HZ) / _LOGSTEP
    return np.where(f >= _MIN_LOG_HZ, log_part, f / _F_SP)


def mel_to_hz(mel: np.ndarray | float) -> np.ndarray:
    """Inverse of ``hz_to_mel`` (float64, same shape)."""
    m = np.asarray(mel, dtype=np.float64)
    return np.where(m >= _MIN_LOG_MEL, _MIN_LOG_HZ * np.exp(_LOGSTEP * (m - _MIN_LOG_MEL)), _F_SP * m)


@lru_cache(maxsize=None)
def mel_filters(n_mels: int, sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT) -> np.ndarray:
    """Triangular Slaney-normalised filters: (n_mels, n_fft // 2 + 1) float32, read-only."""
    fft_freqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sample_rate)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sample_rate / 2.0), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fft_freqs)
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper)).astype(np.float32) + np.float32(0.0)  # no -0.0
    enorm = 2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels])
    filters = (weights * enorm[:, None]).astype(np.float32)
    filters.flags.writeable = False
    return filters
