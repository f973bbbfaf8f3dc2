"""Look-ups in a transcript: what was said at a moment, in a range, by a speaker, or where
a phrase was said; with utterances of context around each hit.

A :class:`QuoteQuery` holds the criteria; every criterion given must hold (they combine
with AND). :func:`find_quotes` returns one :class:`Quote` per matching utterance, or, with
a phrase, one per place the phrase is said (an utterance saying it twice gives two).

Matching rules:

- ``at``: utterances with start <= at < end (a zero-length utterance matches its instant);
  an instant in a pause between utterances matches nothing.
- ``start``/``end``: utterances overlapping [start, end); either may be open.
- ``speaker``: the utterance's speaker label, compared case-insensitively.
- ``phrase``: the phrase's normalised words (:func:`witness.textnorm.normalize_words`)
  appear consecutively among the utterance's normalised words, across word boundaries;
  the match starts where the first matched word starts.

JSON form (:func:`quotes_to_json`), for scripts; times are float seconds::

    {
      "schema": "witness.quotes", "schema_version": 1,
      "transcript": "<path of the transcript JSON or null>",
      "query": {"at", "from", "to", "speaker", "grep", "context"},   # null when not given
      "quotes": [{
        "index":   position of the utterance in the transcript's utterances (0-based),
        "speaker": label or null (unattributed),
        "start", "end", "text": the utterance,
        "at":      the moment asked for, or null,
        "match":   {"text": the matched words as written, "start", "end"} for a phrase, else null,
        "before", "after": context utterances [{"index", "speaker", "start", "end", "text"}]
      }]
    }
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

from witness.errors import InputError
from witness.textnorm import normalize_words
from witness.timecode import format_clock
from witness.transcript import Transcript, Utterance

QUOTES_SCHEMA = "witness.quotes"
QUOTES_SCHEMA_VERSION = 1
UNATTRIBUTED_LABEL = "(unattributed)"


@dataclass(frozen=True)
class QuoteQuery:
    """What to look for (None: any). ``at``, ``start``, ``end`` in seconds; ``context``:
    utterances to show before and after each hit (default 0)."""

    at: float | None = None
    start: float | None = None
    end: float | None = None
    speaker: str | None = None
    phrase: str | None = None
    context: int = 0


@dataclass(frozen=True)
class PhraseMatch:
    """Where a phrase was said: the matched words as written, first word start to last word end."""

    text: str
    start: float
    end: float


@dataclass(frozen=True)
class Quote:
    """One hit: the utterance at ``index`` in the transcript, with its context utterances."""

    index: int
    utterance: Utterance
    at: float | None = None
    match: PhraseMatch | None = None
    before: tuple[Utterance, ...] = ()
    after: tuple[Utterance, ...] = ()

    def __str__(self) -> str:
        """As ``witness quote`` prints it: the hit's line, with its context lines."""
        return format_quotes([self]).rstrip("\n")


def audio_end(transcript: Transcript) -> float:
    """The end of the audio: its duration, or the last utterance's end if that is later."""
    return max([transcript.audio.duration, *(u.end for u in transcript.utterances)])


def check_query(transcript: Transcript, query: QuoteQuery, source: str | None = None) -> None:
    """InputError (naming ``source``) for a query that cannot be asked of this transcript:
    a moment or range start past the end of the audio, an empty range, a phrase with no
    words, a negative context."""
    end = audio_end(transcript)
    for what, time in (("time", query.at), ("range start", query.start)):
        if time is not None and time > end:
            raise InputError(f"{what} {format_clock(time)} is past the end of the audio ({format_clock(end)})", source)
    if query.start is not None and query.end is not None and query.end <= query.start:
        raise InputError(f"the range ends before it starts ({format_clock(query.start)} to {format_clock(query.end)})", source)
    if query.phrase is not None and not normalize_words(query.phrase):
        raise InputError(f"the phrase {query.phrase!r} has no words to look for", source)
    if query.context < 0:
        raise InputError(f"context must be 0 or more utterances, not {query.context}", source)


def find_quotes(transcript: Transcript, query: QuoteQuery, source: str | None = None) -> tuple[Quote, ...]:
    """Every hit of ``query`` in ``transcript``, in transcript order (see the module docstring)."""
    check_query(transcript, query, source)
    utterances = transcript.utterances
    hits: list[Quote] = []
    for index, utterance in enumerate(utterances):
        if not _selected(utterance, query):
            continue
        matches: Sequence[PhraseMatch | None] = (None,) if query.phrase is None else _phrase_matches(utterance, query.phrase)
        before = utterances[max(0, index - query.context) : index]
        after = utterances[index + 1 : index + 1 + query.context]
        hits.extend(Quote(index, utterance, query.at, match, before, after) for match in matches)
    return tuple(hits)


