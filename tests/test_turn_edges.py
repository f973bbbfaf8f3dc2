"""scripts/turn_edges.py on the sample call (real segmentation-3.0 and CAM++): the frame cache
it builds names each long reference turn's speaker, hears one voice in the middle of a long
turn, and two where speaker91 says something (18.15-18.59 s) over speaker90's turn."""

from __future__ import annotations

import pytest

from scripts.turn_edges import Frames, build_frames
from witness.rttm import read_rttm
from witness.transcript import Word


@pytest.fixture(scope="module")
def frames(sample_call, tmp_path_factory) -> Frames:
    folder = tmp_path_factory.mktemp("frames")
    build_frames([sample_call / "sample.wav"], folder)
    assert (folder / "sample.frames.npz").exists()
    build_frames([sample_call / "sample.wav"], folder)  # a call already there is not built again
    return Frames(folder / "sample.frames.npz")


def test_frame_activity_names_each_long_turns_speaker(frames, sample_call):
    reference = next(iter(read_rttm(sample_call / "sample.rttm").values()))
    mapping = frames.mapping(list(reference))
    assert set(mapping.values()) == {t.speaker for t in reference}  # each voice holds a cluster of its own
    long = [t for t in reference if t.duration >= 3.0]
    assert len(long) == 4
    for turn in long:
        heard = frames.activity(Word(turn.start + 0.5, turn.end - 0.5, "turn"), mapping)
        assert max(heard, key=heard.get) == turn.speaker, turn
        middle = (turn.start + turn.end) / 2
        assert not frames.two_voices(Word(middle - 0.1, middle + 0.1, "word")), turn


def test_a_word_said_over_a_turn_is_heard_as_a_second_voice(frames, sample_call):
    reference = next(iter(read_rttm(sample_call / "sample.rttm").values()))
    over = next(t for t in reference if t.speaker == "speaker91" and 18.0 < t.start < 18.3)
    assert frames.two_voices(Word(over.start, over.end, "yeah"))
    heard = frames.activity(Word(over.start, over.end, "yeah"), frames.mapping(list(reference)))
    assert heard["speaker91"] >= 0.4 and heard["speaker90"] >= 0.9  # measured: 0.46 and 1.0 of the windows
