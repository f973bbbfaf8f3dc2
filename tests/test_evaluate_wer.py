"""WER alignment, word normalisation, STM reading and WDER."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.stm_transcript import transcript_from_stm
from witness.errors import InputError
from witness.evaluate import align_words, normalize_words, word_diarization_error, word_error_rate
from witness.evaluate.stm import parse_stm, read_stm, segments_of_file
from witness.evaluate.wder import score_words
from witness.evaluate.words import SpeakerWord, with_digits, words_from_stm, words_from_transcript
from witness.transcript import Utterance
from witness.textnorm import scoring_words


def test_normalize_words():
    assert normalize_words("Okay, then I thought you know, I heard a beep.") == [
        "okay", "then", "i", "thought", "you", "know", "i", "heard", "a", "beep",
    ]
    assert normalize_words("  I DIDN’T   know 'you' were there!? ") == ["i", "didn't", "know", "you", "were", "there"]
    assert normalize_words("well-known ... 3.5 $5 rock 'n' roll") == ["well", "known", "3", "5", "$5", "rock", "n", "roll"]
    assert normalize_words("—") == []


def edit_distance(a: list[str], b: list[str]) -> int:
    """Textbook dynamic programme, independent of the vectorised one under test."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def test_alignment_is_minimal_and_consistent():
    rng = np.random.default_rng(0)
    for _ in range(200):
        ref = list(rng.choice(list("abcd"), size=int(rng.integers(0, 9))))
        hyp = list(rng.choice(list("abcde"), size=int(rng.integers(0, 9))))
        pairs = align_words(ref, hyp)
        result = word_error_rate(ref, hyp)
        assert result.substitutions + result.deletions + result.insertions == edit_distance(ref, hyp)
        assert [p.ref_index for p in pairs if p.ref_index is not None] == list(range(len(ref)))
        assert [p.hyp_index for p in pairs if p.hyp_index is not None] == list(range(len(hyp)))
        for p in pairs:
            if p.kind == "hit":
                assert ref[p.ref_index] == hyp[p.hyp_index]
            if p.kind == "substitution":
                assert ref[p.ref_index] != hyp[p.hyp_index]
        assert result.reference_words == len(ref) and result.hypothesis_words == len(hyp)


def test_word_error_rate_parts():
    result = word_error_rate("the cat sat on the mat".split(), "the cat sat on mat today".split())
    assert (result.hits, result.substitutions, result.deletions, result.insertions) == (5, 0, 1, 1)
    assert result.wer == pytest.approx(2 / 6)
    swapped = word_error_rate(["a", "b"], ["a", "c"])
    assert (swapped.substitutions, swapped.wer) == (1, 0.5)
    assert word_error_rate([], []).wer == 0.0
    assert word_error_rate([], ["x"]).wer == 1.0


def test_stm_reading(sample_call, tmp_path):
    segments = read_stm(sample_call / "sample.stm")
    assert len(segments) == 13
    assert segments[7].speaker == "Sheila" and segments[7].start == 14.444
    assert segments[7].text == "And I'm Sheila in Texas, originally from Chicago."
    parsed = parse_stm(";; comment\na 1 X 0 1 <o,f0,female> hi there\na 1 X 1 2 IGNORE_TIME_SEGMENT_IN_SCORING\nb 1 Y 0 1 yo\n")
    assert [(s.file_id, s.text) for s in parsed] == [("a", "hi there"), ("b", "yo")]
    assert [s.text for s in segments_of_file(parsed, "b")] == ["yo"]
    with pytest.raises(InputError, match="several recordings"):
        segments_of_file(parsed, "c")
    with pytest.raises(InputError, match="line 2: start and end must be numbers"):
        parse_stm("a 1 X 0 1 ok\na 1 X zero 1 bad\n", "bad.stm")
    (tmp_path / "empty.stm").write_text(";; nothing\n")
    with pytest.raises(InputError, match="no STM segments"):
        read_stm(tmp_path / "empty.stm")


