"""One encoder run per speech piece (``witness.asr.windows``): what whisper.cpp's first window
leaves of a piece is decoded with the other pieces' rests, and says what whisper.cpp's own
second window says. Real tiny.en-q8_0 (the default model) on the real sample call, cut where
tiny.en-q8_0's first window ends on a sentence it saw begin but not end (23.7 s: "…that much
difference." then "much different" in the rest)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from witness.asr.whisper import Track, WhisperEngine, WhisperOptions
from witness.asr.windows import CENTISECOND, DTW_FRAMES, OneWindow
from witness.audio import SAMPLE_RATE

CUT = 23.7  # s of the sample call: a piece whose decoding needs a second window


@pytest.fixture(scope="module")
def engines(tiny_en_q8):
    """The default model with one encoder run per piece (the default) and without; stretches
    left without words are not decoded again (``gaps``: here the VAD is told the ring tone
    before the call's first word is speech, and those decodes would count too)."""
    options = WhisperOptions(threads=2, language="en", redecode_gaps=False)
    with WhisperEngine(tiny_en_q8.path, options, model_name=tiny_en_q8.name, info=tiny_en_q8.info) as one, \
            WhisperEngine(tiny_en_q8.path, replace(options, one_window=False), model_name=tiny_en_q8.name,
                          info=tiny_en_q8.info) as whole:
        yield one, whole


def _run(engine: WhisperEngine, track: Track):
    engine.whisper_timings()  # zero the counters
    result = engine._transcribe([track], None)
    return result, engine.whisper_timings()["encode runs"]


def test_a_rest_says_what_whisper_cpp_s_second_window_says(engines, sample_audio):
    one, whole = engines
    track = Track(sample_audio[: round(CUT * SAMPLE_RATE)])  # no speech gate: one piece
    (got, runs), (want, whole_runs) = _run(one, track), _run(whole, track)
    assert (got.info.stats.rests, want.info.stats.rests) == (1, 0)
    assert runs == whole_runs == 2
    assert [s.text for s in got.segments] == [s.text for s in want.segments]
    assert [w.text for w in got.words] == [w.text for w in want.words]
    assert np.allclose([(w.start, w.end) for w in got.words], [(w.start, w.end) for w in want.words], atol=0.1)


def test_the_rests_of_two_pieces_share_one_encoder_run(engines, sample_audio):
    """Two pieces that each leave a rest: three encoder runs instead of four. Here both rests
    are the same 0.7 s ("much differen…"), and tiny.en says those two words once, not twice;
    every other word is the same (on the 30-minute corpus call, WER 22.61% against 22.67%)."""
    one, whole = engines
    cut = sample_audio[: round(CUT * SAMPLE_RATE)]
    signal = np.concatenate([cut, np.zeros(2 * SAMPLE_RATE, np.float32), cut])
    chunks = -(-len(signal) // 512)
    speech = np.zeros(chunks, np.float32)  # what a VAD would say: speech in both copies, none between
    speech[: len(cut) // 512] = speech[-(len(cut) // 512):] = 0.9
    track = Track(signal, speech)
    (got, runs), (want, whole_runs) = _run(one, track), _run(whole, track)
    assert (got.info.stats.pieces, got.info.stats.rests) == (2, 1)
    assert (runs, whole_runs) == (3, 4)
    texts, wanted = [w.text for w in got.words], [w.text for w in want.words]
    assert texts == wanted[:-2] and wanted[-2:] == ["much", "different."]


def test_a_window_too_short_for_dtw_is_never_started(engines, sample_audio):
    """Where a decode may take more windows (here: one_window off), whisper.cpp would start one
    wherever more than 0.1 s is left after the last segment, and with DTW a window that says
    anything in under 0.16 s aborts the process; OneWindow refuses it, and only it. The rule
    is read off the real context of a real decode: its last segment's end."""
    _, whole = engines
    _run(whole, Track(sample_audio[: round(CUT * SAMPLE_RATE)]))
    import _pywhispercpp as pw

    ctx = whole._contexts[0]
    end = pw.whisper_full_get_segment_t1(ctx, pw.whisper_full_n_segments(ctx) - 1)  # centiseconds
    for left, started in ((DTW_FRAMES - 1, False), (DTW_FRAMES, True)):
        window = OneWindow((end + left) * CENTISECOND, guard=False)
        assert window._on_encoder(ctx) and window._on_encoder(ctx) is started
        assert window.rest(end) is None  # nothing is left to decode apart
    guarded = OneWindow((end + 500) * CENTISECOND)
    assert guarded._on_encoder(ctx) and not guarded._on_encoder(ctx) and guarded.rest(end) == end * CENTISECOND
