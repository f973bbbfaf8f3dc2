#!/usr/bin/env python3
"""Token word times against DTW word times (issue 24): how far apart are they, and can a cheap
correction bring whisper.cpp's token times (flash attention on) close enough for the merge?

Each call is decoded once, with DTW (flash attention off, one decoder), and every word is built
twice from the same tokens: from their DTW stamps (the default) and from whisper.cpp's own token
times (t0/t1, what ``timestamps = "token"`` uses), through the same placement and ``monotonic``.
So both lists hold the same words. Reported per call group: the token - DTW difference of
starts and of ends (median, mean, 90th percentile of the absolute difference) by word length,
position in the segment, first / last word of a segment, and after a pause; the distance of both
from the reference utterance edges (the word nearest each edge, within 1 s); and, for each
correction of the token times, how far those move from DTW's and, where the call has a full
job's output (``--turns DIR``: its diarization turns), the WDER of the words merged with those
turns (second opinion on where ``measure_merge.py``'s centroids, NAME.npz, lie beside them), each
digit a word / digit runs joined.

    python scripts/token_times.py --cache /tmp/tt                     # dev calls + sample call
    python scripts/token_times.py --cache /tmp/tt --calls ~/.cache/witness/corpus/v2/tune --only tune_001,tune_002
    python scripts/measure_merge.py --cache /tmp/mm          # turns + centroids for --turns
    python scripts/token_times.py --cache /tmp/tt --turns /tmp/mm

Measured (issue 24; tiny.en, Witness's token mode puts whisper.cpp's times ``TOKEN_LAG`` later,
here "shift +0.10"). Token - DTW, median start / end: dev + sample -0.12 / -0.15 s (90th
percentile of the distance 0.51 / 0.54 s), ten v2 tune calls (tune_001, 003, 005, 007, 010,
011, 013, 019, 020, 027) -0.10 / -0.14 s (0.47 / 0.46 s); the starts drift with the time into
the segment (0-2 s -0.08, 2-5 s -0.12, 5-10 s -0.18, over 10 s -0.41 s). Median distance from
DTW start / end on v2 tune, and mean distance from the reference utterance edges (start / end):

    dtw                              -      /   -       0.146 / 0.115
    token (whisper.cpp)            0.150 / 0.180        0.218 / 0.259
    shift +0.10 (Witness)          0.120 / 0.130        0.222 / 0.247
    shift +0.12/+0.15              0.120 / 0.130        0.227 / 0.255
    vad snap 0.5, 0.3 s            0.172 / 0.180        0.196 / 0.240
    spread tokens                  0.182 / 0.182        0.261 / 0.275
    shift +.10 + vad 0.3           0.132 / 0.128        0.171 / 0.230
    stretch .08/.12 2%             0.121 / 0.129        0.221 / 0.263

WDER merged with measure_merge.py's turns (second opinion on), each digit a word / runs joined:

    variant          sample   devcall_01   devcall_02    devcall_03   devcall_04
    dtw              2.50     0.54/0.56    2.11/1.26     2.27/2.50    0
    token            3.75     0            5.26/1.89     2.27/3.73    0
    shift +0.10      2.50     0.54/0.56    4.21/0.62     1.36/3.73    0
    shift +.10+vad   2.50     0.54/0.56    3.68/1.88     1.36/3.73    1.10
    vad snap 0.3     10.00    0.54/0.56    5.79/2.50     2.27/3.73    0.55
    spread tokens    11.25    2.70/2.81    11.05/6.25    3.64/5.00    0

Digits (dev + sample, 54 words) run further ahead, a median 0.37 s (90th percentile 0.76 s), but
an extra lag for them does not help the merge: digits +0.25 s 3.68/0.62% on devcall_02 and
2.27/4.97% on devcall_03, +0.40 s 4.21/0.62% and 3.18/3.73%. No correction keeps every call at or
under 3% by both scorers; the README gives the full job.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.end_to_end import CALLS  # noqa: E402
from scripts.measure_merge import wder as merge_wder  # noqa: E402
from witness.diarize.embedding import CamPlusPlusEmbedder  # noqa: E402
from witness.asr.whisper import WhisperEngine, WhisperOptions  # noqa: E402
from witness.asr.words import TOKEN_LAG, monotonic  # noqa: E402
from witness.audio import load_audio  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.merge import MergeOptions, merge  # noqa: E402
from witness.models.diarization_choice import choose_models  # noqa: E402
from witness.models.whisper_models import resolve_model, resolve_vad  # noqa: E402
from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices  # noqa: E402
from witness.transcript import Word, read_transcript  # noqa: E402

FRAME = 512 / 16000  # one Silero VAD probability per 32 ms
LAG = TOKEN_LAG / 100  # Witness's token mode puts whisper.cpp's token times this much later


@dataclass
class Decoded:
    """One call: the same words timed by DTW and by tokens, their segment and position, VAD."""

    dtw: list[Word]
    token: list[Word]
    segment: list[int]  # segment index of each word
    first: list[bool]
    last: list[bool]
    seg_edges: list[tuple[float, float]]  # per word: its whisper.cpp segment's own t0, t1 (file times)
    probs: np.ndarray  # Silero VAD speech probability per FRAME
    duration: float


def decode(wav: Path, engine: WhisperEngine) -> Decoded:
    """Decode ``wav`` once; each segment's words are built with DTW and with token times."""
    paired: dict[int, tuple[object, list[Word], tuple[float, float]]] = {}
    edges_of: dict[int, tuple[object, tuple[float, float]]] = {}
    original = WhisperEngine._piece_segments
    original_of = WhisperEngine._segments_of

    def segment_of(self, ctx, index, pieces, piece):
        out = original_of(self, ctx, index, pieces, piece)
        t0 = piece.to_file(self._pw.whisper_full_get_segment_t0(ctx, index) / 100)
        t1 = piece.to_file(self._pw.whisper_full_get_segment_t1(ctx, index) / 100)
        for seg in out:
            edges_of[id(seg)] = (seg, (t0, t1))
        return out

    def both(self, ctx, piece):
        dtw = original(self, ctx, piece)
        saved = self.options
        self.options = replace(saved, timestamps="token")
        try:
            token = original(self, ctx, piece)
        finally:
            self.options = saved
        # the same words; a run over a seam of rests can split differently by each word time
        words = [(w, edges_of[id(b)][1]) for b in token for w in b.words]
        assert [w.text for a in dtw for w in a.words] == [w.text for w, _ in words]
        k = 0
        for a in dtw:
            part = words[k:k + len(a.words)]
            paired[id(a)] = (a, [w for w, _ in part], part[0][1] if part else (a.start, a.end))
            k += len(a.words)
        return dtw

    probs: list[np.ndarray] = []
    vad_read = engine._vad.probabilities

    def keep(samples, *a, **k):
        out = vad_read(samples, *a, **k)
        probs.append(out)
        return out

    WhisperEngine._piece_segments = both
    WhisperEngine._segments_of = segment_of
    engine._vad.probabilities = keep
    try:
        samples = load_audio(wav).samples
        result = engine.transcribe(samples)
    finally:
        WhisperEngine._piece_segments = original
        WhisperEngine._segments_of = original_of
        engine._vad.probabilities = vad_read
    duration = len(samples) / 16000
    dtw, token, segment, first, last, edges = [], [], [], [], [], []
    for k, seg in enumerate(result.segments):
        owner, twords, seg_t = paired[id(seg)]
        assert owner is seg
        for i, (a, b) in enumerate(zip(seg.words, twords)):
            dtw.append(a)
            token.append(b)
            segment.append(k)
            first.append(i == 0)
            last.append(i == len(seg.words) - 1)
            edges.append(seg_t)
    raw = [replace(w, start=w.start - LAG, end=w.end - LAG) for w in token]  # whisper.cpp's own times
    return Decoded(list(monotonic(dtw, duration)), list(monotonic(raw, duration)), segment, first, last,
                   edges, np.asarray(probs[0]), duration)


