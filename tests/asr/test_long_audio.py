"""Long calls with silences and hold music: no loops, no words over non-speech, WER as on
the single call (the 30-minute versions: scripts/asr_long.py)."""

from __future__ import annotations

import pytest

from scripts.asr_cases import score, tiled, with_music


@pytest.fixture(scope="module")
def single_wer(tiny_result, stm_words) -> float:
    return score(tiled(1), tiny_result.words, [s.text for s in tiny_result.segments]).wer


@pytest.mark.parametrize("make", [lambda: tiled(6), lambda: with_music(60.0, copies=1)], ids=["tiled-3min", "music"])
def test_no_loops_nothing_over_non_speech(tiny_engine, single_wer, make):
    case = make()
    result = tiny_engine.transcribe(case.audio)
    got = score(case, result.words, [s.text for s in result.segments])
    assert got.longest_repeat <= 2, got
    assert got.words_over_non_speech == 0, got
    assert got.wer <= 1.2 * single_wer + 0.01, (got, single_wer)
    assert result.info.stats.speech_seconds < 0.85 * len(case.audio) / 16000  # the gaps were not decoded
