"""Calibrate the known-voice threshold (``witness.voices.match.THRESHOLD``) on the dev set.

Each dev-set speaker's solo speech (their reference turns minus everybody else's) is cut, per
file and in time order, into pieces of ``--piece`` seconds (a shorter remainder of at least
5 s is a piece too). A piece is enrolled as ``witness enroll`` does it: diarized, the
centroid of its main speaker's cluster. The test side is cluster-like: two other pieces of
one speaker diarized together, their main cluster's centroid.

- same-speaker pairs: an enrolled piece against its speaker's test groups without it;
  different-speaker pairs: against every other speaker's groups;
- the threshold is the lowest score (rounded up to 0.01) at which at most ``--max-fa`` of the
  different-speaker pairs are accepted; the table gives false accepts and false rejects there;
- the test side as a split stereo channel gives it (``pieces.speech_centroid``: the same two
  pieces embedded in 10 s pieces, no clustering);
- two prints per voice (two pieces): their mean (``Voice.vector``) against the better single one;
- real call clusters: every dev file diarized whole, each cluster named by the reference
  speaker it overlaps most, scored against every enrolled piece from another file.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/calibrate_voices.py
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass

import numpy as np

from scripts.diarization_cases import SAMPLE_RATE, Case, dev_set, solo_regions
from witness.diarize.assign import cosine_similarity
from witness.diarize.config import SpeakerBounds
from witness.diarize.pieces import speech_centroid
from witness.diarize.pipeline import Diarizer
from witness.models.diarization_choice import choose_models
from witness.transcript import speech_seconds
from witness.voices.enroll import MIN_SPEECH_SECONDS


@dataclass(frozen=True)
class Piece:
    speaker: str
    file: str
    audio: np.ndarray  # (n,) float32, 16 kHz: the speaker alone


def pieces_of(case: Case, seconds: float) -> list[Piece]:
    pieces = []
    for speaker in sorted({t.speaker for t in case.reference}):
        parts = [case.samples[round(s * SAMPLE_RATE):round(e * SAMPLE_RATE)]
                 for s, e in solo_regions(case.reference, speaker)]
        audio = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
        step = round(seconds * SAMPLE_RATE)
        for first in range(0, len(audio), step):
            chunk = audio[first:first + step]
            if len(chunk) >= MIN_SPEECH_SECONDS * SAMPLE_RATE:
                pieces.append(Piece(speaker, case.name, chunk))
    return pieces


class Embedder:
    """The main speaker's cluster centroid of some audio, as ``witness enroll`` takes it."""

    def __init__(self) -> None:
        self.diarizer, self.bounds = Diarizer(choose_models("campplus")), SpeakerBounds()  # shipped defaults, CPU

    def clusters(self, audio: np.ndarray):
        out = self.diarizer.run(audio, self.bounds)
        return out, speech_seconds(out.exclusive_turns)

    def main_centroid(self, audio: np.ndarray) -> np.ndarray | None:
        out, seconds = self.clusters(audio)
        main = next((label for label in seconds if label in out.centroids), None)
        return None if main is None else out.centroids[main]


def threshold_for(different: np.ndarray, max_fa: float) -> float:
    """The lowest 0.01 step at which at most ``max_fa`` of ``different`` reach it."""
    for t in np.arange(-1.0, 1.0001, 0.01):
        if np.mean(different >= t) <= max_fa:
            return round(float(t), 2)
    return 1.0


def rates(same: np.ndarray, different: np.ndarray, t: float) -> tuple[float, float]:
    return float(np.mean(different >= t)) if len(different) else 0.0, float(np.mean(same < t)) if len(same) else 0.0


def describe(name: str, scores: np.ndarray) -> str:
    q = np.percentile(scores, [0, 1, 5, 25, 50, 75, 95, 99, 100]) if len(scores) else [np.nan] * 9
    return f"{name:<10} n={len(scores):<5} " + " ".join(f"{v:6.3f}" for v in q)