# ---- corrections of the token times --------------------------------------------------------

def shift(a: float, b: float) -> Callable[[Decoded], list[Word]]:
    def fix(d: Decoded) -> list[Word]:
        return list(monotonic([replace(w, start=w.start + a, end=w.end + b) for w in d.token], d.duration))
    return fix


def stretch(a: float, b: float, rate: float) -> Callable[[Decoded], list[Word]]:
    """Shift starts by ``a`` and ends by ``b`` plus ``rate`` s per second since the segment's first word."""
    def fix(d: Decoded) -> list[Word]:
        first: dict[int, float] = {}
        out = []
        for w, k in zip(d.token, d.segment):
            x = w.start - first.setdefault(k, w.start)
            out.append(replace(w, start=w.start + a + rate * x, end=w.end + b + rate * x))
        return list(monotonic(out, d.duration))
    return fix


def digit_lag(a: float, digits: float) -> Callable[[Decoded], list[Word]]:
    """Shift every word by ``a``, a word of digits by ``digits`` instead."""
    def fix(d: Decoded) -> list[Word]:
        out = []
        for w in d.token:
            x = digits if w.text.strip(".,?!").isdigit() else a
            out.append(replace(w, start=w.start + x, end=w.end + x))
        return list(monotonic(out, d.duration))
    return fix


