#!/usr/bin/env python3
"""Generate the speaker-attribution tuning corpus: simulated calls with exact turns and
transcripts, shaped like users' calls, split by speaker into a tuning part and a check part.

    git clone --depth 1 https://github.com/resemble-ai/Resemblyzer /path/to/Resemblyzer
    pip install -e '.[corpus]'                     # pyroomacoustics (room reverberation)
    PYTHONPATH=. python scripts/make_corpus.py --source /path/to/Resemblyzer

    # v2: human transcripts, several recordings per speaker (``corpus_librispeech``)
    git clone https://github.com/felixbastian/Speaker_partition_module /path/to/Speaker_partition_module
    PYTHONPATH=. python scripts/make_corpus.py --version v2 --source /path/to/Speaker_partition_module

Deterministic for a given source and ``--seed``. The speech comes from the source's real
recordings (v1, ``corpus_sources``: 261 LibriSpeech speakers, 251 of them with one utterance,
transcribed by Whisper tiny.en; v2, ``corpus_librispeech``: 20 LibriSpeech dev-clean speakers
with 36-101 utterances each and their human transcripts); nothing is committed. ``RECIPES``
holds what differs between the versions (parts' minutes, call lengths, reuse); the rest of
this docstring describes v1, and v2 where it says so.

Layout (``--out``, default ``${XDG_CACHE_HOME:-~/.cache}/witness/corpus/v1``)::

    index.json            {"version", "seed", "source", "built_with" (library versions and a digest of
                           the cut pieces: ``built_with``), "parts": {"tune": [speakers], "check": [...]},
                           "calls": [one entry per call, below]}
    tune/index.json       the same, this part's calls only (check/index.json likewise)
    tune/NAME.wav         16 kHz mono 16-bit
    tune/NAME.rttm        exact reference turns (speech regions of the placed recordings;
                          one speaker's pauses under 0.25 s bridged)
    tune/NAME.stm         utterance text: "NAME 1 SPEAKER START END TEXT", as the dev set's
                          (digits as Whisper wrote them; the scorers split each digit into a word)
    tune/NAME.json        the call's conditions, its speakers (F0, sex from F0, level, room)
                          and each utterance: speaker, times, text, kind (turn, backchannel,
                          rapid), source file and sample range, licence
    check/...             the same for the check part

An index entry: uri, part, duration, num_speakers, speakers, sexes, band ("wide",
"telephone": 300-3400 Hz at 8 kHz mu-law, "amr-nb"/"opus": that codec at 8 kHz),
bitrate, snr_db (None: clean), noise, reverb_rt60 (per speaker, None: dry), level_db (per
speaker), overlap_seconds, backchannels, rapid_turns, speech_seconds, repeated_share (share of
speech from recordings used earlier in the same call).

Backchannels and rapid exchanges use real single words cut from the same speaker's recordings
(read speech has few "yeah"s: "well", "why", "good" are taken first where a speaker has them,
else any short word with quiet on both sides). An ordinary call never repeats a recording, so it is as
long as its speakers' material allows (251 of the 261 speakers have one 14 s utterance: most
2-speaker calls last 0.5-1 min, calls with the 10-utterance speakers or more people several
minutes); across calls of a part a recording is used 3 times at most. The long calls must
repeat each speaker's recordings (tune: up to 5 times; check: up to 8, its 30 minutes about 4 times over) once they are used up: ``repeated_share``
says how much, and repeated audio makes clustering easier than real.

v2: its 20 speakers have 7.5 min each, so no call repeats a recording (``repeated_share`` 0);
a recording serves at most 2 calls of its part; ordinary calls last 1-15 min (median 2); the
long calls hold all 10 speakers of a part (tune: 60 min, check: 30 min); sexes are
LibriSpeech's own (``sex`` in speaker_info); each utterance's text is the human transcript.

v3 (``--version v3``, the same source as v2): v2's recipe, but each speaker of a call reads
from one LibriVox chapter (one recording session, as each party of a user's call is), the
chapter with the most unused speech; v2 put up to four chapters of one reader in a call.

v4 (``--version v4``): v3, but each tune reader is two readers, its recordings played at x0.9 and
x1.1 (``corpus_derived``): 20 tune readers, some pairs as alike as the check part's closest (v3's
tune part has none). The check part is v3's, call for call; build only the tune part
(``--parts tune``) and measure on v3's check part.

``--draw N`` (N > 0) keeps ``--seed``'s speaker split (tune readers stay tune readers) but draws
the calls (speakers per call, conditions, pieces) from another random stream: more calls of the
same readers (v3's readers have 7.5 min each), e.g. ``--version v3 --draw 1 --out .../corpus/v3-d1``;
``--draw 0`` is the corpus as before. Pieces and voice prints are cached in ``--out``'s
``../sources``.

Speakers are split by speaker (sex-balanced, seeded): tune only on ``tune``. Each call's
speakers share a sex (by F0) and are picked by CAM++ similarity to the first; most calls have
2 speakers, some 3-6, and each part has one long call (check: 30 min, 10 speakers).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from scripts import corpus_derived, corpus_librispeech, corpus_sources
from scripts.corpus_acoustics import draw_conditions, render
from scripts.corpus_sources import LICENCE
from witness.audio import SAMPLE_RATE, load_audio, write_wav

VERSION = "v1"
TURN_MERGE_GAP = 0.25
SPEAKER_COUNTS = ([2, 3, 4, 5, 6], [0.6, 0.15, 0.13, 0.06, 0.06])
# part: (minutes of ordinary calls, long call minutes, long call speakers, share of speakers,
# how often the long call may repeat a recording: its speakers have 1-2 minutes each)
PARTS = {"tune": (70.0, 15.0, 8, 0.55, 5), "check": (40.0, 30.0, 10, 0.45, 8)}


@dataclass(frozen=True)
class Recipe:
    """What a corpus version takes from where, and how much of it."""

    sources: object  # the module giving transcribe_pieces(root, cache) and voice_prints(root, cache)
    parts: dict  # as PARTS
    max_uses: int  # how often one recording may be used across the calls of a part
    length: tuple[float, float, float, float]  # ordinary call seconds: lognormal median, sigma, min, max
    source: str
    transcript: str
    one_session: bool = False  # each speaker of a call speaks from one recording session (``Material``)
    derived: tuple[float, ...] = ()  # the tune part's readers become one reader per speed (``corpus_derived``)


RECIPES = {
    "v1": Recipe(corpus_sources, PARTS, 3, (150, 0.5, 60, 420), "resemble-ai/Resemblyzer audio_data (LibriSpeech)",
                 "Whisper tiny.en (faster-whisper int8) on the clean source recording"),
    # 20 speakers with 36-101 recordings each (7.5 min): the long calls hold all 10 of a part and
    # repeat nothing; a recording serves at most 2 calls of its part.
    "v2": Recipe(corpus_librispeech, {"tune": (60.0, 60.0, 10, 0.5, 1), "check": (60.0, 30.0, 10, 0.5, 1)}, 2,
                 (120, 0.6, 60, 900), corpus_librispeech.SOURCE, corpus_librispeech.TRANSCRIPT),
    # v2's speakers and sizes, but each speaker of a call reads from one LibriVox chapter, as each party of a
    # user's call is one recording session (v2 mixed up to four chapters of one reader in a call).
    "v3": Recipe(corpus_librispeech, {"tune": (60.0, 60.0, 10, 0.5, 1), "check": (60.0, 30.0, 10, 0.5, 1)}, 2,
                 (120, 0.6, 60, 900), corpus_librispeech.SOURCE, corpus_librispeech.TRANSCRIPT, one_session=True),
}
# v3, but each tune reader is two, played at x0.9 and x1.1 (``corpus_derived``): tune pairs as alike as the check
# part's closest; the check part is v3's.
RECIPES["v4"] = replace(RECIPES["v3"], derived=corpus_derived.SPEEDS)


def default_out(version: str = VERSION) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "witness" / "corpus" / version


def _sex(info: dict) -> str:
    """The speaker's sex: the source's own (v2), else the one estimated from F0 (v1)."""
    return info.get("sex") or info["sex_from_f0"]


def split_speakers(speakers: dict, seed: int, shares: dict = PARTS) -> dict[str, list[str]]:
    """Each sex and subset shuffled and cut by the parts' shares."""
    rng = np.random.default_rng([seed, 1])
    parts: dict[str, list[str]] = {p: [] for p in shares}
    groups: dict[tuple, list[str]] = {}
    for spk, info in sorted(speakers.items()):
        groups.setdefault((_sex(info), info["subset"]), []).append(spk)
    for members in groups.values():
        members = list(rng.permutation(members))
        cut = int(round(len(members) * shares["tune"][3]))
        parts["tune"] += members[:cut]
        parts["check"] += members[cut:]
    return {p: sorted(v) for p, v in parts.items()}


