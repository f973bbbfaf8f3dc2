"""Each word keeps to the span of its piece that it was said in (``SpeechPiece.word_to_file``),
on real tiny.en-q8_0 (the default model) decoding real speech of the sample call: two stretches
laid end to end with a little silence between, as the engine packs the rests of pieces."""

from __future__ import annotations

import pytest

from witness.asr.jobs import Job
from witness.asr.speech import SpeechPiece
from witness.asr.whisper import WhisperEngine, WhisperOptions
from witness.audio import SAMPLE_RATE


@pytest.fixture(scope="module")
def engine(tiny_en_q8):
    options = WhisperOptions(threads=2, language="en", redecode_gaps=False)
    with WhisperEngine(tiny_en_q8.path, options, model_name=tiny_en_q8.name, info=tiny_en_q8.info) as loaded:
        yield loaded


def _decode(engine: WhisperEngine, piece: SpeechPiece, signal):
    (ctx, threads), = engine._decoder_contexts(1)
    segments, _, _ = engine._decode(ctx, threads, Job(0, piece, piece.audio(signal), first=False, one_window=False),
                                    "en", None)
    return segments


def test_a_word_before_a_seam_keeps_its_time(engine, sample_audio):
    """Diane's "Hello?" (6.68-7.16 s by the reference), then 0.1 s of silence, then 9.8 s on.
    DTW ends "Hello," 0.06 s into the second stretch: its end was mapped there (9.86 s), and
    the whole job put it at 9.2-9.9 s, 2 s after it was said, in Sheila's turn."""
    first, second = (round(6.4 * SAMPLE_RATE), round(7.3 * SAMPLE_RATE)), (round(9.8 * SAMPLE_RATE), round(13.8 * SAMPLE_RATE))
    piece = SpeechPiece((first, second), gap=SAMPLE_RATE // 10)
    segments = _decode(engine, piece, sample_audio)
    words = [w for s in segments for w in s.words]
    assert words[0].text.startswith("Hello") and 6.5 <= words[0].start < words[0].end <= 7.3
    for segment in segments:  # each segment's words in one stretch, each word inside it
        inside = [next(k for k, (a, b) in enumerate(piece.spans)
                       if a / SAMPLE_RATE <= w.start <= w.end <= b / SAMPLE_RATE) for w in segment.words]
        assert len(set(inside)) == 1, [(w.text, w.start, w.end) for w in segment.words]
