"""The files ``measure_counting.py`` and the counting studies score: the sample call and the
dev set, the dev set concatenated, the corpus parts, one voice cut alone from the corpus's
2-speaker calls, and those calls with one party muted (``set_items`` by name: ``SET_NAMES``).
Each is an ``Item``: its audio, reference turns and conditions."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scripts import SAMPLE_CALL, SHARED
from scripts.diarization_cases import long_case
from witness.audio import SAMPLE_RATE, load_audio, write_wav
from witness.rttm import format_rttm, read_rttm
from witness.transcript import Turn

DEV_SET = SHARED / "data" / "dev-set"
CORPUS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "witness" / "corpus" / "v1"
COHORT = Path(__file__).resolve().parents[1] / "witness" / "diarize" / "data"
TUNING_SETS = ("tune", "onevoice-tune", "muted-tune")  # their speakers are in the shipped cohort and PLDA
SET_NAMES = ("dev", "devlong", "tune", "check", "onevoice", "onevoice-tune", "muted", "muted-tune")


@dataclass(frozen=True)
class Item:
    """One scored file: its set, name, audio, reference turns and conditions."""

    set: str
    name: str
    wav: Path
    reference: tuple[Turn, ...]
    band: str
    snr: float | None
    duration: float
    speakers_in_call: tuple[str, ...]

    @property
    def speakers(self) -> int:
        return len({t.speaker for t in self.reference})


def _item(set_name: str, wav: Path, band: str, snr, duration: float, speakers=()) -> Item:
    (turns,) = read_rttm(wav.with_suffix(".rttm")).values()
    return Item(set_name, wav.stem, wav, tuple(turns), band, snr, duration, tuple(speakers))


def dev_items() -> list[Item]:
    items = [_item("sample", SAMPLE_CALL / "sample.wav", "phone", None, 30.0)]
    items += [_item("dev", wav, "wide", None, 30.0) for wav in sorted((DEV_SET / "ami").glob("*.wav"))]
    calls = json.loads((DEV_SET / "sim" / "index.json").read_text())["conversations"]
    for call in calls:
        items.append(_item("dev", DEV_SET / "sim" / f"{call['uri']}.wav",
                           "telephone" if call["telephone_band"] else "wide", call["snr_db"], call["duration"],
                           call["speakers"]))
    return items


def long_dev_item(cache: Path, minutes: float = 20.0) -> Item:
    """The dev set shuffled and concatenated to ``minutes`` (``diarization_cases.long_case``:
    21 people), written once into ``cache``."""
    wav = cache / "devlong" / f"dev-long-{minutes:g}min.wav"
    if not wav.exists():
        case = long_case(minutes)
        wav.parent.mkdir(parents=True, exist_ok=True)
        write_wav(wav, case.samples)
        wav.with_suffix(".rttm").write_text(format_rttm(case.reference, wav.stem))
    return _item("devlong", wav, "mixed", None, minutes * 60)


def corpus_items(corpus: Path, part: str) -> list[Item]:
    """The calls of one corpus part (each call's .json gives its conditions)."""
    calls = [json.loads(path.read_text()) for path in sorted((corpus / part).glob("*.json")) if path.stem != "index"]
    return [_item(part, corpus / part / f"{c['uri']}.wav", c["band"], c["snr_db"], c["duration"], c["speakers"])
            for c in calls if (corpus / part / f"{c['uri']}.rttm").exists()]


def short_two_speaker_calls(corpus: Path, part: str):
    """(call, its speaker who talks most) for each 2-speaker call of ``part`` under 5 minutes."""
    for call in corpus_items(corpus, part):
        if call.speakers == 2 and call.duration < 300:
            talk = defaultdict(float)
            for t in call.reference:
                talk[t.speaker] += t.duration
            yield call, max(talk, key=talk.__getitem__)


def one_voice_items(corpus: Path, part: str, cache: Path) -> list[Item]:
    """One voice alone, is it heard as one? From each 2-speaker call of ``part`` under 5
    minutes, the speech of its speaker who talks most, where the other is silent, joined
    (written once into ``cache``/onevoice-``part``); its reference is that one speaker. The
    set is "onevoice" for the check part, "onevoice-tune" for the tune part."""
    items, set_name = [], "onevoice" if part == "check" else f"onevoice-{part}"
    for call, who in short_two_speaker_calls(corpus, part):
        wav = cache / f"onevoice-{part}" / f"{call.name}.wav"
        if not wav.exists():
            samples = load_audio(call.wav).samples
            mask = np.zeros(len(samples), dtype=bool)
            for keep in (True, False):
                for t in call.reference:
                    if (t.speaker == who) == keep:
                        mask[int(t.start * SAMPLE_RATE):int(t.end * SAMPLE_RATE)] = keep
            wav.parent.mkdir(parents=True, exist_ok=True)
            write_wav(wav, samples[mask])
            wav.with_suffix(".rttm").write_text(format_rttm([Turn(0.0, mask.sum() / SAMPLE_RATE, who)], wav.stem))
        items.append(_item(set_name, wav, call.band, call.snr, load_audio(wav).duration, (who,)))
    return items


def muted_items(corpus: Path, part: str, cache: Path, tail: float = 0.3) -> list[Item]:
    """One voice alone, in a call's own turn-taking: each 2-speaker call of ``part`` under 5
    minutes with its less talkative party muted, their turns (and ``tail`` s of reverberation
    after each) filled with the call's own noise floor (its stretches where nobody talks,
    repeated); written once into ``cache``/muted-``part``. Its reference is the other party's
    turns less the muted stretches. The set is "muted" for the check part, "muted-tune" for
    the tune part. Unlike ``one_voice_items`` (the voice's turns joined), the length, pauses and
    conditions are the call's: what a 2-speaker call clustering heard as one is told from."""
    items, set_name = [], "muted" if part == "check" else f"muted-{part}"
    for call, keep in short_two_speaker_calls(corpus, part):
        muted = sorted((t.start, t.end + tail) for t in call.reference if t.speaker != keep)
        wav = cache / f"muted-{part}" / f"{call.name}.wav"
        if not wav.exists():
            samples = load_audio(call.wav).samples.copy()
            anyone, other = np.zeros(len(samples), dtype=bool), np.zeros(len(samples), dtype=bool)
            for t in call.reference:
                span = slice(int(t.start * SAMPLE_RATE), int((t.end + tail) * SAMPLE_RATE))
                anyone[span] = True
                other[span] |= t.speaker != keep
            floor = samples[~anyone] if (~anyone).sum() >= SAMPLE_RATE // 10 else np.zeros(SAMPLE_RATE, np.float32)
            samples[other] = np.resize(floor, int(other.sum()))
            wav.parent.mkdir(parents=True, exist_ok=True)
            write_wav(wav, samples)
        reference = []
        for t in call.reference:
            if t.speaker == keep:
                pieces = [(t.start, t.end)]
                for a, b in muted:
                    pieces = [q for x, y in pieces for q in ((x, min(y, a)), (max(x, b), y)) if q[1] - q[0] > 0.05]
                reference += [Turn(x, y, keep) for x, y in pieces]
        items.append(Item(set_name, call.name, wav, tuple(reference), call.band, call.snr, call.duration, (keep,)))
    return items


def set_items(name: str, corpus: Path, cache: Path) -> list[Item]:
    """The items of the set called ``name`` (``SET_NAMES``): ``dev``, ``devlong`` (the dev set
    joined, made in ``cache``), a corpus part (``tune``, ``check``) of ``corpus``, one voice alone
    (``onevoice`` from the check part, ``onevoice-tune``) or one party muted (``muted``,
    ``muted-tune``), the last two made in ``cache``."""
    part = "tune" if name.endswith("-tune") else "check"
    if name == "dev":
        return dev_items()
    if name == "devlong":
        return [long_dev_item(cache)]
    if name.startswith("onevoice"):
        return one_voice_items(corpus, part, cache)
    if name.startswith("muted"):
        return muted_items(corpus, part, cache)
    return corpus_items(corpus, name)