class Material:
    """One part's pieces by speaker, with how often each was used (across calls and within).
    ``one_session``: a call takes a speaker's pieces from one recording session only (the
    source file's folder: a LibriSpeech chapter), the one with the most unused speech."""

    def __init__(self, pieces: list[dict], speakers: list[str], max_uses: int, one_session: bool = False):
        keep = set(speakers)
        self.pieces = [p for p in pieces if p["speaker"] in keep]
        self.uses = [0] * len(self.pieces)
        self.max_uses = max_uses
        self.one_session = one_session
        self.by_speaker: dict[str, list[int]] = {}
        for i, p in enumerate(self.pieces):
            self.by_speaker.setdefault(p["speaker"], []).append(i)

    def seconds(self, speaker: str) -> float:
        return sum((self.pieces[i]["end"] - self.pieces[i]["start"]) / SAMPLE_RATE
                   for i in self.by_speaker.get(speaker, []) if self.uses[i] < self.max_uses
                   and not self.pieces[i]["short_word"])

    def _session(self, index: int) -> str:
        return str(Path(self.pieces[index]["source"]).parent)

    def for_call(self, speaker: str) -> list[int]:
        """The speaker's pieces the next call may take (all, or one session's: see the class)."""
        mine = self.by_speaker.get(speaker, [])
        if not self.one_session:
            return mine
        unused: dict[str, float] = {}
        for i in mine:
            if self.uses[i] < self.max_uses and not self.pieces[i]["short_word"]:
                unused[self._session(i)] = unused.get(self._session(i), 0.0) + self.pieces[i]["end"] - self.pieces[i]["start"]
        session = max(sorted(unused), key=unused.__getitem__) if unused else None
        return [i for i in mine if self._session(i) == session]

    def short_words(self, speaker: str) -> list[int]:
        return [i for i in self.for_call(speaker) if self.pieces[i]["short_word"]]

    def queue(self, speaker: str, repeats: int, rng) -> list[int]:
        """The speaker's long pieces for one call in a random order of utterances (each
        utterance's pieces in order), the whole list ``repeats`` times over."""
        mine = [i for i in self.for_call(speaker) if not self.pieces[i]["short_word"]
                and self.uses[i] < self.max_uses]
        sources: dict[str, list[int]] = {}
        for i in mine:
            sources.setdefault(self.pieces[i]["source"], []).append(i)
        order = []
        for _ in range(repeats):
            for src in rng.permutation(sorted(sources)):
                order += sources[src]
        return order


