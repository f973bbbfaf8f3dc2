"""A found speaker with next to no speech of its own joins the closest other
(witness.diarize.small_speakers), with real CAM++ on the sample call: a 1 s piece of one
voice left as a speaker of its own goes back to that voice, by cosine or, under the larger share
``SplitConfig.near_share``, by an s-norm near the merge's cut; speakers above the floor or
unlike every other, the fewest the user asks for and a count the user fixed stay."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from witness.diarize.clustering import normalized, score_merge
from witness.diarize.config import CAMPPLUS_CLUSTERING, SpeakerBounds, SplitConfig, config_for
from witness.diarize.embedding import CamPlusPlusEmbedder
from witness.diarize.pipeline import Diarizer, SpeakerTurns
from witness.diarize.small_speakers import NearVoice, joined_turns, small_speaker_joins, speech_shares
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


def test_a_piece_scoring_near_the_merge_cut_joins_its_voice_and_a_far_one_stays(call):
    """The 1 s piece of speaker91 scores ~7.9 (s-norm, the shipped narrowband cohort and cut 5)
    with speaker91's centroid, ~-2.1 with speaker90's: under ``near_share`` it joins speaker91
    without the cosine rule; with speaker91 gone, or a cut it is not near, it stays."""
    turns, centroids = call
    config = SplitConfig()
    near = NearVoice(config.near_share, config.near_margin, score_merge(CAMPPLUS_CLUSTERING))
    assert near.floor == CAMPPLUS_CLUSTERING.snorm_threshold - config.near_margin
    assert small_speaker_joins(turns, centroids, 0.0, near=near) == {"piece": "speaker91"}
    assert small_speaker_joins(turns, centroids, config.min_speaker_share, min_cosine=0.99, near=near) == {
        "piece": "speaker91"}
    without = {k: v for k, v in centroids.items() if k != "speaker91"}
    assert small_speaker_joins(turns, without, 0.0, near=near) == {}
    far = NearVoice(config.near_share, config.near_margin, dataclasses.replace(near.merge, threshold=20.0))
    assert small_speaker_joins(turns, centroids, 0.0, near=far) == {}
    assert small_speaker_joins(turns, centroids, 0.0, near=dataclasses.replace(near, share=0.01)) == {}


def test_a_speaker_with_no_lone_speech_is_the_smallest(call):
    """A found speaker whose every turn overlaps another's has no exclusive speech: it is
    looked at (share 0) when named among the ``speakers``, never otherwise."""
    turns, centroids = call
    exclusive = tuple(t for t in turns if t.speaker != "piece")
    config = SplitConfig()
    assert small_speaker_joins(exclusive, centroids, config.min_speaker_share, config.small_speaker_cosine) == {}
    assert small_speaker_joins(exclusive, centroids, config.min_speaker_share, config.small_speaker_cosine,
                               speakers={t.speaker for t in turns}) == {"piece": "speaker91"}


def test_a_count_the_user_fixed_is_kept(call, default_models):
    turns, centroids = call
    diarizer = Diarizer(dataclasses.replace(default_models, vad=None), config_for("campplus"))
    found = SpeakerTurns(turns, turns, 3, {}, centroids)
    assert diarizer._small_joined(found, SpeakerBounds(num_speakers=3)) is found
    free = diarizer._small_joined(found, SpeakerBounds())
    assert {t.speaker for t in free.turns} == {"SPEAKER_00", "SPEAKER_01"} and len(free.centroids) == 2


def test_the_near_rule_needs_the_merge_and_few_speakers(call, default_models):
    """In the pipeline the piece (over ``min_speaker_share`` here) joins speaker91 by the
    clustering's s-norm; not without the merge, nor where more than ``near_speakers`` were found."""
    turns, centroids = call
    split = dataclasses.replace(SplitConfig(), min_speaker_share=0.01)
    diarizer = Diarizer(dataclasses.replace(default_models, vad=None),
                        dataclasses.replace(config_for("campplus"), split=split))
    found = SpeakerTurns(turns, turns, 3, {}, centroids)
    merge = score_merge(CAMPPLUS_CLUSTERING)
    joined = diarizer._small_joined(found, SpeakerBounds(), merge)
    assert len({t.speaker for t in joined.turns}) == 2 and joined.found == 2
    assert diarizer._small_joined(found, SpeakerBounds()) is found
    diarizer.config = dataclasses.replace(diarizer.config, split=dataclasses.replace(split, near_speakers=2))
    assert diarizer._small_joined(found, SpeakerBounds(), merge) is found