def histogram(same: np.ndarray, different: np.ndarray) -> list[str]:
    edges = np.arange(-0.2, 1.01, 0.1)
    s, d = np.histogram(same, edges)[0], np.histogram(different, edges)[0]
    return [f"  [{a:4.1f}, {b:4.1f})  same {x:4d}  different {y:5d}" for a, b, x, y in zip(edges, edges[1:], s, d)]


def pair_scores(prints: list[tuple[str, str, np.ndarray]],
                tests: list[tuple[str, frozenset, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Same- and different-speaker scores of ``prints`` (speaker, key, vector) against
    ``tests`` (speaker, keys it was made from, vector), skipping tests that contain the print."""
    same, different = [], []
    if not prints or not tests:
        return np.zeros(0), np.zeros(0)
    scores = cosine_similarity(np.stack([p[2] for p in prints]), np.stack([t[2] for t in tests]))
    for (speaker, key, _), row in zip(prints, scores):
        for (test_speaker, made_of, _), score in zip(tests, row):
            if speaker == test_speaker and key not in made_of:
                same.append(score)
            elif speaker != test_speaker:
                different.append(score)
    return np.asarray(same), np.asarray(different)


def call_clusters(embedder: Embedder, cases: list[Case]) -> list[tuple[str, str, np.ndarray]]:
    """(reference speaker, file, centroid) of every cluster of every dev file diarized whole."""
    clusters = []
    for case in cases:
        out, _ = embedder.clusters(case.samples)
        for label, centroid in out.centroids.items():
            overlap: dict[str, float] = {}
            for hyp in (t for t in out.exclusive_turns if t.speaker == label):
                for ref in case.reference:
                    overlap[ref.speaker] = overlap.get(ref.speaker, 0.0) + max(
                        0.0, min(hyp.end, ref.end) - max(hyp.start, ref.start))
            if overlap:
                clusters.append((max(overlap, key=overlap.get), case.name, centroid))
    return clusters


Prints = list[tuple[str, str, np.ndarray]]  # (speaker, piece key, centroid)
Tests = list[tuple[str, frozenset, np.ndarray]]  # (speaker, piece keys it was made of, centroid)


def enroll_and_test(embedder: Embedder, pieces: list[Piece],
                    by_speaker: dict[str, list[int]]) -> tuple[Prints, Tests, Tests]:
    """Every piece enrolled; per speaker, consecutive pairs of pieces as test groups, once
    diarized (a cluster centroid) and once as a split channel's speech is embedded."""
    prints = [(p.speaker, f"{n}", v) for n, p in enumerate(pieces)
              if (v := embedder.main_centroid(p.audio)) is not None]
    tests, channel_tests = [], []
    for speaker, numbers in sorted(by_speaker.items()):
        for a, b in zip(numbers[0::2], numbers[1::2]):
            audio, made_of = np.concatenate([pieces[a].audio, pieces[b].audio]), frozenset({f"{a}", f"{b}"})
            if (vector := embedder.main_centroid(audio)) is not None:
                tests.append((speaker, made_of, vector))
            vector = speech_centroid(embedder.diarizer.embedder, audio, [(0.0, len(audio) / SAMPLE_RATE)])
            if vector is not None:
                channel_tests.append((speaker, made_of, vector))
    return prints, tests, channel_tests


def other_recording(prints: Prints, tests: Tests, file_of: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Scores of each print against the test groups made from other files only."""
    same, different = [], []
    for speaker, key, vector in prints:
        elsewhere = [t for t in tests if all(file_of[k] != file_of[key] for k in t[1])]
        s, d = pair_scores([(speaker, key, vector)], elsewhere)
        same += list(s)
        different += list(d)
    return np.asarray(same), np.asarray(different)


def two_prints(prints: Prints, tests: Tests, by_speaker: dict[str, list[int]]) -> list[tuple]:
    """Rows for voices of two prints: scored by their mean (``Voice.vector``) and by the
    better single print."""
    mean_same, mean_diff, best_same, best_diff = [], [], [], []
    for speaker, numbers in sorted(by_speaker.items()):
        vectors = {key: v for s, key, v in prints if s == speaker}
        for a, b in itertools.combinations([f"{n}" for n in numbers if f"{n}" in vectors], 2):
            unit = np.stack([vectors[a], vectors[b]]).astype(np.float64)
            unit /= np.linalg.norm(unit, axis=1, keepdims=True)
            for test_speaker, made_of, vector in tests:
                if speaker == test_speaker and (a in made_of or b in made_of):
                    continue
                same, scores = speaker == test_speaker, cosine_similarity(unit, vector[None])[:, 0]
                mean = float(cosine_similarity(unit.mean(axis=0)[None], vector[None])[0, 0])
                (mean_same if same else mean_diff).append(mean)
                (best_same if same else best_diff).append(float(scores.max()))
    return [("two prints, mean", np.asarray(mean_same), np.asarray(mean_diff)),
            ("two prints, best single", np.asarray(best_same), np.asarray(best_diff))]


def against_calls(embedder: Embedder, cases: list[Case], prints: Prints, file_of: dict[str, str]) -> tuple:
    """The row of every print against the real clusters of the dev files it is not from."""
    clusters = call_clusters(embedder, cases)
    same, different = [], []
    for speaker, key, vector in prints:
        for cluster_speaker, file, centroid in clusters:
            if file_of[key] != file:
                score = float(cosine_similarity(vector[None], centroid[None])[0, 0])
                (same if speaker == cluster_speaker else different).append(score)
    return f"vs call clusters ({len(clusters)})", np.asarray(same), np.asarray(different)


def report(rows: list[tuple], threshold: float, max_fa: float) -> None:
    print(f"\nthreshold {threshold:.2f}: the lowest at which <= {max_fa:.0%} of one-print "
          "different-speaker pairs are accepted")
    print(f"{'protocol':<28} {'same pairs':>10} {'diff pairs':>10} {'FA':>7} {'FR':>7}  own threshold (FA<=max): FR")
    for name, s, d in rows:
        fa, fr = rates(s, d, threshold)
        own = threshold_for(d, max_fa) if len(d) else float("nan")
        own_fr = rates(s, d, own)[1] if len(d) else float("nan")
        print(f"{name:<28} {len(s):>10} {len(d):>10} {fa:7.2%} {fr:7.2%}  {own:.2f}: {own_fr:.2%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--piece", type=float, default=6.0, help="seconds of solo speech per piece (6)")
    parser.add_argument("--max-fa", type=float, default=0.01, help="false-accept rate allowed (0.01)")
    args = parser.parse_args()

    cases = dev_set()
    pieces = [p for case in cases for p in pieces_of(case, args.piece)]
    by_speaker: dict[str, list[int]] = {}
    for n, piece in enumerate(pieces):
        by_speaker.setdefault(piece.speaker, []).append(n)
    embedder = Embedder()
    prints, tests, channel_tests = enroll_and_test(embedder, pieces, by_speaker)
    same, different = pair_scores(prints, tests)
    threshold = threshold_for(different, args.max_fa)
    print(f"dev set: {len(cases)} files, {len(by_speaker)} speakers, {len(pieces)} pieces of {args.piece:g} s "
          f"({len(prints)} enrolled), {len(tests)} test groups of 2 pieces")
    print("pieces per speaker: " + ", ".join(f"{s} {len(n)}" for s, n in sorted(by_speaker.items())))
    print(f"\nscore percentiles   {'min':>6} {'1%':>6} {'5%':>6} {'25%':>6} {'50%':>6} {'75%':>6} "
          f"{'95%':>6} {'99%':>6} {'max':>6}")
    print(describe("same", same))
    print(describe("different", different))
    print("\n".join(histogram(same, different)))
    file_of = {f"{n}": p.file for n, p in enumerate(pieces)}
    rows = [("one print (the default)", same, different),
            ("one print, other recording", *other_recording(prints, tests, file_of)),
            ("vs a channel's 10 s pieces", *pair_scores(prints, channel_tests)),
            *two_prints(prints, tests, by_speaker),
            against_calls(embedder, cases, prints, file_of)]
    report(rows, threshold, args.max_fa)


if __name__ == "__main__":
    main()
