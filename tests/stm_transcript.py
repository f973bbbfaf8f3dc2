"""A witness transcript built from an STM reference without any model (a test helper).

Each STM line becomes one utterance; its words (split on whitespace, punctuation kept as
Whisper writes it) are spread evenly over the line's span and carry the line's speaker.
"""

from __future__ import annotations

import wave
from pathlib import Path

from witness.evaluate.stm import read_stm, spread_words
from witness.transcript import AudioMeta, Transcript, Turn, Utterance, speakers_in_order


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
