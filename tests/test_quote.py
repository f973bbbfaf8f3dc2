"""Quote look-ups on hand-built transcripts (gap, touching, overlap, empty) and on the sample call."""

from __future__ import annotations

import json

import pytest

from tests.stm_transcript import transcript_from_stm
from witness.errors import InputError
from witness.quote import QuoteQuery, find_quotes, format_quote, format_quotes, quotes_to_json
from witness.transcript import AudioMeta, Transcript, Utterance, Word


def utterance(speaker: str | None, start: float, text: str, step: float = 0.5) -> Utterance:
    words = tuple(
        Word(start + i * step, start + (i + 1) * step, w, 0.9, speaker) for i, w in enumerate(text.split())
    )
    return Utterance(speaker, start, words[-1].end, text, words)


@pytest.fixture
def hand() -> Transcript:
    # 0-1.5 A | pause | 3-5 B | 5-6 A touches B | 5.5-6.5 B overlaps A | 7-7.5 unattributed | 9-9 zero length
    utterances = (
        utterance("A", 0.0, "Well-known words, here."),
        utterance("B", 3.0, "I said well known words", step=0.4),
        utterance("A", 5.0, "Known words."),
        utterance("B", 5.5, "words words"),
        utterance(None, 7.0, "mumble"),
        Utterance("B", 9.0, 9.0, "Hm.", (Word(9.0, 9.0, "Hm.", 0.5, "B"),)),
    )
    return Transcript(audio=AudioMeta("hand.wav", 10.0), utterances=utterances, speakers=("A", "B"))


def indexes(quotes) -> list[int]:
    return [q.index for q in quotes]


def test_at(hand):
    assert indexes(find_quotes(hand, QuoteQuery(at=1.0))) == [0]
    assert find_quotes(hand, QuoteQuery(at=2.5)) == ()  # a pause: nothing was said
    assert indexes(find_quotes(hand, QuoteQuery(at=5.0))) == [2]  # touching: the one starting wins
    assert indexes(find_quotes(hand, QuoteQuery(at=5.7))) == [2, 3]  # overlapped speech: both
    assert indexes(find_quotes(hand, QuoteQuery(at=9.0))) == [5]  # zero-length utterance
    assert indexes(find_quotes(hand, QuoteQuery(at=10.0))) == []  # the very end: nothing, no error


def test_range_and_speaker(hand):
    assert indexes(find_quotes(hand, QuoteQuery(start=1.0, end=3.0))) == [0]  # [1, 3): B starts at 3
    assert indexes(find_quotes(hand, QuoteQuery(start=6.2))) == [3, 4, 5]
    assert indexes(find_quotes(hand, QuoteQuery(end=3.1))) == [0, 1]
    assert indexes(find_quotes(hand, QuoteQuery(speaker="b"))) == [1, 3, 5]
    assert indexes(find_quotes(hand, QuoteQuery(speaker="B", start=4, end=6))) == [1, 3]
    assert find_quotes(hand, QuoteQuery(speaker="Nobody")) == ()


def test_grep_matches_words_across_boundaries(hand):
    quotes = find_quotes(hand, QuoteQuery(phrase="WELL KNOWN words"))
    assert indexes(quotes) == [0, 1]
    # "Well-known" is one recognised word holding two normalised words: the match starts with it.
    assert (quotes[0].match.text, quotes[0].match.start, quotes[0].match.end) == ("Well-known words,", 0.0, 1.0)
    assert (quotes[1].match.text, quotes[1].match.start) == ("well known words", pytest.approx(3.8))
    twice = find_quotes(hand, QuoteQuery(phrase="words"))
    assert [(q.index, q.match.start) for q in twice] == [(0, 0.5), (1, pytest.approx(4.6)), (2, 5.5), (3, 5.5), (3, 6.0)]
    assert find_quotes(hand, QuoteQuery(phrase="wor")) == ()  # whole words only
    assert indexes(find_quotes(hand, QuoteQuery(phrase="words", speaker="A", at=5.2))) == [2]