def choose_speakers(n: int, material: Material, info: dict, prints: dict, rng, richest: bool = False) -> list[str]:
    """A first speaker with material left, then the n-1 most similar of the same sex (CAM++
    cosine, picked among the closest few so pairs vary). ``richest``: only among the 2n
    speakers with the most material (the long calls)."""
    left = [s for s in sorted(material.by_speaker) if material.seconds(s) > 3.0]
    if richest:
        left = sorted(left, key=lambda s: -material.seconds(s))[: 2 * n]
    first = str(rng.choice(left))
    same = [s for s in left if s != first and _sex(info[s]) == _sex(info[first])]
    if len(same) < n - 1:
        same = [s for s in left if s != first]
    chosen = [first]
    while len(chosen) < n and same:
        centre = np.mean([prints[s] for s in chosen], axis=0)
        ranked = sorted(same, key=lambda s: -float(prints[s] @ centre))
        pick = ranked[int(rng.integers(0, min(3, len(ranked))))]
        chosen.append(pick)
        same.remove(pick)
    return chosen


def _place(events: list, material: Material, index: int, speaker: str, start: float, kind: str) -> float:
    """Put piece ``index`` at ``start`` (its first speech at ``start``); its speech end."""
    piece = material.pieces[index]
    lead = piece["regions"][0][0] / SAMPLE_RATE
    events.append({"piece": index, "speaker": speaker, "at": start - lead, "kind": kind})
    return start - lead + piece["regions"][-1][1] / SAMPLE_RATE


