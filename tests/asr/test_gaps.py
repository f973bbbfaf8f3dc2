"""Speech that came back without words is decoded again alone (``witness.asr.gaps``): where the
stretches are, and real tiny.en-q8_0 (the default model) on the real sample call with its last
20 s 30 dB down (a far party after a near one): decoded as one piece, whisper.cpp ends its text
at the quiet part, which Silero still calls speech; decoded alone, the quiet part is all there."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scripts.asr_cases import music
from witness.asr.gaps import GapOptions, speech_gaps, track_gaps
from witness.asr.speech import SpeechPiece
from witness.asr.whisper import Track, WhisperEngine, WhisperOptions
from witness.audio import SAMPLE_RATE as SR
from witness.textnorm import normalize_words
from witness.transcript import Word
from witness.vad import CHUNK

QUIET_FROM = 9.9  # s of the sample call: from here on 30 dB down (mid-word: "I need to design")


def _probs(seconds: float, speech: list[tuple[float, float]]) -> np.ndarray:
    """What a VAD would say: speech (0.9) in ``speech`` (start, end seconds), none elsewhere."""
    probs = np.zeros(-(-int(seconds * SR) // CHUNK), np.float32)
    for a, b in speech:
        probs[int(a * SR) // CHUNK: int(b * SR) // CHUNK] = 0.9
    return probs


def _words(*spans: tuple[float, float]) -> list[Word]:
    return [Word(a, b, "word") for a, b in spans]


def test_a_stretch_of_speech_without_words_is_found_and_a_pause_is_not():
    piece = SpeechPiece(((0, 20 * SR),))
    probs = _probs(20, [(0, 20)])
    words = _words((0.0, 0.5), (0.6, 1.0), (2.0, 2.4), (7.0, 7.5), (9.5, 10.0))  # 1 s pause, then 4.6 s and 10 s
    gaps = speech_gaps(piece, words, probs)
    assert [g.spans for g in gaps] == [((round(2.4 * SR), 7 * SR),), ((10 * SR, 20 * SR),)]


def test_a_stretch_needs_speech_by_the_vad_and_a_stretched_word_covers_only_its_reach():
    piece = SpeechPiece(((0, 20 * SR),))
    quiet_after = _probs(20, [(0, 3)])  # the VAD hears nothing after 3 s: no words wanted there
    assert speech_gaps(piece, _words((0.0, 2.5)), quiet_after) == []
    long_word = _words((0.0, 0.5), (1.0, 19.5))  # a timestamp jump stretched the last word to the end
    gap, = speech_gaps(piece, long_word, _probs(20, [(0, 20)]))
    assert gap.spans == ((round((1.0 + GapOptions.word_reach) * SR), 20 * SR),)


def test_a_stretch_goes_on_over_a_seam_between_the_piece_s_spans():
    piece = SpeechPiece(((0, 5 * SR), (40 * SR, 44 * SR)))  # two VAD spans laid end to end
    probs = _probs(50, [(0, 5), (40, 44)])
    gap, = speech_gaps(piece, _words((0.0, 0.5), (2.5, 3.0)), probs)
    assert gap.spans == ((3 * SR, 5 * SR), (40 * SR, 44 * SR))
    words = _words((43.5, 44.0), (40.0, 40.5), (0.0, 0.5), (41.5, 42.0), (2.5, 3.0), (4.0, 4.5))
    assert track_gaps([piece], words, probs) == []  # words in any order; no stretch of 2.5 s left


@pytest.fixture(scope="module")
def engines(tiny_en_q8, silero_vad):
    """The default model gated by Silero VAD, stretches without words decoded again (the
    default) and not."""
    options = WhisperOptions(threads=2, language="en")
    with WhisperEngine(tiny_en_q8.path, options, model_name=tiny_en_q8.name, info=tiny_en_q8.info,
                       vad_path=silero_vad) as on, \
            WhisperEngine(tiny_en_q8.path, replace(options, redecode_gaps=False), model_name=tiny_en_q8.name,
                          info=tiny_en_q8.info, vad_path=silero_vad) as off:
        yield on, off


def _after(words, seconds: float) -> list[str]:
    return normalize_words(" ".join(w.text for w in words if w.start >= seconds))


def test_quiet_speech_whisper_cpp_skipped_is_decoded_alone(engines, sample_audio):
    on, off = engines
    cut = round(QUIET_FROM * SR)
    quiet = np.concatenate([sample_audio[:cut], sample_audio[cut:] * 10 ** (-30 / 20)]).astype(np.float32)
    skipped, got, loud = off.transcribe(quiet), on.transcribe(quiet), on.transcribe(np.array(sample_audio))
    assert len(_after(skipped.words, QUIET_FROM + 1)) == 0  # the defect: 19 s of speech, no word
    assert (got.info.stats.gaps, got.info.stats.gaps_filled, loud.info.stats.gaps) == (1, 1, 0)
    heard, wanted = _after(got.words, QUIET_FROM + 1), _after(loud.words, QUIET_FROM + 1)
    assert len(heard) >= 0.8 * len(wanted) and {"diane", "jersey", "chicago", "yankee"} <= set(heard)
    assert [w.start for w in got.words] == sorted(w.start for w in got.words)
    before = normalize_words(" ".join(w.text for w in got.words if w.start < QUIET_FROM))
    assert before == normalize_words(" ".join(w.text for w in skipped.words if w.start < QUIET_FROM))


@pytest.mark.parametrize("kind", ["noise", "music"])
def test_noise_the_vad_calls_speech_is_decoded_again_and_nothing_is_made_up(engines, sample_audio, kind):
    """12 s of the call, then 18 s of white noise or synthetic music that a VAD calls speech."""
    on, off = engines
    cut = 12 * SR
    tail = np.random.default_rng(0).normal(0, 0.05, 18 * SR) if kind == "noise" else 0.3 * music(18.0)
    signal = np.concatenate([sample_audio[:cut], tail]).astype(np.float32)
    probs = on._vad.probabilities(signal)
    probs[cut // CHUNK:] = 0.9
    got, without = on._transcribe([Track(signal, probs)], None), off._transcribe([Track(signal, probs)], None)
    assert (got.info.stats.gaps, got.info.stats.gaps_filled) == (1, 0)
    assert [w.text for w in got.words] == [w.text for w in without.words]
    assert all(w.end <= 12.5 for w in got.words)
