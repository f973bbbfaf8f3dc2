"""Speaker-labelled normalised words, the common input of WER and WDER scoring.

Text is normalised with ``textnorm.scoring_words`` (Whisper's English normaliser, then
witness's word rule), one same-speaker run of words at a time, so that "twenty five" or
"$5" spoken as two words is read as one number while each word keeps its speaker.

Digit runs are one word after normalisation ("0 6 7 2" and "zero six seven two" both become
"0672"), which weighs a speaker who reads digits down: ``with_digits(words, "each")`` splits every
such word into one word per digit, so that each spoken digit counts once.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Iterable

from witness.evaluate.stm import StmSegment, read_stm, segments_of_file
from witness.textnorm import scoring_words
from witness.transcript import Transcript, read_transcript


DIGITS = ("joined", "each")  # a run of digits is one word | each digit is a word


@dataclass(frozen=True)
class SpeakerWord:
    """A normalised word and who said it (None: unattributed)."""

    text: str
    speaker: str | None


def words_from_transcript(transcript: Transcript) -> tuple[SpeakerWord, ...]:
    """Normalised words of a witness transcript in utterance order.

    Each run of recognised words with one speaker is normalised as one text and its words
    keep that speaker; an utterance without word timings falls back to its text and its
    own speaker.
    """
    out: list[SpeakerWord] = []
    for utterance in transcript.utterances:
        if utterance.words:
            for speaker, run in groupby(utterance.words, key=lambda w: w.speaker):
                out.extend(_labelled(scoring_words(" ".join(w.text for w in run)), speaker))
        else:
            out.extend(_labelled(scoring_words(utterance.text), utterance.speaker))
    return tuple(out)


def words_from_stm(segments: Iterable[StmSegment]) -> tuple[SpeakerWord, ...]:
    """Normalised words of STM segments, each carrying its segment's speaker."""
    out: list[SpeakerWord] = []
    for segment in segments:
        out.extend(_labelled(scoring_words(segment.text), segment.speaker))
    return tuple(out)


def read_reference_words(path: str | Path, recording: str) -> tuple[SpeakerWord, ...]:
    """Reference words from a witness JSON (``*.json``) or an STM file (anything else).

    ``recording`` picks the file id in an STM that holds several (see
    :func:`witness.evaluate.stm.segments_of_file`).
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        return words_from_transcript(read_transcript(path))
    return words_from_stm(segments_of_file(read_stm(path), recording, str(path)))


def with_digits(words: Iterable[SpeakerWord], digits: str) -> tuple[SpeakerWord, ...]:
    """``words`` as ``digits`` scores them: "joined" as they are, "each" with every all-digit
    word ("0672") split into one word per digit, each keeping its speaker ("$5" and "25th"
    stay whole). ValueError for another ``digits``."""
    if digits not in DIGITS:
        raise ValueError(f"digits={digits!r}: choose from {', '.join(DIGITS)}")
    if digits == "joined":
        return tuple(words)
    return tuple(SpeakerWord(d, w.speaker) for w in words for d in (w.text if w.text.isdigit() else (w.text,)))


def _labelled(texts: list[str], speaker: str | None) -> list[SpeakerWord]:
    return [SpeakerWord(text, speaker) for text in texts]