def _rapid(events, material, pair, shorts, t, rng) -> float:
    """4-8 alternating short words (0.2-0.5 s turns) between the two of ``pair``."""
    for k in range(int(rng.integers(4, 9))):
        s = pair[k % 2]
        t = _place(events, material, int(rng.choice(shorts[s])), s, t + rng.uniform(0.05, 0.3), "rapid")
    return t


def _backchannel(events, material, speakers, shorts, speaker, start, end, rng) -> None:
    """Over a turn of 3 s or more, maybe a short word of another party inside it."""
    others = [o for o in speakers if o != speaker and shorts[o]]
    if end - start >= 3.0 and others and rng.random() < 0.45:
        o = others[int(rng.integers(len(others)))]
        _place(events, material, int(rng.choice(shorts[o])), o, rng.uniform(start + 1.0, end - 1.0), "backchannel")


def build_timeline(speakers: list[str], material: Material, target: float, repeats: int, rng) -> list[dict]:
    """Turns until ``target`` seconds or the speakers' material runs out: ordinary turns of
    1-2 pieces, monologues of 3-6, rapid exchanges of short words; gaps, overlaps of
    0.2-1.0 s, backchannels over long turns."""
    queues = {s: material.queue(s, repeats, rng) for s in speakers}
    shorts = {s: material.short_words(s) for s in speakers}
    events: list[dict] = []
    t, prev, prev_start = 0.3 + rng.uniform(0, 1.0), None, 0.0
    while t < target and any(queues.values()):
        live = [s for s in speakers if queues[s] and s != prev] or [s for s in speakers if queues[s]]
        s = live[int(rng.integers(len(live)))]
        mode = rng.choice(["turn", "monologue", "rapid"], p=[0.72, 0.18, 0.10])
        if mode == "rapid" and prev and prev != s and shorts[s] and shorts[prev]:
            t = _rapid(events, material, (s, prev), shorts, t, rng)
            prev, prev_start = s, t
            continue
        if events and rng.random() < 0.2:
            start = max(prev_start + 0.5, t - rng.uniform(0.2, 1.0))
        else:
            start = t + (rng.uniform(1.0, 3.0) if rng.random() < 0.1 else rng.uniform(0.1, 0.9))
        end = start
        for _ in range(int(rng.integers(3, 7)) if mode == "monologue" else int(rng.integers(1, 3))):
            if queues[s]:
                end = _place(events, material, queues[s].pop(0), s, end + (rng.uniform(0.15, 0.5) if end > start else 0),
                             "turn")
        _backchannel(events, material, speakers, shorts, s, start, end, rng)
        t, prev, prev_start = max(t, end), s, start
    return events


def reference(events: list[dict], material: Material) -> list[tuple[float, float, str]]:
    """Exact turns: each placed piece's speech regions, one speaker's gaps < 0.25 s bridged."""
    spans: dict[str, list[list[float]]] = {}
    for e in events:
        p = material.pieces[e["piece"]]
        for a, b in p["regions"]:
            spans.setdefault(e["speaker"], []).append([e["at"] + a / SAMPLE_RATE, e["at"] + b / SAMPLE_RATE])
    turns = []
    for speaker, items in spans.items():
        merged: list[list[float]] = []
        for a, b in sorted(items):
            if merged and a - merged[-1][1] < TURN_MERGE_GAP:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        turns += [(a, b, speaker) for a, b in merged]
    return sorted(turns)


