"""Join Whisper's sub-word tokens into words.

Whisper's tokens are byte-level BPE pieces: ``" Chic"``, ``"ago"``, ``"."``. A piece that
starts with a space starts a new word; any other piece continues the current one. Then:
a "word" of punctuation only is glued to its neighbour (opening marks such as ``"`` ``(``
``¿`` to the next word, the rest to the previous one); a word in brackets or parentheses
(``[BLANK_AUDIO]``, ``(music)``) or of symbols only (``♪``) is Whisper annotating non-speech
and is dropped, as are pieces decoding to nothing. Text is decoded from the joined bytes of a
word, so a character split across tokens survives. ``token_spans`` gives each token its time
span from whisper.cpp's token data, and ``monotonic`` makes a track's word times orderly.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from witness.transcript import Word

OPENING = "\"'“‘«¿¡([{"
CLOSERS = {"[": "]", "(": ")"}


@dataclass(frozen=True)
class Piece:
    """One text token: raw bytes, its time span (seconds) and Whisper's probability."""

    text: bytes
    start: float
    end: float
    probability: float


@dataclass(frozen=True)
class _Draft:
    text: str
    start: float
    end: float
    probs: tuple[float, ...]

    def merged(self, other: "_Draft", before: bool) -> "_Draft":
        """This word with ``other``'s text (punctuation) attached; the time stays the word's:
        a full stop's timestamp marks the pause after the word, not the word."""
        text = other.text + self.text if before else self.text + other.text
        return _Draft(text, self.start, self.end, self.probs + other.probs)


def join_words(pieces: Iterable[Piece], keep_annotations: bool = False) -> tuple[Word, ...]:
    """Words (start, end, text, mean token probability) from text tokens in time order."""
    drafts = [d for d in _split(pieces) if d.text]
    drafts = _attach_punctuation(drafts)
    if not keep_annotations:
        drafts = _drop_annotations(drafts)
    return tuple(
        Word(start=d.start, end=max(d.start, d.end), text=d.text, probability=sum(d.probs) / len(d.probs))
        for d in drafts
    )


def _split(pieces: Iterable[Piece]) -> list[_Draft]:
    """Group pieces by the leading-space rule; decode each group's bytes once."""
    groups: list[list[Piece]] = []
    for piece in pieces:
        if not piece.text:
            continue
        if not groups or piece.text.startswith(b" "):
            groups.append([piece])
        else:
            groups[-1].append(piece)
    return [
        _Draft(
            text=b"".join(p.text for p in g).decode("utf-8", "replace").strip(),
            start=g[0].start,
            end=next((p.end for p in reversed(g) if not _is_punctuation_bytes(p.text)), g[-1].end),
            probs=tuple(p.probability for p in g),
        )
        for g in groups
    ]


def _is_punctuation_bytes(text: bytes) -> bool:
    return is_punctuation(text.decode("utf-8", "replace").strip())


def _attach_punctuation(drafts: Sequence[_Draft]) -> list[_Draft]:
    out: list[_Draft] = []
    pending: _Draft | None = None  # opening marks waiting for the next word
    for d in drafts:
        if is_punctuation(d.text):
            if all(c in OPENING for c in d.text):
                pending = d if pending is None else pending.merged(d, before=False)
                continue
            if out:
                out[-1] = out[-1].merged(d, before=False)
            continue  # punctuation before any word is no word
        if pending is not None:
            d, pending = d.merged(pending, before=True), None
        out.append(d)
    if pending is not None and out:
        out[-1] = out[-1].merged(pending, before=False)
    return out


def _drop_annotations(drafts: Sequence[_Draft]) -> list[_Draft]:
    """Drop non-speech markers, including bracketed spans of several words (``[Music playing]``)."""
    out: list[_Draft] = []
    closer = ""
    for d in drafts:
        if closer:
            closer = "" if d.text.endswith(closer) else closer
            continue
        if d.text[0] in CLOSERS and not d.text.endswith(CLOSERS[d.text[0]]):
            closer = CLOSERS[d.text[0]]  # a marker spanning several words: skip to its end
            continue
        if not is_annotation(d.text):
            out.append(d)
    return out


def is_punctuation(text: str) -> bool:
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def is_annotation(text: str) -> bool:
    """Whisper's non-speech markers: ``[BLANK_AUDIO]``, ``(music)``, ``*sigh*``, ``♪``."""
    t = text.strip()
    if not t:
        return True
    bracketed = (t[0], t[-1]) in {("[", "]"), ("(", ")"), ("*", "*")} and len(t) > 1
    no_word_chars = not any(c.isalnum() for c in t) and not is_punctuation(t)
    return bracketed or no_word_chars


# Centiseconds: whisper.cpp's token times run ahead of DTW's, by a median 0.12 s (starts) and
# 0.15 s (ends) on the dev calls + sample call, 0.10 / 0.14 s on ten v2 tune calls, more the
# longer the segment runs (scripts/token_times.py). Put 0.10 s later, the full job's WDER in
# token mode (each digit a word, dev + sample) fell from 2.45% to 1.87% (DTW: 1.28%).
TOKEN_LAG = 10


def token_spans(segments: list[list[Any]], dtw: bool) -> list[list[tuple[int, int]]]:
    """(start, end) in centiseconds per text token, per segment (whisper_token_data: t0, t1, t_dtw).

    Token mode: whisper.cpp's t0/t1, ``TOKEN_LAG`` later (they run early). DTW mode:
    whisper.cpp stamps token k with the frame where the alignment path enters the next row;
    a decoder row attends to the audio of the token it predicts (row 0, the no-timestamps
    token, predicts the first text token), so that frame is where token k's audio *ends*.
    Token k thus spans t_dtw[k-1]..t_dtw[k]; a segment's first token starts no earlier than
    the segment's own timestamp (t0), which keeps a pause between decoding windows out of
    the next word.
    """
    if not dtw:
        return [[(d.t0 + TOKEN_LAG, max(d.t0, d.t1) + TOKEN_LAG) for d in tokens] for tokens in segments]
    out, previous_end = [], None
    for tokens in segments:
        spans = []
        for i, d in enumerate(tokens):
            end = d.t_dtw if d.t_dtw >= 0 else d.t1
            start = d.t0 if previous_end is None else previous_end
            if i == 0:
                start = max(start, d.t0)
            spans.append((min(start, end), end))
            previous_end = end
        out.append(spans)
    return out


WORD_SECONDS_BASE = 0.2  # a word lasts at most this…
WORD_SECONDS_PER_CHAR = 0.1  # …plus this per letter (speech runs at ~14 letters a second)


def monotonic(words: list[Word], duration: float) -> tuple[Word, ...]:
    """Clamp word times into [0, duration], make starts non-decreasing, and bound each
    word's length. whisper.cpp knows where a word ends (DTW) but a segment's first word
    starts where the segment does: after a long silence (a ring tone, music) that put
    "Hello" at 0.0-7.1 s when it was said at 6.7 s; its start moves to end - a plausible
    length for its letters (6.4 s here)."""
    out: list[Word] = []
    last = 0.0
    for w in words:
        start = min(max(w.start, w.end - plausible_seconds(w.text), last), duration)
        end = min(max(w.end, start), duration)
        out.append(Word(start=start, end=end, text=w.text, probability=w.probability))
        last = start
    return tuple(out)


def plausible_seconds(text: str) -> float:
    """The longest a word of ``text`` plausibly lasts (``WORD_SECONDS_BASE`` + a share per letter)."""
    return WORD_SECONDS_BASE + WORD_SECONDS_PER_CHAR * max(1, sum(c.isalnum() for c in text))