def test_transcript_from_its_own_reference_scores_zero(sample_call):
    transcript = transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")
    reference = words_from_stm(read_stm(sample_call / "sample.stm"))
    hypothesis = words_from_transcript(transcript.rename_speakers({"Diane": "SPEAKER_01", "Sheila": "SPEAKER_00"}))
    assert len(reference) == 87  # 81 words, six contractions expanded ("I'm" -> "i am")
    assert word_error_rate([w.text for w in reference], [w.text for w in hypothesis]).wer == 0.0
    wder = word_diarization_error(reference, hypothesis)
    assert (wder.wder, wder.aligned, dict(wder.mapping)) == (0.0, 87, {"SPEAKER_01": "Diane", "SPEAKER_00": "Sheila"})


def test_wder_counts_wrong_and_unattributed_words(sample_call):
    transcript = transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")
    reference = words_from_stm(read_stm(sample_call / "sample.stm"))
    # Sheila's "originally from Chicago." given to Diane; Diane's last utterance unattributed.
    utterances = list(transcript.utterances)
    sheila = utterances[7]
    words = list(sheila.words)
    words[-3:] = [replace(w, speaker="Diane") for w in words[-3:]]
    utterances[7] = replace(sheila, words=tuple(words))
    last = utterances[-1]
    utterances[-1] = replace(last, speaker=None, words=tuple(replace(w, speaker=None) for w in last.words))
    hypothesis = words_from_transcript(replace(transcript, utterances=tuple(utterances)))
    wder = word_diarization_error(reference, hypothesis)
    # "Oh, I don't hear that in New Jersey now." is ten words once "don't" is "do not"
    assert (wder.wrong, wder.unattributed, wder.aligned) == (3 + 10, 10, 87)
    assert wder.wder == pytest.approx(13 / 87)


def test_wder_ignores_deleted_and_inserted_words():
    ref = [SpeakerWord("hello", "A"), SpeakerWord("there", "A"), SpeakerWord("hi", "B")]
    hyp = [SpeakerWord("hello", "x"), SpeakerWord("hi", "y"), SpeakerWord("extra", "x")]
    wder = word_diarization_error(ref, hyp)
    assert (wder.wrong, wder.aligned, wder.wder) == (0, 2, 0.0)
    # One hypothesis speaker for two reference speakers: only one of them can be matched.
    merged = word_diarization_error(ref, [replace(w, speaker="x") for w in hyp])
    assert (merged.wrong, merged.aligned) == (1, 2)
    assert word_diarization_error([], []).wder == 0.0


def test_utterance_without_words_uses_its_text(sample_call):
    transcript = transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")
    bare = replace(transcript, utterances=(Utterance("Diane", 0.0, 1.0, "Hello, there!"),))
    assert words_from_transcript(bare) == (SpeakerWord("hello", "Diane"), SpeakerWord("there", "Diane"))


@pytest.mark.parametrize("spoken, written", [
    ("zero six seven two", "0 6 7 2"),
    ("twenty dollars and fifty cents", "$20.50"),
    ("I won't pay one thousand", "I will not pay 1,000"),
    ("Uh, the colour is five percent", "the color is 5%"),
])
def test_scoring_normalises_numbers_currency_and_contractions(spoken, written):
    assert scoring_words(spoken) == scoring_words(written)
    assert word_error_rate(scoring_words(spoken), scoring_words(written)).wer == 0.0


def test_each_digit_counts_as_a_word():
    reference = words_from_stm(parse_stm("c 1 A 0.0 2.0 call me at\nc 1 B 2.0 4.0 zero six seven two\n", "ref.stm"))
    hypothesis = tuple(replace(w, speaker="A") for w in reference)  # the digit reader's words on the other speaker
    assert [w.text for w in reference] == ["call", "me", "at", "0672"]
    joined, each = score_words(reference, hypothesis)[1], score_words(reference, hypothesis, digits="each")[1]
    assert (joined.wrong, joined.aligned) == (1, 4)
    assert (each.wrong, each.aligned) == (3, 7)  # the four digits outweigh the three words: A is mapped to B
    assert with_digits([SpeakerWord("$5", "A"), SpeakerWord("25th", "A")], "each") == (
        SpeakerWord("$5", "A"), SpeakerWord("25th", "A"))
    with pytest.raises(ValueError, match="digits='some': choose from joined, each"):
        with_digits(reference, "some")