def test_context_is_clipped_at_the_ends(hand):
    first, last = find_quotes(hand, QuoteQuery(at=0.5, context=2)), find_quotes(hand, QuoteQuery(at=9, context=2))
    assert (len(first[0].before), [u.text for u in first[0].after]) == (0, ["I said well known words", "Known words."])
    assert ([u.text for u in last[0].before], last[0].after) == (["words words", "mumble"], ())


def test_bad_queries_name_the_file(hand):
    with pytest.raises(InputError, match=r"^t.json: time 00:10.5 is past the end of the audio \(00:10.0\)$"):
        find_quotes(hand, QuoteQuery(at=10.5), "t.json")
    with pytest.raises(InputError, match="range start"):
        find_quotes(hand, QuoteQuery(start=11), "t.json")
    with pytest.raises(InputError, match="ends before it starts"):
        find_quotes(hand, QuoteQuery(start=4, end=3), "t.json")
    with pytest.raises(InputError, match="no words"):
        find_quotes(hand, QuoteQuery(phrase=" ?! "), "t.json")


def test_empty_transcript():
    empty = Transcript(audio=AudioMeta("silence.wav", 5.0))
    assert find_quotes(empty, QuoteQuery(at=2.0)) == ()
    assert format_quotes(()) == ""


def test_text_forms(hand):
    (at,) = find_quotes(hand, QuoteQuery(at=3.25))
    assert format_quote(at) == 'At 00:03.3 B says "I said well known words"'
    (unattributed,) = find_quotes(hand, QuoteQuery(at=7.2))
    assert format_quote(unattributed) == 'At 00:07.2 (unattributed) says "mumble"'
    with_context = format_quotes(find_quotes(hand, QuoteQuery(phrase="known words", context=1)))
    assert with_context.splitlines() == [
        'At 00:00.0–00:01.5 A says "Well-known words, here."',
        "  [00:03.0] B: I said well known words",
        "--",
        '  [00:00.0] A: Well-known words, here.',
        'At 00:03.0–00:05.0 B says "I said well known words"',
        "  [00:05.0] A: Known words.",
        "--",
        "  [00:03.0] B: I said well known words",
        'At 00:05.0–00:06.0 A says "Known words."',
        "  [00:05.5] B: words words",
    ]


def test_json_form(hand):
    query = QuoteQuery(phrase="known words", speaker="A", context=1)
    document = json.loads(quotes_to_json(find_quotes(hand, query), query, "hand.json"))
    assert (document["schema"], document["schema_version"], document["transcript"]) == ("witness.quotes", 1, "hand.json")
    assert document["query"] == {"at": None, "from": None, "to": None, "speaker": "A", "grep": "known words", "context": 1}
    first = document["quotes"][0]
    assert set(first) == {"index", "speaker", "start", "end", "text", "at", "match", "before", "after"}
    assert first["match"] == {"text": "Well-known words,", "start": 0.0, "end": 1.0}
    assert [q["index"] for q in document["quotes"]] == [0, 2]
    assert document["quotes"][1]["before"] == [
        {"index": 1, "speaker": "B", "start": 3.0, "end": pytest.approx(5.0), "text": "I said well known words"}
    ]


def test_originally_from_chicago(sample_call):
    """Done-when: found at 14.4–17.8 s for Sheila and at 17.8 s for Diane (rounded to 0.1 s)."""
    transcript = transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")
    sheila, diane = find_quotes(transcript, QuoteQuery(phrase="originally from Chicago"))
    assert (sheila.utterance.speaker, round(sheila.utterance.start, 1), round(sheila.utterance.end, 1)) == ("Sheila", 14.4, 17.8)
    assert (diane.utterance.speaker, round(diane.utterance.start, 1)) == ("Diane", 17.8)
    assert sheila.match.start == pytest.approx(14.444 + 5 * (17.769 - 14.444) / 8)  # 6th of 8 words
    assert format_quote(sheila) == 'At 00:14.4–00:17.8 Sheila says "And I\'m Sheila in Texas, originally from Chicago."'
