"""Where clustering hears one voice, a second is found only when CAM++ and GE2E both hear two
(``witness.diarize.second_voice``).

Real audio: the sample call's turns where one person talks alone, laid end to end with short
pauses between them (as the corpus's calls are made), with clustering made to merge everything
into one speaker (its s-norm merge with no floor), as it does on short calls of two similar
voices; the check must give back the two people. A lone voice staying one is ``test_diarize_lone_voice.py``'s check,
which runs through this step too.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.diarize.second_voice import two_means
from witness.evaluate.der import diarization_error
from witness.rttm import read_rttm
from witness.transcript import Turn

SAMPLE_RATE = 16000
PAUSE = 0.6


def turn_by_turn(samples: np.ndarray, reference) -> tuple[np.ndarray, list[Turn]]:
    """The stretches of at least 1 s where one person talks alone, in time order, each
    followed by ``PAUSE`` s of silence; and their reference turns."""
    alone = []
    for t in reference:
        pieces = [(t.start, t.end)]
        for o in reference:
            if o.speaker != t.speaker:
                pieces = [q for a, b in pieces for q in ((a, min(b, o.start)), (max(a, o.end), b)) if q[1] - q[0] > 0]
        alone += [Turn(a, b, t.speaker) for a, b in pieces if b - a >= 1.0]
    audio, turns, at = [], [], 0.0
    for t in sorted(alone, key=lambda t: t.start):
        clip = samples[int(t.start * SAMPLE_RATE):int(t.end * SAMPLE_RATE)]
        audio += [clip, np.zeros(int(PAUSE * SAMPLE_RATE), np.float32)]
        turns.append(Turn(at, at + len(clip) / SAMPLE_RATE, t.speaker))
        at += len(clip) / SAMPLE_RATE + PAUSE
    return np.concatenate(audio), turns


def one_voice_config():
    """The default configuration, with clustering's s-norm merge joining every cluster."""
    config = config_for("campplus")
    return dataclasses.replace(config, clustering=dataclasses.replace(config.clustering, snorm_threshold=-np.inf))


@pytest.fixture(scope="module")
def merged(default_models, sample_audio, sample_call):
    """(diarizer whose clustering finds one voice, the turn-by-turn call, its window
    embeddings, its reference turns)."""
    (reference,) = read_rttm(sample_call / "sample.rttm").values()
    audio, turns = turn_by_turn(sample_audio, reference)
    diarizer = Diarizer(dataclasses.replace(default_models, vad=None), one_voice_config())
    return diarizer, audio, diarizer.embed_windows(audio), turns


def test_the_two_voices_clustering_merged_come_back(merged):
    diarizer, audio, windows, reference = merged
    assert diarizer.second is not None  # CAM++ runs bring GE2E along
    out = diarizer.cluster_windows(windows, SpeakerBounds(), len(audio) / SAMPLE_RATE, signal=audio)
    assert {t.speaker for t in out.turns} == {"SPEAKER_00", "SPEAKER_01"} and out.found == 2
    error = diarization_error(reference, list(out.turns))
    assert error.confusion / error.total < 0.1, error  # the two people, not two halves of the call


def test_without_ge2e_or_room_for_two_it_stays_one(merged):
    diarizer, audio, windows, _ = merged
    alone = Diarizer(dataclasses.replace(diarizer.models, second=None), diarizer.config)
    for run, bounds in ((alone, SpeakerBounds()), (diarizer, SpeakerBounds(max_speakers=1))):
        out = run.cluster_windows(windows, bounds, len(audio) / SAMPLE_RATE, signal=audio)
        assert {t.speaker for t in out.turns} == {"SPEAKER_00"}


def test_two_means_starts_from_the_least_similar_pair():
    rows = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.8, 0.2]])
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    labels = two_means(rows)
    assert labels[0] == labels[1] == labels[4] != labels[2] == labels[3]
