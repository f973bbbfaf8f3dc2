#!/usr/bin/env python3
"""Does the boundary repair help? Word-level speaker accuracy on the sample call.

Words come from sample.stm (each line's words spread evenly over its span, speaker known);
turns from the human sample.rttm. Each trial jitters every word edge by up to ±150 ms and
every turn edge by up to ±250 ms (uniform), merges with and without the repair, and counts
words given the right speaker. Usage:

    python scripts/merge_benchmark.py [--trials 500] [--grid]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.stm_transcript import spread_words  # noqa: E402
from scripts import SAMPLE_CALL
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.merge import MergeOptions, exclusive_turns, merge  # noqa: E402
from witness.rttm import read_rttm  # noqa: E402
from witness.transcript import Turn, Word  # noqa: E402

NAMES = {"speaker90": "Diane", "speaker91": "Sheila"}  # the RTTM's labels for the STM's names


def jitter(words: list[Word], turns: list[Turn], rng: np.random.Generator, word_ms: float, turn_ms: float):
    w = [replace(x, start=x.start + rng.uniform(-word_ms, word_ms), end=x.end + rng.uniform(-word_ms, word_ms)) for x in words]
    w = [replace(x, start=min(x.start, x.end), end=max(x.start, x.end)) for x in w]
    t = [replace(x, start=x.start + rng.uniform(-turn_ms, turn_ms), end=x.end + rng.uniform(-turn_ms, turn_ms)) for x in turns]
    return w, [x for x in t if x.end > x.start]


def accuracy(words: list[Word], turns: list[Turn], options: MergeOptions) -> float:
    truth = {(w.start, w.end, w.text): w.speaker for w in words}
    merged = merge([replace(w, speaker=None) for w in words], exclusive_turns(turns), options).words
    return sum(NAMES.get(w.speaker) == truth[(w.start, w.end, w.text)] for w in merged) / len(merged)


def run(trials: int, options: MergeOptions, seed: int = 0) -> tuple[list[float], list[float]]:
    words = spread_words(read_stm(SAMPLE_CALL / "sample.stm"))
    turns = read_rttm(SAMPLE_CALL / "sample.rttm")["sample"]
    rng = np.random.default_rng(seed)
    plain, repaired = [], []
    for _ in range(trials):
        w, t = jitter(words, turns, rng, 0.150, 0.250)
        plain.append(accuracy(w, t, replace(options, repair=False)))
        repaired.append(accuracy(w, t, options))
    return plain, repaired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--grid", action="store_true", help="also try a few repair settings")
    args = parser.parse_args()
    words = spread_words(read_stm(SAMPLE_CALL / "sample.stm"))
    clean = accuracy(words, read_rttm(SAMPLE_CALL / "sample.rttm")["sample"], MergeOptions())
    print(f"no jitter: word speaker accuracy {clean:.4f} ({len(words)} words)")
    plain, fixed = run(args.trials, MergeOptions())
    better = sum(f > p for p, f in zip(plain, fixed))
    worse = sum(f < p for p, f in zip(plain, fixed))
    print(f"jitter ±150 ms words, ±250 ms turns, {args.trials} trials:")
    for name, acc in (("without repair", plain), ("with repair", fixed)):
        print(f"  {name:15s} mean {statistics.mean(acc):.4f}  sd {statistics.stdev(acc):.4f}  min {min(acc):.4f}"
              f"  all words right in {sum(a == 1.0 for a in acc) / len(acc):.1%} of trials")
    print(f"  repair better in {better}, worse in {worse}, equal in {args.trials - better - worse} trials")
    if args.grid:
        for blip_words in (1, 2, 3, 4):
            for real_pause in (0.2, 0.3, 0.5):
                options = MergeOptions(blip_words=blip_words, real_pause=real_pause)
                _, f = run(args.trials, options)
                print(f"  blip_words={blip_words} real_pause={real_pause}: mean {statistics.mean(f):.4f}")


if __name__ == "__main__":
    main()
