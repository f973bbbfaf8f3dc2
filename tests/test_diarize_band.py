"""Narrowband audio is told from wideband, and the clustering takes its s-norm cut by band.

The sample call is a real telephone call (narrowband); the wideband signal is generated: a
120 Hz voice-like pulse train with harmonics up to 8 kHz, in white noise at 20 dB SNR, and the
same signal through the tuning corpus's telephone channel (300-3400 Hz, 8 kHz, mu-law).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from witness.diarize.band import NARROW_DB, high_band_db, narrowband
from witness.diarize.config import CAMPPLUS_CLUSTERING, config_for
from witness.diarize.pipeline import Diarizer

SAMPLE_RATE = 16000


def wideband_voice(seconds: float = 6.0, seed: int = 0) -> np.ndarray:
    """(n,) float32: harmonics of 120 Hz to 7.9 kHz, amplitude 1/k, 0.25 s on / 0.25 s off, in white noise at 20 dB."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    voice = sum(np.sin(2 * np.pi * 120 * k * t) / k for k in range(1, int(7900 / 120) + 1))
    voice *= (np.floor(t / 0.25) % 2 == 0)
    noise = np.random.default_rng(seed).standard_normal(len(t))
    noise *= np.sqrt(np.mean(voice ** 2) / np.mean(noise ** 2)) * 10 ** (-20 / 20)
    mix = voice + noise
    return (0.3 * mix / np.abs(mix).max()).astype(np.float32)


def test_the_sample_call_is_narrowband(sample_audio):
    assert high_band_db(sample_audio) < NARROW_DB - 20 and narrowband(sample_audio)


def test_a_wideband_signal_becomes_narrowband_through_the_telephone_channel():
    from scripts.corpus_acoustics import channel

    wide = wideband_voice()
    assert high_band_db(wide) > NARROW_DB + 10 and not narrowband(wide)
    phone = channel(wide.astype(np.float64), "telephone", None).astype(np.float32)
    assert high_band_db(phone) < NARROW_DB - 10 and narrowband(phone)


def test_silence_and_short_signals_read_no_high_band():
    assert high_band_db(np.zeros(SAMPLE_RATE, dtype=np.float32)) == float("-inf")
    assert high_band_db(np.ones(100, dtype=np.float32)) == float("-inf")


@pytest.fixture(scope="module")
def diarizer(default_models):
    return Diarizer(dataclasses.replace(default_models, vad=None), config_for("campplus"))


def test_the_clustering_takes_the_wideband_cut_on_wideband_audio_only(diarizer, sample_audio):
    wide_cut = CAMPPLUS_CLUSTERING.wideband_snorm_threshold
    assert wide_cut is not None and wide_cut > CAMPPLUS_CLUSTERING.snorm_threshold
    assert diarizer.clustering_for(wideband_voice()) == dataclasses.replace(CAMPPLUS_CLUSTERING,
                                                                              snorm_threshold=wide_cut)
    assert diarizer.clustering_for(sample_audio) == CAMPPLUS_CLUSTERING
    assert diarizer.clustering_for(None) == CAMPPLUS_CLUSTERING  # no signal: the config's own cut
    one_cut = Diarizer(diarizer.models, dataclasses.replace(
        diarizer.config, clustering=dataclasses.replace(CAMPPLUS_CLUSTERING, wideband_snorm_threshold=None)))
    assert one_cut.clustering_for(wideband_voice()).snorm_threshold == CAMPPLUS_CLUSTERING.snorm_threshold
