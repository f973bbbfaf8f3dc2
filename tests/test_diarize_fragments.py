"""Merging fragment speakers after the split (witness.diarize.fragments), with real CAM++ on
the sample call's real audio: a few turns of one voice under a label of their own join that
voice (not the other), two real voices stay apart, the floor holds, and the pipeline runs the
step from the pieces the split embedded."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from witness.diarize.clustering import score_merge
from witness.diarize.config import CAMPPLUS_CLUSTERING, SplitConfig, config_for
from witness.diarize.embedding import CamPlusPlusEmbedder
from witness.diarize.fragments import merge_fragments, piece_owners
from witness.diarize.pipeline import Diarizer
from witness.diarize.split import embedded_turns
from witness.rttm import read_rttm
from witness.transcript import Turn

from tests.test_diarize_split import exclusive

NAMES = {"speaker90": "SPEAKER_00", "speaker91": "SPEAKER_01"}
FRAGMENT_START = 18.05  # speaker90's 3.4 s turn (18.05-21.49 s): 2.9 s of it alone
SCORE = 1.5  # the s-norm cut measured on the corpus (SplitConfig.fragment_score; off by default)


@pytest.fixture(scope="module")
def named(sample_call):
    """The sample call's reference turns under the pipeline's labels."""
    return tuple(Turn(t.start, t.end, NAMES[t.speaker]) for t in read_rttm(sample_call / "sample.rttm")["sample"])


@pytest.fixture(scope="module")
def pieces(named, sample_audio, campplus_onnx):
    """Each long exclusive turn's middle piece -> its CAM++ embedding, as the split keeps them."""
    known: dict[tuple[float, float], np.ndarray] = {}
    embedded_turns(exclusive(named), sample_audio, CamPlusPlusEmbedder(campplus_onnx).embed, SplitConfig(), known)
    return known


def with_fragment(turns):
    return tuple(Turn(t.start, t.end, "SPEAKER_02" if t.start == FRAGMENT_START else t.speaker) for t in turns)


def merged(turns, pieces, **options):
    options = {"score": SCORE, "share": SplitConfig().fragment_share, **options}
    return merge_fragments(turns, exclusive(turns), {}, pieces, score_merge(CAMPPLUS_CLUSTERING), **options)


def test_a_fragment_of_one_voice_joins_that_voice(named, pieces):
    out = merged(with_fragment(named), pieces)
    assert out.merged == 1
    assert sorted(out.turns, key=lambda t: (t.start, t.speaker)) == sorted(named, key=lambda t: (t.start, t.speaker))
    assert {t.speaker for t in out.exclusive_turns} == {"SPEAKER_00", "SPEAKER_01"}


def test_two_voices_stay_apart_however_little_one_says(named, pieces):
    """Every speaker counted small (share 2) and no floor: the two voices' pieces score under
    the cut (0.8 against 1.5), so nothing merges."""
    out = merged(named, pieces, share=2.0, floor=1)
    assert out.merged == 0 and out.turns == named


def test_never_fewer_speakers_than_the_floor(named, pieces):
    assert merged(with_fragment(named), pieces, floor=3).merged == 0


def test_a_piece_belongs_to_the_speaker_holding_most_of_it(named):
    own = exclusive(named)
    # 14.2-15.6 s: SPEAKER_00 alone to 14.49, both to 14.70, SPEAKER_01 alone after (0.9 of 1.4 s)
    assert piece_owners(own, [(11.03, 14.49), (14.2, 15.6), (30.5, 31.0)], 0.8) == ["SPEAKER_00", None, None]
    assert piece_owners(own, [(14.2, 15.6)], 0.6) == ["SPEAKER_01"]


def test_the_pipeline_merges_from_the_split_pieces_when_asked(default_models, sample_audio):
    config = config_for("campplus")
    assert config.split.fragment_score is None
    out = Diarizer(default_models, replace(config, split=replace(config.split, fragment_score=SCORE))).run(sample_audio)
    assert out.num_speakers == out.found_speakers == 2
    assert "fragments" in out.timings
