"""Calls whose loud frames segmentation hears as nobody are decoded again with the silence
class lowered there (``SegmentationConfig.silence_bias``, gated per call by ``unheard_gate``).

Real audio: the sample call (a telephone call), and the same call in a reverberant room
(RT60 0.8 s, a synthetic decay) through Opus at 6 kbit/s as the tuning corpus renders it
(``scripts/corpus_acoustics.py``), where segmentation-3.0 hears some loud speech as nobody.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from witness.diarize.config import RuntimeOptions, config_for
from witness.diarize.pipeline import Diarizer
from witness.diarize.segmentation import FRAME_STEP_SAMPLES, cut_windows, frame_db, window_starts
from witness.rttm import read_rttm

SAMPLE_RATE = 16000


@pytest.fixture(scope="module")
def models(default_models):
    return dataclasses.replace(default_models, vad=None)


def diarizer(models, runtime: RuntimeOptions = RuntimeOptions(), **segmentation) -> Diarizer:
    config = config_for("campplus")
    return Diarizer(models, dataclasses.replace(config, segmentation=dataclasses.replace(config.segmentation,
                                                                                          **segmentation)), runtime)


@pytest.fixture(scope="module")
def opus_call(sample_audio) -> np.ndarray:
    from scipy import signal as sps

    from scripts.corpus_acoustics import channel, room_rir

    rir, _ = room_rir(0.8, np.random.default_rng(1), image_source=False)  # same audio with or without the corpus extra
    direct = int(np.argmax(np.abs(rir)))
    wet = sps.oaconvolve(sample_audio.astype(np.float64), rir[direct:] / abs(rir[direct]))[:len(sample_audio)]
    return channel(0.05 * wet / np.sqrt(np.mean(wet ** 2)), "opus", 6000).astype(np.float32)


def test_a_call_under_the_gate_is_decoded_once(models, sample_audio):
    plain = diarizer(models, silence_bias=0.0).embed_windows(sample_audio)
    gated = diarizer(models).embed_windows(sample_audio)
    assert plain.unheard is None and gated.unheard < diarizer(models).config.segmentation.unheard_gate
    assert np.array_equal(gated.segmentations.data, plain.segmentations.data)
    assert np.array_equal(gated.embeddings, plain.embeddings, equal_nan=True)


def test_over_the_gate_loud_frames_heard_as_nobody_become_speech(models, opus_call, sample_call):
    plain = diarizer(models, silence_bias=0.0).embed_windows(opus_call)
    share = diarizer(models).embed_windows(opus_call).unheard
    assert 0 < share < diarizer(models).config.segmentation.unheard_gate  # under the shipped gate: lowered here
    biased = diarizer(models, unheard_gate=share).embed_windows(opus_call)
    assert biased.unheard == share
    before, after = plain.segmentations.data > 0, biased.segmentations.data > 0
    assert (after >= before).all()  # speech is only added
    heard, was = after.any(axis=-1), before.any(axis=-1)
    added = heard & ~was
    starts = window_starts(len(opus_call), SAMPLE_RATE)
    loud_db, _ = diarizer(models).silence_bias(opus_call)
    assert not (added & ~(frame_db(cut_windows(opus_call, starts)) > loud_db)).any()  # and only in loud frames
    (reference,) = read_rttm(sample_call / "sample.rttm").values()
    times = (starts[:, None] + np.arange(added.shape[1]) * FRAME_STEP_SAMPLES + 495) / SAMPLE_RATE
    talk = np.zeros(times.shape, dtype=bool)
    for turn in reference:
        talk |= (times >= turn.start) & (times < turn.end)
    assert (added & talk).sum() >= 100 and (added & ~talk).sum() <= (added & talk).sum() // 10
    changed = (after != before).any(axis=(1, 2))
    assert np.array_equal(biased.embeddings[~changed], plain.embeddings[~changed], equal_nan=True)
    active = np.isfinite(biased.embeddings[changed]).all(axis=-1)
    assert active.any() and not np.array_equal(biased.embeddings[changed][active],
                                               plain.embeddings[changed][active])


def test_the_changed_windows_embed_the_same_on_two_threads_as_on_one(models, opus_call):
    share = diarizer(models).embed_windows(opus_call).unheard
    plain = diarizer(models, silence_bias=0.0).embed_windows(opus_call)
    one, two = (diarizer(models, RuntimeOptions(windows_per_batch=4, piece_workers=workers), unheard_gate=share)
                .embed_windows(opus_call) for workers in (1, 2))
    changed = (one.segmentations.data != plain.segmentations.data).any(axis=(1, 2))
    assert changed.sum() > 2 * 4  # at least three batches to share out
    assert np.array_equal(two.segmentations.data, one.segmentations.data)
    assert np.array_equal(two.embeddings, one.embeddings, equal_nan=True)
