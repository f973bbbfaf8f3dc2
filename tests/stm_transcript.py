"""A witness transcript built from an STM reference without any model (a test helper).

Each STM line becomes one utterance; its words (split on whitespace, punctuation kept as
Whisper writes it) are spread evenly over the line's span and carry the line's speaker.
"""

from __future__ import annotations

import wave
from dataclasses import replace
from pathlib import Path

from witness.evaluate.stm import StmSegment, read_stm
from witness.transcript import AudioMeta, Transcript, Turn, Utterance, Word, speakers_in_order


def spread_words(segments: list[StmSegment]) -> list[Word]:
    """Words of the segments, each line's span shared evenly among its words, each word
    carrying the line's speaker: a stand-in for ASR output when testing the merge."""
    words: list[Word] = []
    for s in segments:
        texts = s.text.split()
        step = (s.end - s.start) / max(1, len(texts))
        words += [Word(s.start + i * step, s.start + (i + 1) * step, t, 1.0, s.speaker) for i, t in enumerate(texts)]
    return words


def transcript_from_stm(stm: Path, audio: Path) -> Transcript:
    utterances = []
    for segment in read_stm(stm):
        words = tuple(spread_words([segment]))
        utterances.append(Utterance(segment.speaker, segment.start, segment.end, segment.text, words))
    with wave.open(str(audio), "rb") as w:
        duration = w.getnframes() / w.getframerate()
    return Transcript(
        audio=AudioMeta(path=str(audio), duration=duration),
        utterances=tuple(utterances),
        speakers=speakers_in_order(u.speaker for u in utterances),
        turns=tuple(Turn(u.start, u.end, u.speaker) for u in utterances),
        exclusive_turns=tuple(Turn(u.start, u.end, u.speaker) for u in utterances),
    )


def repeated(t: Transcript, copies: int) -> Transcript:
    """``t`` said ``copies`` times, one after the other (every ``t.audio.duration`` seconds):
    an hours-long transcript from a short one."""
    step = t.audio.duration

    def shifted(u: Utterance, by: float) -> Utterance:
        return replace(u, start=u.start + by, end=u.end + by,
                       words=tuple(replace(w, start=w.start + by, end=w.end + by) for w in u.words))

    return replace(
        t,
        audio=replace(t.audio, duration=copies * step),
        utterances=tuple(shifted(u, k * step) for k in range(copies) for u in t.utterances),
        turns=tuple(Turn(x.start + k * step, x.end + k * step, x.speaker) for k in range(copies) for x in t.turns),
        exclusive_turns=(),
    )