def overlap_seconds(turns: list[tuple[float, float, str]]) -> float:
    edges = sorted([(a, 1) for a, _, _ in turns] + [(b, -1) for _, b, _ in turns])
    total, active, last = 0.0, 0, 0.0
    for t, step in edges:
        if active >= 2:
            total += t - last
        active, last = active + step, t
    return total


@lru_cache(maxsize=64)
def _source_audio(root: str, rel: str, speed: float = 1.0) -> np.ndarray:
    return corpus_derived.played_at(load_audio(Path(root) / rel).samples, speed)


def _tracks(events, material, speakers, root: Path) -> dict[str, np.ndarray]:
    """Each party's dry track, every piece at the same speech level."""
    from scripts.corpus_acoustics import TARGET_DBFS, active_rms

    ends = [e["at"] + (material.pieces[e["piece"]]["end"] - material.pieces[e["piece"]]["start"]) / SAMPLE_RATE
            for e in events]
    n = int((max(ends) + 0.6) * SAMPLE_RATE)
    tracks = {s: np.zeros(n) for s in speakers}
    for e in events:
        p = material.pieces[e["piece"]]
        clip = _source_audio(str(root), p["source"], p.get("speed", 1.0))[p["start"]:p["end"]].astype(np.float64)
        i = int(round(e["at"] * SAMPLE_RATE))
        tracks[e["speaker"]][i:i + len(clip)] += clip * 10 ** (TARGET_DBFS / 20) / active_rms(clip)
    return tracks


def _utterances(events, material) -> tuple[list[dict], float]:
    """Each placed piece as an utterance; and the seconds of speech repeated within the call."""
    out, seen, repeated = [], set(), 0.0
    for e in sorted(events, key=lambda e: e["at"]):
        p = material.pieces[e["piece"]]
        start, end = e["at"] + p["regions"][0][0] / SAMPLE_RATE, e["at"] + p["regions"][-1][1] / SAMPLE_RATE
        if e["piece"] in seen and e["kind"] == "turn":
            repeated += end - start
        seen.add(e["piece"])
        out.append({"speaker": e["speaker"], "start": round(start, 3), "end": round(end, 3), "text": p["text"],
                    "kind": e["kind"], "source": p["source"], "source_samples": [p["start"], p["end"]],
                    **({"speed": p["speed"]} if "speed" in p else {}), "licence": p.get("licence", LICENCE)})
    return out, repeated


def write_call(folder: Path, uri: str, mix, turns, utterances, meta: dict) -> None:
    write_wav(folder / f"{uri}.wav", mix)
    (folder / f"{uri}.rttm").write_text("".join(
        f"SPEAKER {uri} 1 {a:.3f} {b - a:.3f} <NA> <NA> {s} <NA> <NA>\n" for a, b, s in turns))
    (folder / f"{uri}.stm").write_text("".join(
        f"{uri} 1 {u['speaker']} {u['start']:.3f} {u['end']:.3f} {u['text']}\n" for u in utterances))
    (folder / f"{uri}.json").write_text(json.dumps({**meta, "utterances": utterances}, indent=1))