def speech_frames(d: Decoded, threshold: float) -> np.ndarray:
    return d.probs >= threshold


def vad_snap(threshold: float, reach: float) -> Callable[[Decoded], list[Word]]:
    """A word edge in silence moves to the nearest speech frame within ``reach`` s (a start
    forward into speech, an end back into speech); an edge in speech moves out to where the
    speech run it is in begins/ends when that is within ``reach``."""
    def fix(d: Decoded) -> list[Word]:
        speech = speech_frames(d, threshold)
        n = len(speech)
        out = []
        for w in d.token:
            s, e = int(w.start / FRAME), int(w.end / FRAME)
            out.append(replace(w, start=_snap(speech, min(s, n - 1), reach, +1),
                               end=max(_snap(speech, min(e, n - 1), reach, -1), 0.0)))
        return list(monotonic([replace(w, end=max(w.end, w.start)) for w in out], d.duration))
    return fix


def _snap(speech: np.ndarray, i: int, reach: float, inward: int) -> float:
    steps = int(reach / FRAME)
    if not speech[i]:  # in silence: move inward (start: later, end: earlier) to speech
        for k in range(1, steps + 1):
            j = i + inward * k
            if 0 <= j < len(speech) and speech[j]:
                return (j if inward > 0 else j + 1) * FRAME
        return i * FRAME
    for k in range(1, steps + 1):  # in speech: move outward to the run's edge
        j = i - inward * k
        if j < 0 or j >= len(speech) or not speech[j]:
            return (j + 1 if inward > 0 else j) * FRAME
    return i * FRAME


def spread(edges: str) -> Callable[[Decoded], list[Word]]:
    """Each segment's words spread by letters over its span: ``tokens`` (first token start ..
    last token end) or ``segment`` (whisper.cpp's segment t0..t1)."""
    def fix(d: Decoded) -> list[Word]:
        out = list(d.token)
        k = 0
        while k < len(out):
            j = k
            while j + 1 < len(out) and d.segment[j + 1] == d.segment[k]:
                j += 1
            t0, t1 = d.seg_edges[k]
            a, b = (out[k].start, out[j].end) if edges == "tokens" else (t0, t1)
            b = max(a, b)
            letters = [max(1, sum(c.isalnum() for c in w.text)) for w in out[k:j + 1]]
            total, acc = sum(letters), 0
            for i, n in enumerate(letters):
                out[k + i] = replace(out[k + i], start=a + (b - a) * acc / total, end=a + (b - a) * (acc + n) / total)
                acc += n
            k = j + 1
        return list(monotonic(out, d.duration))
    return fix


def then(first: Callable[[Decoded], list[Word]], second: Callable[[Decoded], list[Word]]) -> Callable[[Decoded], list[Word]]:
    return lambda d: second(replace(d, token=first(d)))


