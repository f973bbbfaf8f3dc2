"""Joining Whisper's sub-word tokens into words, on hand-built token sequences."""

from __future__ import annotations

from witness.asr.words import Piece, is_annotation, join_words


def pieces(*spec: tuple[str | bytes, float, float]) -> list[Piece]:
    return [Piece(t if isinstance(t, bytes) else t.encode(), a, b, 0.5) for t, a, b in spec]


def texts(words) -> list[str]:
    return [w.text for w in words]


def test_sub_word_pieces_join_on_the_leading_space():
    words = join_words(pieces((" Chic", 1.0, 1.2), ("ago", 1.2, 1.5), (" also", 1.6, 1.9)))
    assert texts(words) == ["Chicago", "also"]
    assert (words[0].start, words[0].end) == (1.0, 1.5)


def test_punctuation_goes_to_the_previous_word_and_opening_marks_to_the_next():
    words = join_words(pieces((" Hello", 0, 1), (",", 1, 1.1), (' "', 1.2, 1.2), ("Yankee", 1.2, 1.6),
                              ('"', 1.6, 1.7), (" ?", 1.7, 1.8)))
    assert texts(words) == ["Hello,", '"Yankee"?']
    # punctuation takes no time: a full stop's stamp marks the pause after the word
    assert (words[0].start, words[0].end) == (0, 1) and (words[1].start, words[1].end) == (1.2, 1.6)


def test_a_character_split_across_tokens_is_decoded_whole():
    e_acute = "é".encode()
    words = join_words(pieces((b" caf" + e_acute[:1], 0, 0.3), (e_acute[1:], 0.3, 0.5)))
    assert texts(words) == ["café"]


def test_non_speech_annotations_are_dropped_unless_kept():
    seq = pieces((" [", 0, 0.1), ("BL", 0.1, 0.2), ("ANK", 0.2, 0.3), ("_AUDIO", 0.3, 0.4), ("]", 0.4, 0.5),
                 (" (", 1, 1), ("music", 1, 1.5), (")", 1.5, 1.6), (" ♪♪", 2, 3), (" Yes", 3, 3.5),
                 (" [Music", 4, 4.5), (" playing]", 4.5, 5))
    assert texts(join_words(seq)) == ["Yes"]
    assert "[BLANK_AUDIO]" in texts(join_words(seq, keep_annotations=True))


def test_probability_is_the_mean_of_the_tokens_and_times_never_run_backwards():
    seq = [Piece(b" gaz", 2.0, 2.2, 0.9), Piece(b"ed", 2.2, 2.1, 0.5)]
    (word,) = join_words(seq)
    assert word.probability == 0.7
    assert word.end >= word.start


def test_nothing_in_nothing_out():
    assert join_words([]) == ()
    assert join_words(pieces((" .", 0, 1))) == ()  # a lone full stop is not a word
    assert is_annotation("*sigh*") and is_annotation("♪") and not is_annotation("Hello.")