def make_call(folder: Path, uri: str, speakers: list[str], material: Material, info: dict, target: float,
              repeats: int, rng, root: Path, transcript: str) -> dict:
    events = build_timeline(speakers, material, target, repeats, rng)
    speakers = [s for s in speakers if any(e["speaker"] == s for e in events)]  # a long call may not reach all
    for e in events:
        material.uses[e["piece"]] += 1
    cond = draw_conditions(speakers, rng)
    mix = render(_tracks(events, material, speakers, root), cond, rng)
    turns = reference(events, material)
    utterances, repeated = _utterances(events, material)
    speech = sum(b - a for a, b, _ in turns)
    entry = {"uri": uri, "duration": round(len(mix) / SAMPLE_RATE, 3), "num_speakers": len(speakers),
             "speakers": speakers, "sexes": [_sex(info[s]) for s in speakers],
             "band": cond.band, "bitrate": cond.bitrate, "snr_db": cond.snr_db, "noise": cond.noise,
             "reverb_rt60": cond.reverb_rt60, "level_db": cond.level_db,
             "overlap_seconds": round(overlap_seconds(turns), 3),
             "backchannels": sum(e["kind"] == "backchannel" for e in events),
             "rapid_turns": sum(e["kind"] == "rapid" for e in events),
             "speech_seconds": round(speech, 3), "repeated_share": round(repeated / max(speech, 1e-9), 3)}
    meta = {**entry, "sample_rate": SAMPLE_RATE, "rooms": cond.room,
            "speaker_info": {s: info[s] for s in speakers},
            "transcript": transcript,
            "note": "times are exact sample positions of the placed recordings; turns are their speech regions"}
    write_call(folder, uri, mix, turns, utterances, meta)
    return entry


def call_stream(seed: int, part_index: int, draw: int = 0) -> np.random.Generator:
    """The random stream a part's calls are drawn from: draw 0 is the corpus's own, each other
    draw another (the speaker split has a stream of its own, ``split_speakers``)."""
    return np.random.default_rng([seed, 2, part_index] + ([draw] if draw else []))


def make_part(part: str, out: Path, material: Material, info: dict, prints: dict, seed: int, root: Path,
              recipe: Recipe, scale: float = 1.0, draw: int = 0) -> list[dict]:
    minutes, long_minutes, long_speakers, _, long_repeats = recipe.parts[part]
    minutes, long_minutes = minutes * scale, long_minutes * scale
    folder = out / part
    folder.mkdir(parents=True, exist_ok=True)
    rng = call_stream(seed, list(recipe.parts).index(part), draw)
    speakers = choose_speakers(long_speakers, material, info, prints, rng, richest=True)
    entries = [make_call(folder, f"{part}_long", speakers, material, info, long_minutes * 60, long_repeats, rng, root,
                         recipe.transcript)]
    print(f"  {part}_long: {entries[0]['duration'] / 60:.1f} min, {long_speakers} speakers", flush=True)
    total = 0.0
    while total < minutes * 60:
        n = int(rng.choice(SPEAKER_COUNTS[0], p=SPEAKER_COUNTS[1]))
        if sum(material.seconds(s) > 3.0 for s in material.by_speaker) < n:
            break
        median, sigma, shortest, longest = recipe.length
        target = float(np.clip(rng.lognormal(np.log(median), sigma), shortest, longest))
        speakers = choose_speakers(n, material, info, prints, rng)
        uri = f"{part}_{len(entries):03d}"
        entries.append(make_call(folder, uri, speakers, material, info, target, 1, rng, root, recipe.transcript))
        total += entries[-1]["duration"]
        print(f"  {uri}: {entries[-1]['duration']:.0f} s, {n} speakers, {entries[-1]['band']}", flush=True)
    for e in entries:
        e["part"] = part
    return entries


