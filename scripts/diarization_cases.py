"""The audio with reference turns that the diarization scripts score: the real sample call
(human RTTM) and the speakrs fixture wavs (pyannote community-1's output as reference; TTS
voices, a sanity check rather than an accuracy claim)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from witness.audio import load_audio
from witness.evaluate import CONVENTIONS, diarization_error
from witness.rttm import read_rttm
from witness.transcript import Turn

SHARED = Path(os.environ.get("WITNESS_SHARED_DIR", Path(__file__).resolve().parents[2] / "shared"))
MODELS = SHARED / "models"


@dataclass(frozen=True)
class Case:
    """name; samples (n,) float32 16 kHz; reference turns; speakers in the reference."""

    name: str
    samples: np.ndarray
    reference: tuple[Turn, ...]

    @property
    def speakers(self) -> int:
        return len({t.speaker for t in self.reference})

    @property
    def duration(self) -> float:
        return len(self.samples) / 16000


def _case(name: str, wav: Path, rttm: Path) -> Case:
    (turns,) = read_rttm(rttm).values()
    return Case(name, load_audio(wav).samples, tuple(turns))


def joined(first: Case, second: Case) -> Case:
    """``second`` played after ``first``: their speakers are different people (real voices
    then TTS voices), so the joined file has the speakers of both."""
    shift = first.duration
    moved = tuple(Turn(t.start + shift, t.end + shift, "b:" + t.speaker) for t in second.reference)
    reference = tuple(Turn(t.start, t.end, "a:" + t.speaker) for t in first.reference) + moved
    return Case(f"{first.name}+{second.name}", np.concatenate([first.samples, second.samples]), reference)


def cases() -> list[Case]:
    """The sample call, the four fixture wavs, and the sample call followed by the 3-speaker
    wav (5 speakers in one file)."""
    fx = SHARED / "data" / "speakrs-fixtures"
    found = [
        sample_call(),
        _case("test", fx / "test.wav", fx / "pipeline_expected.rttm"),
        _case("3speakers", fx / "test_3speakers.wav", fx / "3speakers_expected.rttm"),
        _case("single_speaker", fx / "test_single_speaker.wav", fx / "single_speaker_expected.rttm"),
        _case("short", fx / "test_short.wav", fx / "short_expected.rttm"),
    ]
    return found + [joined(found[0], found[2])]


def ders(reference, hypothesis) -> dict[str, float]:
    """DER under each published convention (strict, paper, lenient)."""
    return {name: diarization_error(list(reference), list(hypothesis), c.collar, c.skip_overlap).der
            for name, c in CONVENTIONS.items()}


def tiled(case: Case, minutes: float) -> Case:
    """``case`` repeated back to back up to ``minutes`` (its reference turns moved along)."""
    n = int(minutes * 60 * 16000)
    copies = -(-n // len(case.samples))
    turns = tuple(Turn(t.start + k * case.duration, t.end + k * case.duration, t.speaker)
                  for k in range(copies) for t in case.reference)
    end = n / 16000
    kept = tuple(Turn(t.start, min(t.end, end), t.speaker) for t in turns if t.start < end)
    return Case(f"{case.name}x{minutes:g}min", np.tile(case.samples, copies)[:n], kept)


def sample_call() -> Case:
    call = SHARED / "data" / "sample-call"
    return _case("sample-call", call / "sample.wav", call / "sample.rttm")