CORRECTIONS: dict[str, Callable[[Decoded], list[Word]]] = {
    "token (whisper.cpp)": lambda d: d.token,
    "shift +0.10/+0.10 (Witness)": shift(LAG, LAG),
    "shift +0.12/+0.15": shift(0.12, 0.15),
    "shift +0.15/+0.20": shift(0.15, 0.20),
    "shift +0.05/+0.05": shift(0.05, 0.05),
    "vad snap 0.5, 0.3 s": vad_snap(0.5, 0.3),
    "vad snap 0.5, 0.6 s": vad_snap(0.5, 0.6),
    "spread tokens": spread("tokens"),
    "spread segment": spread("segment"),
    "shift +.12/+.15 + vad 0.3": then(shift(0.12, 0.15), vad_snap(0.5, 0.3)),
    "shift +.10/+.10 + vad 0.3": then(shift(0.10, 0.10), vad_snap(0.5, 0.3)),
    "stretch .08/.12 2%": stretch(0.08, 0.12, 0.02),
    "stretch .08/.12 2% + vad 0.3": then(stretch(0.08, 0.12, 0.02), vad_snap(0.5, 0.3)),
    "stretch .10/.10 3%": stretch(0.10, 0.10, 0.03),
    "shift +0.10, digits +0.25": digit_lag(0.10, 0.25),
    "shift +0.10, digits +0.40": digit_lag(0.10, 0.40),
}


# ---- reports --------------------------------------------------------------------------------

def stats(values: list[float]) -> str:
    if not values:
        return "      -"
    v = np.asarray(values)
    return f"{np.median(v):+6.2f} {np.mean(v):+6.2f} {np.percentile(np.abs(v), 90):5.2f} n={len(v)}"


def differences(decoded: dict[str, Decoded]) -> None:
    rows: dict[str, tuple[list[float], list[float]]] = {}

    def add(key: str, a: Word, b: Word) -> None:
        s, e = rows.setdefault(key, ([], []))
        s.append(b.start - a.start)
        e.append(b.end - a.end)

    for d in decoded.values():
        begun: dict[int, float] = {}
        for i, (a, b) in enumerate(zip(d.dtw, d.token)):
            letters = sum(c.isalnum() for c in a.text)
            into = b.start - begun.setdefault(d.segment[i], b.start)
            add(f"into segment {'0-2' if into < 2 else '2-5' if into < 5 else '5-10' if into < 10 else '10+'} s", a, b)
            add("all", a, b)
            add(f"letters {'1-3' if letters <= 3 else '4-6' if letters <= 6 else '7+'}", a, b)
            add("first of segment" if d.first[i] else "last of segment" if d.last[i] else "inside segment", a, b)
            pause = a.start - d.dtw[i - 1].end if i else 99.0
            add("after pause >=0.3 s (DTW)" if pause >= 0.3 else "no pause", a, b)
    print("token - DTW, seconds: start (median mean |90%|), end (median mean |90%|)")
    for key, (s, e) in rows.items():
        print(f"  {key:28s} start {stats(s)}   end {stats(e)}")


def reference_edges(calls: dict[str, Path], decoded: dict[str, Decoded], fixes: dict[str, list[list[Word]]]) -> None:
    """Distance of the word nearest each reference utterance start/end (by DTW, within 1 s)."""
    out: dict[str, tuple[list[float], list[float]]] = {}
    for name, d in decoded.items():
        segments = read_stm(calls[name].with_suffix(".stm"))
        starts = np.array([w.start for w in d.dtw])
        ends = np.array([w.end for w in d.dtw])
        for seg in segments:
            i, j = int(np.argmin(np.abs(starts - seg.start))), int(np.argmin(np.abs(ends - seg.end)))
            for label, words in [("dtw", d.dtw)] + [(k, v[list(decoded).index(name)]) for k, v in fixes.items()]:
                s, e = out.setdefault(label, ([], []))
                if abs(starts[i] - seg.start) < 1:
                    s.append(words[i].start - seg.start)
                if abs(ends[j] - seg.end) < 1:
                    e.append(words[j].end - seg.end)
    print("word - reference utterance edge, seconds: start (median mean |90%|), end")
    for label, (s, e) in out.items():
        print(f"  {label:28s} start {stats(s)}   end {stats(e)}   mean|.| {np.mean(np.abs(s)):.3f} / {np.mean(np.abs(e)):.3f}")


