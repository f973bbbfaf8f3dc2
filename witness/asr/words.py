"""Join Whisper's sub-word tokens into words.

Whisper's tokens are byte-level BPE pieces: ``" Chic"``, ``"ago"``, ``"."``. A piece that
starts with a space starts a new word; any other piece continues the current one. Then:
a "word" of punctuation only is glued to its neighbour (opening marks such as ``"`` ``(``
``¿`` to the next word, the rest to the previous one); a word in brackets or parentheses
(``[BLANK_AUDIO]``, ``(music)``) or of symbols only (``♪``) is Whisper annotating non-speech
and is dropped, as are pieces decoding to nothing. Text is decoded from the joined bytes of a
word, so a character split across tokens survives.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

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
