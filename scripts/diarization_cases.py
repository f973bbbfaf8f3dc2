"""The audio with exact or human reference turns that the diarization scripts score.

- the real sample call (two women on a phone line, human RTTM);
- the dev set (``shared/data/dev-set``): 3 AMI meeting excerpts (4 speakers each, human RTTM)
  and 4 simulated calls (2–4 speakers, exact turns); tune diarization here and only here;
- ``long_case``: the dev-set files shuffled and concatenated again and again (1 s of silence
  between them) up to N minutes: 21 distinct people, each keeping one label wherever they
  reappear (the simulated calls share some voices), an exact reference for hour-long
  behaviour (speaker count, spurious small clusters).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scripts import SAMPLE_CALL, SHARED
from witness.audio import SAMPLE_RATE, load_audio
from witness.evaluate import CONVENTIONS, diarization_error
from witness.rttm import read_rttm
from witness.transcript import Turn

MODELS = SHARED / "models"
DEV_SET = SHARED / "data" / "dev-set"


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
        return len(self.samples) / SAMPLE_RATE


def _case(name: str, wav: Path, rttm: Path) -> Case:
    (turns,) = read_rttm(rttm).values()
    return Case(name, load_audio(wav).samples, tuple(turns))


def solo_regions(turns: tuple[Turn, ...], speaker: str) -> list[tuple[float, float]]:
    """(start, end) seconds where ``speaker`` talks and nobody else does, in time order."""
    regions = [(t.start, t.end) for t in turns if t.speaker == speaker]
    for other in (t for t in turns if t.speaker != speaker):
        regions = [(s, e) for a, b in regions
                   for s, e in ((a, min(b, other.start)), (max(a, other.end), b)) if e - s > 0.05]
    return sorted(regions)


def sample_call() -> Case:
    call = SAMPLE_CALL
    return _case("sample-call", call / "sample.wav", call / "sample.rttm")


def dev_set() -> list[Case]:
    """The 7 dev-set files: ami/trn01, trn07, tst01, then sim/devcall_01..04."""
    return [_case(wav.stem, wav, wav.with_suffix(".rttm"))
            for folder in ("ami", "sim") for wav in sorted((DEV_SET / folder).glob("*.wav"))]


def concatenated(parts: list[Case], name: str, gap: float = 1.0) -> Case:
    """``parts`` one after the other with ``gap`` seconds of silence between them; speaker
    labels are kept as they are (the same person keeps one label across parts)."""
    pieces, turns, offset = [], [], 0.0
    silence = np.zeros(int(gap * SAMPLE_RATE), dtype=np.float32)
    for part in parts:
        pieces += [part.samples, silence]
        turns += [Turn(t.start + offset, t.end + offset, t.speaker) for t in part.reference]
        offset += part.duration + gap
    return Case(name, np.concatenate(pieces), tuple(sorted(turns, key=lambda t: (t.start, t.end))))


def long_case(minutes: float, seed: int = 0) -> Case:
    """The dev-set files in a new random order each round, concatenated up to ``minutes``."""
    files, rng, parts, total = dev_set(), np.random.default_rng(seed), [], 0.0
    while total < minutes * 60:
        for index in rng.permutation(len(files)):
            parts.append(files[index])
            total += files[index].duration + 1.0
    return concatenated(parts, f"dev-long-{minutes:g}min")


def tiled(case: Case, minutes: float) -> Case:
    """``case`` repeated back to back up to ``minutes`` (its reference turns moved along)."""
    n = int(minutes * 60 * SAMPLE_RATE)
    copies = -(-n // len(case.samples))
    turns = tuple(Turn(t.start + k * case.duration, t.end + k * case.duration, t.speaker)
                  for k in range(copies) for t in case.reference)
    end = n / SAMPLE_RATE
    kept = tuple(Turn(t.start, min(t.end, end), t.speaker) for t in turns if t.start < end)
    return Case(f"{case.name}x{minutes:g}min", np.tile(case.samples, copies)[:n], kept)


def der_parts(reference, hypothesis) -> dict[str, tuple[float, float]]:
    """(error seconds, reference seconds) under each published convention (strict, paper,
    lenient): add them up over files for a corpus DER."""
    parts = {}
    for name, c in CONVENTIONS.items():
        r = diarization_error(list(reference), list(hypothesis), c.collar, c.skip_overlap)
        parts[name] = (r.missed + r.false_alarm + r.confusion, r.total)
    return parts


def ders(reference, hypothesis) -> dict[str, float]:
    """DER under each published convention (strict, paper, lenient)."""
    return {name: err / total if total else 0.0 for name, (err, total) in der_parts(reference, hypothesis).items()}