def wder(call: Path, turns_dir: Path, words: list[Word], voices) -> tuple[float, float]:
    """WDER of ``words`` merged with the turns in ``turns_dir``: each digit a word, runs joined."""
    transcript = read_transcript(turns_dir / f"{call.stem}.json")
    options = MergeOptions(second_opinion=voices is not None)
    merged = merge([replace(w, speaker=None) for w in words], transcript.exclusive_turns, options, voices)
    joined, each = merge_wder(transcript, call.with_suffix(".stm"), merged.utterances)
    return each, joined


@lru_cache(maxsize=1)
def _opinion_embed():
    model = choose_models(opinion=MergeOptions().opinion_precision).opinion
    return CamPlusPlusEmbedder(model, min_clean_seconds=OPINION_MIN_SECONDS).embed


def centroid_voices(call: Path, folder: Path):
    """The second opinion's voices from ``measure_merge.py``'s cache (NAME.npz), else None."""
    path = folder / f"{call.stem}.npz"
    if not path.exists():
        return None
    return CentroidVoices(load_audio(call).samples, _opinion_embed(), dict(np.load(path)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="decoded calls are kept here (NAME.pkl)")
    parser.add_argument("--calls", type=Path, help="a corpus folder (default: the sample call and dev calls)")
    parser.add_argument("--only", help="comma-separated call names")
    parser.add_argument("--turns", type=Path, help="a full job's outputs (NAME.json) whose turns the words are merged with")
    args = parser.parse_args()
    files = sorted(p for p in args.calls.glob("*.wav") if p.with_suffix(".stm").exists()) if args.calls else CALLS
    if args.only:
        files = [p for p in files if p.stem in args.only.split(",")]
    args.cache.mkdir(parents=True, exist_ok=True)
    engine = None
    decoded: dict[str, Decoded] = {}
    for wav in files:
        path = args.cache / f"{wav.stem}.pkl"
        if not path.exists():
            if engine is None:
                options = WhisperOptions(threads=2, decoders=1, language="en", timestamps="dtw")
                engine = WhisperEngine(resolve_model("tiny.en").path, options, "tiny.en", vad_path=resolve_vad())
            path.write_bytes(pickle.dumps(decode(wav, engine)))
            print(f"decoded {wav.stem}", file=sys.stderr)
        decoded[wav.stem] = pickle.loads(path.read_bytes())
    calls = {p.stem: p for p in files}
    differences(decoded)
    fixes = {name: [fix(d) for d in decoded.values()] for name, fix in CORRECTIONS.items()}
    print("\ncorrection: distance from DTW, start / end (median |.|, 90% |.|)")
    for name, per_call in fixes.items():
        s = np.concatenate([[w.start - a.start for w, a in zip(ws, d.dtw)] for ws, d in zip(per_call, decoded.values())])
        e = np.concatenate([[w.end - a.end for w, a in zip(ws, d.dtw)] for ws, d in zip(per_call, decoded.values())])
        print(f"  {name:28s} {np.median(np.abs(s)):.3f} {np.percentile(np.abs(s), 90):.3f} / "
              f"{np.median(np.abs(e)):.3f} {np.percentile(np.abs(e), 90):.3f}")
    print()
    reference_edges(calls, decoded, fixes)
    if args.turns:
        names = [n for n in decoded if (args.turns / f"{n}.json").exists()]
        voices = {n: centroid_voices(calls[n], args.turns) for n in names}
        print(f"\nWDER (merged with the turns in {args.turns}, second opinion {'on' if all(voices.values()) else 'off'}),"
              " each digit / runs joined")
        print(f"  {'variant':28s} " + " ".join(f"{n:>15s}" for n in names))
        rows = {"dtw": [d.dtw for d in decoded.values()], **fixes}
        for label, per_call in rows.items():
            cells = [wder(calls[n], args.turns, ws, voices[n]) for n, ws in zip(decoded, per_call) if n in names]
            print(f"  {label:28s} " + " ".join(f"{100 * a:6.2f}/{100 * b:6.2f}%" for a, b in cells))


if __name__ == "__main__":
    main()