def built_with(pieces: list[dict]) -> dict:
    """What the corpus depends on beyond its source and seed: the libraries that cut and render it, and
    a digest of the pieces cut from the source. Given the pieces and voice prints, a build is exact: v3
    rebuilt from the cached ones gave the same 48 calls, byte for byte. The pieces' cuts follow
    Whisper's word times, and those moved with how CTranslate2 ran (det18: 60 of v3's files, tiny.en
    int8 on an AVX2 AMD EPYC, against its default run; files with other words / other pieces): its
    kernels at GENERIC 49/1, at AVX 52/3; its oneDNN GEMMs at AVX 52/3, at SSE4.1 51/0; MKL's GEMMs (its
    default on Intel CPUs) 59/7; float32 60/5; the streams of 12 files cut 6 files further on (as an
    interrupted build resumed cut them; 72 files) 72/10; 2 threads instead of 1 0/0 (AVX-512 could not
    be tried). One file's other pieces reshuffle every call drawn after it. Where greedy decoding
    failed, faster-whisper sampled at a temperature from an unseeded generator: all 1313 files
    transcribed again here gave other words in 1 (the same pieces). MP3 decoding (PyAV's FFmpeg) gave
    the same samples at SSE2, SSE4 and AVX2, and numpy's X86_V2 and X86_V3 paths the same pieces. So the
    v3 rebuilt in session 17 (check part: 17 calls of 2-4 speakers where the earlier build held 28) most
    likely differs by its words: another CPU path or other streams. ``corpus_sources.WHISPER`` now pins
    them and the seed. The CAM++ prints (onnxruntime) still move in their last bits between machines
    (3e-7 from 1 to 2 threads; the closest two speakers' cosines to a third are 8e-5 apart), the
    rendered audio likewise (not the calls). Compare this field before comparing numbers across builds."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    names = ("faster-whisper", "ctranslate2", "av", "onnxruntime", "pyroomacoustics", "numpy", "scipy")
    digest = hashlib.sha256(json.dumps(pieces, sort_keys=True).encode()).hexdigest()[:16]
    return {"pieces": len(pieces), "pieces_sha256": digest, **{name: installed(name) for name in names}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True,
                        help="v1: a checkout of resemble-ai/Resemblyzer; v2: a folder with LibriSpeech/ below it")
    parser.add_argument("--version", choices=sorted(RECIPES), default=VERSION)
    parser.add_argument("--out", type=Path, help="default: ~/.cache/witness/corpus/VERSION")
    parser.add_argument("--seed", type=int, default=2222)
    parser.add_argument("--parts", default="tune,check", help="which parts to (re)write")
    parser.add_argument("--scale", type=float, default=1.0, help="the parts' minutes times this (a quick trial)")
    parser.add_argument("--draw", type=int, default=0,
                        help="N > 0: other calls of the same speaker split (write them to another --out)")
    args = parser.parse_args()
    recipe, out = RECIPES[args.version], args.out or default_out(args.version)
    cache = out.parent / "sources"
    pieces = recipe.sources.transcribe_pieces(args.source, cache)
    info, rows = recipe.sources.voice_prints(args.source, cache)
    prints = dict(zip(sorted(info), rows))
    split = split_speakers(info, args.seed, recipe.parts)
    made = built_with(pieces)
    if recipe.derived:
        derived, described = corpus_derived.derive_readers(pieces, info, split["tune"], recipe.derived)
        pieces = [p for p in pieces if p["speaker"] not in split["tune"]] + derived
        info = {**info, **described}
        prints = {**prints, **corpus_derived.derived_prints(args.source, derived, cache)}
        split = {**split, "tune": sorted(described)}
    entries = []
    for part in args.parts.split(","):
        material = Material(pieces, split[part], max_uses=recipe.max_uses, one_session=recipe.one_session)
        entries += make_part(part, out, material, info, prints, args.seed, args.source, recipe, args.scale, args.draw)
    drawn = {"draw": args.draw} if args.draw else {}  # draw 0: the index as before
    for part in args.parts.split(","):
        mine = [e for e in entries if e["part"] == part]
        (out / part / "index.json").write_text(json.dumps(
            {"version": args.version, "seed": args.seed, **drawn, "part": part, "speakers": split[part],
             "calls": mine}, indent=1))
    root_index = out / "index.json"
    kept = json.loads(root_index.read_text())["calls"] if root_index.exists() else []
    entries = [e for e in kept if e["part"] not in args.parts.split(",")] + entries  # parts not rewritten stay
    index = {"version": args.version, "seed": args.seed, **drawn, "source": recipe.source,
             "built_with": made, **({"derived": list(recipe.derived)} if recipe.derived else {}), "parts": split,
             "calls": entries}
    (out / "index.json").write_text(json.dumps(index, indent=1))
    hours = sum(e["duration"] for e in entries) / 3600
    print(f"{len(entries)} calls, {hours:.2f} h in {out}")


if __name__ == "__main__":
    main()
