"""The quality ladder: what --model's help says, and what doctor recommends where."""

from __future__ import annotations

from click.testing import CliRunner

from witness.asr.ladder import CPU_LADDER, LADDER, recommend, rung
from witness.cli import main
from witness.config import AsrSettings


def test_model_help_lists_every_rung_with_measurements_or_why_not():
    result = CliRunner().invoke(main, ["transcribe", "--help"])
    text = " ".join(result.stdout.split())
    for r in LADDER:
        assert r.name in text
    assert "tiny.en: WER 9.1%" in text and "large-v3-turbo: not measured here" in text


def test_the_default_is_the_cpu_ladders_first_rung():
    assert CPU_LADDER[0] == AsrSettings().model == "tiny.en-q8_0"


def test_recommendations_by_gpu_memory_and_cpu_cores():
    assert recommend(40.0, 2).model == "large-v3-turbo"  # a GPU with room
    assert recommend(2.2, 2).model == "tiny.en"  # just room for tiny.en beside diarization
    assert recommend(2.1, 2).model == "tiny.en-q8_0"  # no room on the GPU: the CPU's choice
    assert recommend(1.2, 2).model == "tiny.en-q8_0"  # too small a GPU: the CPU default
    assert recommend(None, 2).model == "tiny.en-q8_0"  # this project's 2-core machines
    assert recommend(None, 4).model == "base"
    assert recommend(None, 16).model == "small.en"


def test_too_little_memory_steps_down():
    small, base = rung("small.en").ram_gib(), rung("base").ram_gib()
    assert base < small
    assert recommend(None, 16, ram_gib=small + 0.1).model == "small.en"
    low = recommend(None, 16, ram_gib=small - 0.1)
    assert low.model == "base" and low.reason.startswith("16 CPU cores and only")
    assert recommend(None, 4, ram_gib=base - 0.1).model == "tiny.en-q8_0"
    assert recommend(None, 2, ram_gib=0.5).model == "tiny.en-q8_0"  # nothing smaller to offer
