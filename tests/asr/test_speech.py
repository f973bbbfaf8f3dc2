"""Speech gating and loop guards on hand-made VAD probabilities and texts (no models)."""

from __future__ import annotations

import numpy as np
import pytest

from witness.asr.guards import (LoopOptions, collapse_repeats, compression_ratio, is_silence_phrase, longest_run,
                                 loop_reason, words_agree)
from witness.asr.speech import GateOptions, SpeechPiece, pack_pieces, plan_pieces, speech_share, whole_file_pieces
from witness.asr.words import monotonic
from witness.transcript import Word

SR = 16000
CHUNK = 512


def probabilities(seconds: float, speech: list[tuple[float, float]]) -> np.ndarray:
    """(chunks,) float32: 0.9 inside the ``speech`` spans (seconds), 0.05 elsewhere."""
    probs = np.full(int(seconds * SR) // CHUNK, 0.05, np.float32)
    for s, e in speech:
        probs[int(s * SR) // CHUNK:int(e * SR) // CHUNK] = 0.9
    return probs


def test_long_non_speech_is_never_decoded():
    probs = probabilities(300, [(5, 19), (200, 214)])  # three minutes of hold music between
    pieces = plan_pieces(probs, 300 * SR)
    assert len(pieces) == 1  # 28.8 s of speech (with padding) packed into one window
    (a, b), (c, d) = pieces[0].spans
    assert 4.7 < a / SR < 5 and 19 < b / SR < 19.3 and 199.7 < c / SR < 200 and 214 < d / SR < 214.3
    assert pieces[0].samples <= 30 * SR


def test_short_pauses_stay_long_regions_are_cut_at_the_least_speechy_chunk():
    probs = probabilities(100, [(1, 10), (10.5, 40), (45, 95)])
    probs[int(70 * SR) // CHUNK] = 0.3  # a dip inside the last region, where it is cut
    pieces = plan_pieces(probs, 100 * SR)
    spans = [span for p in pieces for span in p.spans]
    assert all(p.samples <= 30 * SR for p in pieces)
    assert spans[0][0] / SR == pytest.approx(0.8, abs=0.05)  # 1..10 and 10.5..40 joined: 0.5 s pause kept
    assert any(abs(e / SR - 70) < 0.05 for _, e in spans)
    assert sum(e - s for s, e in spans) == pytest.approx(sum(p.samples for p in pieces))
    starts = [s for s, _ in spans]
    assert starts == sorted(starts)


def test_nothing_to_decode_in_silence():
    assert plan_pieces(np.zeros(1000, np.float32), 1000 * CHUNK) == []


def test_piece_times_map_back_to_the_file():
    piece = SpeechPiece(((16000, 48000), (160000, 176000)))  # 1-3 s and 10-11 s, end to end
    assert piece.samples == 48000
    assert piece.to_file(0.5) == 1.5
    assert piece.to_file(2.0) == 10.0  # a time at the seam belongs to the next span
    assert piece.to_file(2.5) == 10.5
    assert piece.to_file(9.0) == 11.0  # past the end: clamped
    signal = np.arange(200000, dtype=np.float32)
    assert np.array_equal(piece.audio(signal), np.concatenate([signal[16000:48000], signal[160000:176000]]))


def test_the_rest_of_a_piece_keeps_its_file_spans():
    piece = SpeechPiece(((0, 10 * SR), (20 * SR, 25 * SR)))
    assert piece.after(4 * SR).spans == ((4 * SR, 10 * SR), (20 * SR, 25 * SR))
    assert piece.after(12 * SR).spans == ((22 * SR, 25 * SR),)  # 12 s in: 2 s into the second span
    assert piece.after(10 * SR).spans == ((20 * SR, 25 * SR),)
    assert piece.after(15 * SR) is None
    assert piece.after(12 * SR).to_file(0.5) == 22.5


def test_rests_are_laid_end_to_end_whole_into_pieces_of_a_window():
    rests = [SpeechPiece(((a * SR, (a + n) * SR),)) for a, n in ((10, 4), (50, 12), (90, 13), (130, 3), (170, 2))]
    packed = pack_pieces(rests)
    assert [len(p.spans) for p in packed] == [3, 2]  # 4 + 12 + 13 s, then 3 + 2 s: a rest is never cut
    assert [span for p in packed for span in p.spans] == [r.spans[0] for r in rests]
    assert all(p.samples <= 30 * SR for p in packed) and pack_pieces([]) == []


def test_rests_packed_with_silence_between_map_back_to_their_own_spans():
    rests = [SpeechPiece(((1 * SR, 3 * SR),)), SpeechPiece(((10 * SR, 11 * SR),))]
    piece, = pack_pieces(rests, gap=SR // 2)
    signal = np.ones(12 * SR, np.float32)
    audio = piece.audio(signal)
    assert piece.samples == len(audio) == 3.5 * SR
    assert audio[2 * SR:int(2.5 * SR)].max() == 0 and audio[: 2 * SR].min() == audio[int(2.5 * SR):].min() == 1
    assert piece.to_file(1.0) == 2.0 and piece.to_file(2.75) == 10.25
    assert piece.to_file(2.2) == 10.0  # in the silence: the next span
    assert pack_pieces(rests * 10, gap=SR // 2)[0].samples <= 30 * SR


def test_a_word_keeps_to_the_span_that_holds_most_of_it():
    """DTW can end a word past a seam, where the piece's audio jumps to another span: the word
    stays in the span holding most of it, the silence after a rest counted as that rest's."""
    packed = SpeechPiece(((1 * SR, 3 * SR), (10 * SR, 12 * SR)), gap=SR // 2)  # 0-2 s, silence, 2.5-4.5 s
    assert packed.word_to_file(1.7, 2.6) == (0, 2.7, 3.0)  # 0.3 s in, 0.5 s silence, 0.1 s in the next
    assert packed.word_to_file(2.3, 2.8) == (1, 10.0, 10.3)  # 0.2 s silence, 0.3 s in the next
    assert packed.word_to_file(0.5, 0.9) == (0, 1.5, 1.9)
    # "a" starts where the word before it ended, at the seam, and DTW ends it 0.3 s into the next
    # rest: only as long as it can last (0.3 s) counts, not the silence it inherited
    assert packed.word_to_file(2.0, 2.8) == (0, 3.0, 3.0) and packed.word_to_file(2.0, 2.8, 0.3) == (1, 10.0, 10.3)
    assert packed.word_to_file(3.0, 3.0) == (1, 10.5, 10.5)  # no length: the span of its start
    assert packed.word_to_file(2.2, 2.2) == (1, 10.0, 10.0)  # in the silence: the next span, as ``to_file``
    joined = SpeechPiece(((1 * SR, 3 * SR), (10 * SR, 12 * SR)))  # no silence between: majority alone
    assert joined.word_to_file(1.9, 2.4) == (1, 10.0, 10.4) and joined.word_to_file(1.6, 2.1) == (0, 2.6, 3.0)
    assert SpeechPiece(()).word_to_file(1.0, 2.0) == (-1, 0.0, 0.0)


def test_a_segment_over_two_rests_is_cut_where_its_words_change_span():
    # check_006 of corpus v2: one segment said the end of a rest at 45.6 s and of another at
    # 123.4 s; kept whole, the 205 words between were all pushed to 125.1 s (``monotonic``)
    packed = SpeechPiece(((int(45.4 * SR), int(46.9 * SR)), (int(123.3 * SR), int(125.3 * SR))), gap=SR)
    said = [Word(0.2, 0.4, "It"), Word(0.4, 0.9, "aggrieved"), Word(0.9, 1.4, "him,"), Word(2.4, 2.9, "superior"),
            Word(3.5, 3.8, "we")]  # "superior" starts 0.1 s before the second rest (in the silence)
    runs = packed.place(said)
    assert [[w.text for w in run] for run in runs] == [["It", "aggrieved", "him,"], ["superior", "we"]]
    assert [t for w in runs[1] for t in (w.start, w.end)] == pytest.approx([123.3, 123.7, 124.3, 124.6])
    between = [Word(46.9, 47.1, "that"), Word(47.1, 47.3, "his")]
    ordered = sorted([runs[0], between, runs[1]], key=lambda ws: ws[0].start)
    assert [w.start for w in monotonic([w for ws in ordered for w in ws], 300.0)][3:5] == [46.9, 47.1]
    one = SpeechPiece(packed.spans)  # spans end to end (a first pass's piece): never cut
    assert len(one.place(said)) == 1


def test_a_piece_is_silent_outside_its_own_speech():
    """A split call's channel: the other party's bleed between its own spans is zeroed."""
    signal = np.arange(1, 101, dtype=np.float32)
    piece = SpeechPiece(((10, 30), (50, 70)))
    assert np.array_equal(piece.audio(signal), np.r_[signal[10:30], signal[50:70]])
    part = piece.audio(signal[::-1].copy()[::-1], own=((0, 12), (25, 55), (68, 90)))  # a strided view too
    expected = np.r_[signal[10:30], signal[50:70]]
    expected[[*range(2, 15), *range(25, 38)]] = 0  # samples 12-25 and 55-68 are not its own
    assert part.flags.c_contiguous and np.array_equal(part, expected)


def test_without_vad_the_whole_file_is_cut_into_pieces():
    pieces = whole_file_pieces(np.ones(100 * SR, np.float32), 30)
    assert [p.spans for p in pieces][0][0][0] == 0 and pieces[-1].spans[-1][1] == 100 * SR
    assert all(p.samples <= 30 * SR for p in pieces)


def test_speech_share():
    probs = probabilities(10, [(2, 4)])
    assert speech_share(probs, 2.1, 3.9) == 1.0
    assert speech_share(probs, 6, 8) == 0.0


def test_gate_defaults():
    options = GateOptions()
    assert (options.vad.threshold, options.vad.min_silence, options.vad.pad, options.join_gap, options.max_piece) == (
        0.5, 0.3, 0.2, 1.0, 30.0)


def test_loops_are_recognised():
    assert loop_reason("Hello. " * 10, 20.0) == "compression ratio 3.5"
    stuck = "Well, I think that " + "no, " * 5 + "we should go to the market on Monday morning after all."
    assert loop_reason(stuck, 20.0) == "a phrase repeated 5 times in a row"
    looped = "I'm going to go ahead and do something. " * 3
    assert loop_reason(looped, 25.0) is not None
    assert loop_reason("Hello? Hello? Hello? Oh, hello. I didn't know you were there.", 4.0) is None
    assert "words per second" in loop_reason("one two three four five six seven eight nine ten eleven twelve", 1.5)
    assert loop_reason("short text", 0.1) is None  # too few words to judge
    assert longest_run("a b a b a b c".split(), 4) == 3
    assert compression_ratio("") == 0.0


def test_a_repetition_that_is_said_comes_back_in_the_same_words():
    """What the ladder compares (on the 30-minute corpus call a recurring read sentence agreed
    0.98 with itself decoded hotter; decoder loops in noisy calls 0.20-0.43)."""
    said = "he thought himself that persons in her view were simple and homogenous organisms".split() * 2
    again = [("homogeneous" if w == "homogenous" else w) for w in said]
    assert words_agree(said, said) == 1.0 and words_agree([], []) == 1.0
    assert words_agree(said, again) >= LoopOptions.said_again > words_agree(said, ["well"] * 20 + said[:6])
    assert words_agree(said, []) == 0.0


def test_silence_phrases_and_repeats():
    assert is_silence_phrase("Thank you.") and is_silence_phrase(" ♪ ") and is_silence_phrase("Thanks for watching!")
    assert not is_silence_phrase("Thank you for calling, how can I help?")
    assert collapse_repeats(["Hello.", "Hello.", "Hello.", "Hi.", "Hello."]) == [True, True, False, True, True]