def _selected(u: Utterance, query: QuoteQuery) -> bool:
    """The time and speaker criteria (the phrase is matched separately)."""
    if query.at is not None and not (u.start <= query.at < u.end or query.at == u.start):
        return False
    start = -math.inf if query.start is None else query.start
    end = math.inf if query.end is None else query.end
    if not (u.start < end and (u.end > start or u.start >= start)):
        return False
    return query.speaker is None or (u.speaker is not None and u.speaker.casefold() == query.speaker.casefold())


def _phrase_matches(u: Utterance, phrase: str) -> list[PhraseMatch]:
    """Every place the phrase's words appear consecutively in the utterance."""
    wanted = normalize_words(phrase)
    if u.words:
        tokens = [(text, k) for k, word in enumerate(u.words) for text in normalize_words(word.text)]
    else:
        tokens = [(text, None) for text in normalize_words(u.text)]
    texts = [text for text, _ in tokens]
    found = []
    for i in range(len(texts) - len(wanted) + 1):
        if texts[i : i + len(wanted)] != wanted:
            continue
        first, last = tokens[i][1], tokens[i + len(wanted) - 1][1]
        if first is None or last is None:
            found.append(PhraseMatch(" ".join(wanted), u.start, u.end))
        else:
            text = " ".join(w.text.strip() for w in u.words[first : last + 1])
            found.append(PhraseMatch(text, u.words[first].start, u.words[last].end))
    return found


# --- text form ------------------------------------------------------------------------


def format_quote(quote: Quote) -> str:
    """The hit as a line: ``At 09:32.4 SPEAKER_01 says "..."`` for a moment asked for,
    else the utterance's span, ``At 00:14.4–00:17.8 Sheila says "..."``."""
    u = quote.utterance
    if quote.at is not None and quote.match is None:
        when = format_clock(quote.at)
    else:
        when = f"{format_clock(u.start)}–{format_clock(u.end)}"
    return f'At {when} {_speaker(u)} says "{u.text.strip()}"'


def format_context(utterance: Utterance) -> str:
    """A context line: ``  [00:12.5] Diane: This is Diane in New Jersey.``"""
    return f"  [{format_clock(utterance.start)}] {_speaker(utterance)}: {utterance.text.strip()}"


def format_quotes(quotes: Sequence[Quote]) -> str:
    """All hits, each with its context lines; ``--`` separates hits when context is shown."""
    blocks = [
        "\n".join([*(format_context(u) for u in q.before), format_quote(q), *(format_context(u) for u in q.after)])
        for q in quotes
    ]
    separator = "\n--\n" if any(q.before or q.after for q in quotes) else "\n"
    return separator.join(blocks) + ("\n" if blocks else "")


def _speaker(u: Utterance) -> str:
    return u.speaker if u.speaker is not None else UNATTRIBUTED_LABEL


def quotes_to_json(quotes: Sequence[Quote], query: QuoteQuery, source: str | None = None) -> str:
    """The JSON form documented in the module docstring."""
    document = {
        "schema": QUOTES_SCHEMA,
        "schema_version": QUOTES_SCHEMA_VERSION,
        "transcript": source,
        "query": {
            "at": query.at,
            "from": query.start,
            "to": query.end,
            "speaker": query.speaker,
            "grep": query.phrase,
            "context": query.context,
        },
        "quotes": [_quote_to_dict(q) for q in quotes],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _quote_to_dict(q: Quote) -> dict[str, Any]:
    match = None if q.match is None else {"text": q.match.text, "start": q.match.start, "end": q.match.end}
    return {
        **_utterance_to_dict(q.index, q.utterance),
        "at": q.at,
        "match": match,
        "before": [_utterance_to_dict(q.index - len(q.before) + k, u) for k, u in enumerate(q.before)],
        "after": [_utterance_to_dict(q.index + 1 + k, u) for k, u in enumerate(q.after)],
    }


def _utterance_to_dict(index: int, u: Utterance) -> dict[str, Any]:
    return {"index": index, "speaker": u.speaker, "start": u.start, "end": u.end, "text": u.text.strip()}
