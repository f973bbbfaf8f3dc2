"""A found speaker with next to no speech of its own joins the closest other
(witness.diarize.small_speakers), with real CAM++ on the sample call: a 1 s piece of one
voice left as a speaker of its own goes back to that voice; speakers above the floor or
unlike every other, the fewest the user asks for and a count the user fixed stay."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from witness.diarize.clustering import normalized
from witness.diarize.config import SpeakerBounds, SplitConfig, config_for
from witness.diarize.embedding import CamPlusPlusEmbedder
from witness.diarize.pipeline import Diarizer, SpeakerTurns
from witness.diarize.small_speakers import joined_turns, small_speaker_joins, speech_shares
from witness.rttm import read_rttm
from witness.transcript import Turn

SAMPLE_RATE = 16000
PIECE = (25.0, 26.0)  # inside speaker91's turn 21.78-28.50


@pytest.fixture(scope="module")
def call(sample_call, sample_audio, campplus_onnx):
    """The sample call's turns with ``PIECE`` cut out of speaker91's as speaker "piece", and
    every speaker's CAM++ centroid (each voice from two long turns of its own)."""
    (reference,) = read_rttm(sample_call / "sample.rttm").values()
    embedder = CamPlusPlusEmbedder(campplus_onnx)

    def print_of(*spans):
        rows = embedder.embed(np.stack([sample_audio[int(a * SAMPLE_RATE):int(a * SAMPLE_RATE) + 2 * SAMPLE_RATE]
                                        for a, _ in spans]))
        return normalized(normalized(rows).mean(axis=0)).astype(np.float32)

    piece = sample_audio[None, int(PIECE[0] * SAMPLE_RATE):int(PIECE[1] * SAMPLE_RATE)]
    centroids = {"speaker90": print_of((10.6, 14.7), (18.6, 21.5)), "speaker91": print_of((14.5, 17.9), (22.0, 24.5)),
                 "piece": normalized(embedder.embed(piece)[0])}
    turns = []
    for t in reference:
        if t.speaker == "speaker91" and t.start < PIECE[0] < PIECE[1] < t.end:
            turns += [Turn(t.start, PIECE[0], t.speaker), Turn(*PIECE, "piece"), Turn(PIECE[1], t.end, t.speaker)]
        else:
            turns.append(t)
    return tuple(sorted(turns, key=lambda t: t.start)), centroids


def test_a_piece_of_one_voice_joins_that_voice(call):
    turns, centroids = call
    assert speech_shares(turns)["piece"] < SplitConfig().min_speaker_share
    config = SplitConfig()
    joins = small_speaker_joins(turns, centroids, config.min_speaker_share, config.small_speaker_cosine)
    assert joins == {"piece": "speaker91"}
    joined = joined_turns(turns, joins)
    assert {t.speaker for t in joined} == {"speaker90", "speaker91"}
    (whole,) = [t for t in joined if t.start < PIECE[0] < PIECE[1] < t.end]
    assert whole.speaker == "speaker91" and whole.start == pytest.approx(21.78) and whole.end == pytest.approx(28.5)


def test_speakers_above_the_floor_unlike_all_others_or_the_fewest_asked_for_stay(call):
    turns, centroids = call
    share = SplitConfig().min_speaker_share
    assert small_speaker_joins(turns, centroids, 0.03) == {}
    assert small_speaker_joins(turns, centroids, share, min_cosine=0.99) == {}
    assert small_speaker_joins(turns, centroids, share, fewest=3) == {}


def test_a_count_the_user_fixed_is_kept(call, default_models):
    turns, centroids = call
    diarizer = Diarizer(dataclasses.replace(default_models, vad=None), config_for("campplus"))
    found = SpeakerTurns(turns, turns, 3, {}, centroids)
    assert diarizer._small_joined(found, SpeakerBounds(num_speakers=3)) is found
    free = diarizer._small_joined(found, SpeakerBounds())
    assert {t.speaker for t in free.turns} == {"SPEAKER_00", "SPEAKER_01"} and len(free.centroids) == 2
