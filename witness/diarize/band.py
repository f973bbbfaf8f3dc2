"""Whether a recording is narrowband (a telephone channel or codec at 8 kHz): next to no
energy above 4 kHz against the telephone band (300-3400 Hz).

Measured on 16 kHz audio from up to ``FRAMES`` evenly spaced 32 ms frames (a bounded cost
on any length). On the tuning corpus (v1 tune + check, v2 tune) and the dev set, narrowband
calls (telephone, AMR-NB, Opus) read -78 to -45 dB and wideband ones -25 to 0 dB, noise
included (the corpus adds its noise before the channel, as a real line does).
"""

from __future__ import annotations

import numpy as np

from witness.diarize.features import SAMPLE_RATE

NARROW_DB = -35.0  # high-band to telephone-band power under this: narrowband
FRAMES = 4000
FRAME = 512


def high_band_db(signal: np.ndarray) -> float:
    """Power in 4.2-7.8 kHz over power in 300-3400 Hz, in dB, of 16 kHz ``signal`` ((n,) float);
    -inf for a signal without energy in the telephone band."""
    x = np.asarray(signal, dtype=np.float32).reshape(-1)
    if len(x) < FRAME:
        return float("-inf")
    starts = np.unique(np.linspace(0, len(x) - FRAME, min(FRAMES, len(x) // FRAME)).astype(np.int64))
    frames = x[starts[:, None] + np.arange(FRAME)] * np.hanning(FRAME).astype(np.float32)
    power = (np.abs(np.fft.rfft(frames, axis=1)) ** 2).sum(axis=0)
    freqs = np.fft.rfftfreq(FRAME, 1.0 / SAMPLE_RATE)
    low = power[(freqs > 300) & (freqs < 3400)].sum()
    high = power[(freqs > 4200) & (freqs < 7800)].sum()
    if low <= 0:
        return float("-inf")
    return float(10 * np.log10(max(high, 1e-30) / low))


def narrowband(signal: np.ndarray) -> bool:
    """True when 16 kHz ``signal`` came through an 8 kHz channel (``high_band_db`` under ``NARROW_DB``)."""
    return high_band_db(signal) < NARROW_DB
