"""Readers made from readers, for the tuning part of corpus v4 (``make_corpus --version v4``).

The tune part of v3 has 10 readers, and no two of one sex are as alike as the check part's closest
pairs (CAM++ voice prints, same-sex cosine: tune up to 0.43 (men) and 0.38 (women), check up to
0.49 and 0.58), so rules tuned there never met a pair that hard. With no more readers to be had
(``corpus_librispeech``), each tune reader becomes two: its recordings played slower and faster
(``SPEEDS``, 0.9 and 1.1: tempo, pitch and formants move together, as Kaldi's speed perturbation
makes new speakers for x-vector training), each with every other recording of each chapter, so the
two never read the same recording. Measured on the 20 dev-clean readers (CAM++ centroids of the
first 6 s of 12 recordings each, against 12 others; ``scripts/reader_likeness.py --speeds``): one reader
with itself 0.98 (0.96-0.99); at 0.9 against at 1.1 0.40 (0.25-0.52), like two close readers of
one sex; at 1.0 against 1.1 0.71, against 0.95 0.87, closer than any two people here, hence no
unchanged copy beside them. The check part keeps its real readers: its verdict does not move.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from scripts.corpus_sources import speaker_prints
from witness.audio import SAMPLE_RATE, load_audio

SPEEDS = (0.9, 1.1)


def derived_name(speaker: str, speed: float) -> str:
    return f"{speaker}-x{speed:.2f}"


def played_at(samples: np.ndarray, speed: float) -> np.ndarray:
    """``samples`` played ``speed`` times as fast (and as high), at the same sample rate."""
    if speed == 1.0:
        return samples
    ratio = Fraction(1 / speed).limit_denominator(100)
    return resample_poly(samples, ratio.numerator, ratio.denominator).astype(samples.dtype)


def _scaled(samples: int, speed: float) -> int:
    return int(round(samples / speed))


def derive_readers(pieces: list[dict], info: dict, speakers: list[str], speeds=SPEEDS) -> tuple[list[dict], dict]:
    """Each of ``speakers`` as ``len(speeds)`` readers: its pieces, each recording given to the
    speeds in turn within its chapter (sorted), times in the changed audio's samples; and their
    descriptions (F0 and seconds scaled, ``derived_from`` and ``speed`` added)."""
    recordings: dict[str, list[str]] = {}
    for p in pieces:
        if p["speaker"] in speakers:
            recordings.setdefault(str(Path(p["source"]).parent), []).append(p["source"])
    turn = {}
    for chapter in sorted(recordings):
        for k, source in enumerate(sorted(set(recordings[chapter]))):
            turn[source] = speeds[k % len(speeds)]
    out = []
    for p in pieces:
        if p["speaker"] not in speakers:
            continue
        speed = turn[p["source"]]
        out.append({**p, "speaker": derived_name(p["speaker"], speed), "speed": speed,
                    "start": _scaled(p["start"], speed), "end": _scaled(p["end"], speed),
                    "regions": [(_scaled(a, speed), _scaled(b, speed)) for a, b in p["regions"]],
                    "licence": f"{p.get('licence', '')}; played at x{speed:.2f} (scripts/corpus_derived.py)"})
    described = {}
    for speaker in speakers:
        for speed in speeds:
            mine = [p for p in out if p["speaker"] == derived_name(speaker, speed)]
            described[derived_name(speaker, speed)] = {
                **info[speaker], "f0": round(info[speaker]["f0"] * speed, 1), "derived_from": speaker, "speed": speed,
                "seconds": round(sum(p["end"] - p["start"] for p in mine) / SAMPLE_RATE, 2),
                "recordings": len({p["source"] for p in mine})}
    return out, described


def derived_prints(root: Path, pieces: list[dict], cache: Path) -> dict[str, np.ndarray]:
    """Each derived reader's CAM++ voice print, made as the readers' are
    (``corpus_sources.speaker_prints``) from its recordings played at its speed; cached in
    ``cache`` by the readers, recordings and speeds."""
    recordings = sorted({(p["speaker"], p["source"], p["speed"]) for p in pieces})
    key = hashlib.sha256(json.dumps(recordings).encode()).hexdigest()[:12]
    described, rows = speaker_prints(recordings, cache, f"prints-derived-{key}", lambda r: r[0],
                                     lambda speaker, found: {"recordings": len(found["files"])},
                                     samples_of=lambda r: played_at(load_audio(root / r[1]).samples, r[2]))
    return dict(zip(sorted(described), rows))
