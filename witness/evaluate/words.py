"""Speaker-labelled normalised words, the common input of WER and WDER scoring."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from witness.evaluate.stm import StmSegment, read_stm, segments_of_file
from witness.textnorm import normalize_words
from witness.transcript import Transcript, read_transcript


@dataclass(frozen=True)
class SpeakerWord:
    """A normalised word and who said it (None: unattributed)."""

    text: str
    speaker: str | None


def words_from_transcript(transcript: Transcript) -> tuple[SpeakerWord, ...]:
    """Normalised words of a witness transcript in utterance order.

    Each recognised word is normalised on its own and its pieces keep the word's speaker;
    an utterance without word timings falls back to its text and its own speaker.
    """
    out: list[SpeakerWord] = []
    for utterance in transcript.utterances:
        if utterance.words:
            for word in utterance.words:
                out.extend(_labelled(normalize_words(word.text), word.speaker))
        else:
            out.extend(_labelled(normalize_words(utterance.text), utterance.speaker))
    return tuple(out)


def words_from_stm(segments: Iterable[StmSegment]) -> tuple[SpeakerWord, ...]:
    """Normalised words of STM segments, each carrying its segment's speaker."""
    out: list[SpeakerWord] = []
    for segment in segments:
        out.extend(_labelled(normalize_words(segment.text), segment.speaker))
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


def _labelled(texts: list[str], speaker: str | None) -> list[SpeakerWord]:
    return [SpeakerWord(text, speaker) for text in texts]
