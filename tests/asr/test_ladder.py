"""The quality ladder: what --model's help says, and what doctor recommends where."""

from __future__ import annotations

from click.testing import CliRunner

from witness.asr.ladder import LADDER, recommend
from witness.cli import main


def test_model_help_lists_every_rung_with_measurements_or_why_not():
    result = CliRunner().invoke(main, ["transcribe", "--help"])
    text = " ".join(result.stdout.split())
    for rung in LADDER:
        assert rung.name in text
    assert "tiny.en: WER" in text and "large-v3-turbo: not measured here" in text


def test_recommendations():
    assert recommend(40.0, 2).model == "large-v3-turbo"  # a GPU with room
    assert recommend(1.2, 2).model == "tiny.en"  # a small GPU: tiny.en and what diarization needs
    assert recommend(None, 2).model == "tiny.en"  # this project's 2-core machines
    assert recommend(None, 4).model == "base"
    assert recommend(None, 16).model == "small.en"
