"""How a piece is decoded again (``fallback``), where the time goes (``StageClock``, whisper.cpp's
counters), and whisper.cpp's aborts: real tiny.en on the real sample call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.asr.conftest import normal
from witness.asr.guards import LoopOptions, loop_reason
from witness.asr.timings import parse_print_timings
from witness.asr.whisper import WhisperEngine, WhisperOptions

SR = 16000
REPO = Path(__file__).resolve().parents[2]


def _params(engine: WhisperEngine, fallback: str):
    """whisper_full's parameters for a first pass under ``fallback`` (no model needed)."""
    bare = WhisperEngine.__new__(WhisperEngine)
    bare.options, bare._pw = WhisperOptions(fallback=fallback), engine._pw
    return bare._full_params("en", "", 0.0, fresh=True)


def test_on_failure_whisper_cpp_decodes_once_and_witness_falls_back(tiny_engine):
    assert _params(tiny_engine, "on-failure").temperature_inc == 0.0  # _decode decides on more passes
    assert _params(tiny_engine, "whisper.cpp").temperature_inc == pytest.approx(0.2) # its own fallback, in the call


def test_a_clean_call_is_decoded_once_and_the_clock_says_where_time_went(tiny_en, sample_audio):
    with WhisperEngine(tiny_en.path, WhisperOptions(threads=2), model_name="tiny.en") as engine:
        engine.whisper_timings()
        engine.clock.reset()
        result = engine.transcribe(sample_audio[: 15 * SR])
        timings = engine.whisper_timings()
        assert engine.whisper_timings()["encode"] == 0  # read and reset (runs print as at least 1)
    assert {"hello", "jersey"} <= {normal(w.text) for w in result.words}
    assert {"vad", "packing", "first pass", "words"} <= set(engine.clock.counts)
    assert not any(stage.startswith("fallback") for stage in engine.clock.counts)
    assert engine.clock.counts["first pass"] == result.info.stats.pieces == 1
    assert timings["encode runs"] == 1 and timings["encode"] > 0 and timings["decode runs"] > 5
    assert timings["fallbacks p"] == timings["fallbacks h"] == 0


def test_noise_gives_no_words_either_way(tiny_en, sample_audio):
    """The call under loud noise: whisper.cpp hears no speech, and nothing is made up."""
    noisy = (sample_audio + np.random.default_rng(0).normal(0, 0.15, len(sample_audio))).astype(np.float32)
    for fallback in ("on-failure", "whisper.cpp"):
        with WhisperEngine(tiny_en.path, WhisperOptions(threads=2, fallback=fallback), model_name="tiny.en") as engine:
            assert engine.transcribe(noisy).words == ()


def test_a_failure_the_first_hotter_pass_repeats_word_for_word_ends_the_ladder(tiny_en, sample_audio, monkeypatch):
    """Every text counts as a loop here (the guard's thresholds at zero), so the piece goes up
    the ladder; clear speech sampled at T=0.2 says what the greedy pass said, so that repetition
    is taken as said: no third pass, and the greedy words are kept."""
    import witness.asr.whisper as whisper

    always = LoopOptions(compression_ratio=0.0, min_words=1)
    monkeypatch.setattr(whisper, "loop_reason", lambda text, seconds: loop_reason(text, seconds, always))
    clip = sample_audio[17 * SR: 22 * SR]  # "Oh, I'm originally from Chicago also. I'm in New Jersey now though."
    with WhisperEngine(tiny_en.path, WhisperOptions(threads=2), model_name="tiny.en") as engine:
        result = engine.transcribe(clip)
        passes = dict(engine.clock.counts)
    assert passes["first pass"] == passes["fallback T=0.2"] == 1 and "fallback T=0.4" not in passes
    assert result.info.stats.redecoded == 1
    with WhisperEngine(tiny_en.path, WhisperOptions(threads=2, redecode_loops=False), model_name="tiny.en") as engine:
        greedy = engine.transcribe(clip)
    assert [w.text for w in result.words] == [w.text for w in greedy.words]
    assert "Jersey" in " ".join(w.text for w in greedy.words)


def test_print_timings_are_read():
    text = ("whisper_print_timings:     fallbacks =   2 p /   1 h\n"
            "whisper_print_timings:   encode time =  4957.28 ms /     3 runs (  1652.43 ms per run)\n"
            "whisper_print_timings:      mel time =   219.85 ms\n")
    assert parse_print_timings(text) == {"fallbacks p": 2, "fallbacks h": 1, "encode": 4.95728, "encode runs": 3,
                                         "mel": 0.21985}


def _python(model: Path, code: str) -> subprocess.CompletedProcess:
    """``code`` run after ``PROLOGUE`` in a fresh Python (whisper.cpp may abort it)."""
    script = f"MODEL = {str(model)!r}\n" + textwrap.dedent(PROLOGUE) + textwrap.dedent(code)
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    return subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)


PROLOGUE = """
    import numpy as np
    from witness.asr.whisper import WhisperEngine, WhisperOptions
    from witness.audio import load_audio

    speech = load_audio("tests/data/sample-call/sample.wav").samples[7 * 16000:]
    engine = WhisperEngine(MODEL, WhisperOptions(threads=1), "tiny.en")
    part = np.ascontiguousarray(speech[:2400])  # 0.15 s: DTW's median filter is wider
"""


def test_a_piece_too_short_for_dtw_is_skipped_not_fatal(tiny_en):
    run = _python(tiny_en.path, """
    print(len(engine.transcribe(part).words))
    """)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0"


def test_whisper_cpp_s_assert_is_printed_before_it_aborts(tiny_en):
    run = _python(tiny_en.path, """
    engine._run(engine._contexts[0], part, engine._full_params("en", "", 0.0, fresh=True), "first pass")
    """)
    assert run.returncode == -signal.SIGABRT
    assert "whisper.cpp: WHISPER_ASSERT:" in run.stderr and "filter_width" in run.stderr
