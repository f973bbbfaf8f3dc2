"""One voice alone (a dictation, one side of a call) is heard as one speaker.

The audio is the sample call's speech of one of its two people, where the other is silent,
joined (as ``scripts/measure_counting.py --sets onevoice`` cuts it from the corpus calls),
wideband and through the corpus's telephone channel (``corpus_acoustics.channel``).
Segmentation-3.0 hears two local speakers at once in a few frames of each; clustering finds
one voice. Padding the per-frame count with speakers no cluster holds (pyannote's
``to_diarization``) made a second speaker of those frames.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from witness.diarize.aggregate import speaker_count
from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.rttm import read_rttm

SAMPLE_RATE = 16000


def lone_voice(samples: np.ndarray, reference, who: str) -> np.ndarray:
    """``who``'s speech in ``samples`` where no one else talks, joined."""
    keep = np.zeros(len(samples), dtype=bool)
    for own in (True, False):
        for t in reference:
            if (t.speaker == who) == own:
                keep[int(t.start * SAMPLE_RATE):int(t.end * SAMPLE_RATE)] = own
    return samples[keep]


@pytest.fixture(scope="module")
def diarizer(default_models):
    return Diarizer(dataclasses.replace(default_models, vad=None), config_for("campplus"))


@pytest.mark.parametrize("who, band", [("speaker90", "wide"), ("speaker91", "telephone")])
def test_a_lone_voice_is_heard_as_one(diarizer, sample_audio, sample_call, who, band):
    from scripts.corpus_acoustics import channel

    (reference,) = read_rttm(sample_call / "sample.rttm").values()
    audio = channel(lone_voice(sample_audio, reference, who).astype(np.float64), band, None).astype(np.float32)
    windows = diarizer.embed_windows(audio)
    assert speaker_count(windows.segmentations).data.max() >= 2  # segmentation hears two at once somewhere
    out = diarizer.cluster_windows(windows, SpeakerBounds(), len(audio) / SAMPLE_RATE, signal=audio)
    assert out.found == 1 and {t.speaker for t in out.turns} == {"SPEAKER_00"}
    assert {t.speaker for t in out.exclusive_turns} == {"SPEAKER_00"}

