"""Which diarization stage puts two people under one found speaker? Per call, the speaker
count and confusion after each stage of ``Diarizer.cluster_windows`` (clustering and
reconstruction, the unmixing, the turn-by-turn split, the second voice), and the stage after
which some found speaker first holds two people: at least ``--share`` (30%) of its speech and
``--seconds`` (3 s) each from two reference speakers.

Segmentation and CAM++ embeddings come from ``measure_counting.py``'s cache (``--cache``; a
call not there is embedded and added); a tuning call's own speakers are left out of the cohort.

    PYTHONPATH=. python scripts/stage_confusion.py --sets tune --corpus ~/.cache/witness/corpus/v2 \\
        --cache /tmp/count-v2 --speakers 3,4 -v

Answer on the tune parts, 2-4-speaker calls (``--speakers 2,3,4``), before (62cabc1) and after
the split's moves were kept from emptying a speaker (5ce0901):

    calls where a found speaker holds two people at the end, by the stage it first appeared
                                 v1 tune (92 calls)     v2 tune (28 calls)
                                 before    after        before    after
    clustering, count wrong        22        22            1         1
    clustering, count right         5         5            1         1
    unmixing, count wrong           0         0            1         1
    split, count wrong              0         0            1         1
    split, count right              2         0            1         1
    confusion at the end         13.4%     13.0%         10.5%     10.4%
    counts right at the end        61        61            16        15

Nearly always the two people are one cluster from the clustering on (an under-count, or a
count made right by another voice cut in two); the rest came from the split's moves, which
emptied a speaker of two long turns into another (v1 tune_062, tune_101; v2 tune_011, 4
speakers, 5 found, had its right count of 4 that way, and the 21% of a speaker's speech from
the second person is under this script's 30% share). A k-means refinement of the window
clusters, a split-and-merge swap, or the windows clustered again at the final count did not
lower the confusion of the tune parts (README, "Speaker diarization").
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts.counting_sets import CORPUS, set_items
from scripts.diarization_cases import der_parts
from scripts.measure_counting import PieceCache, _cohort_without, cached_windows
from witness.audio import load_audio
from witness.diarize.clustering import score_merge
from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer, SpeakerTurns, _Reporter
from witness.evaluate import diarization_error
from witness.models.diarization_choice import choose_models

STAGES = ("clustering", "unmixing", "split", "second voice")


def stages(diarizer: Diarizer, item, cache: Path) -> list[SpeakerTurns]:
    """The turns after each of ``STAGES``, as ``cluster_windows`` runs them."""
    windows = cached_windows(diarizer, item, cache)
    signal = load_audio(item.wav).samples
    clustering = diarizer.clustering_for(signal)  # the s-norm cut of the audio's band
    bounds, known, merge, report = SpeakerBounds(), {}, score_merge(clustering), _Reporter(None)
    with _cohort_without(item, clustering.cohort):
        found = [diarizer._speaker_turns(windows, bounds, item.duration, report, clustering)]
        found.append(diarizer._unmixed(found[-1], windows, bounds, item.duration, signal, known, report, clustering))
        found.append(diarizer._split(found[-1], signal, merge, bounds, report, known))
        found.append(diarizer._second_voice(found[-1], signal, bounds, known))
    return found


def seconds_table(reference, turns, step: float = 0.05) -> np.ndarray:
    """(found speakers, reference speakers) seconds both talk, on a ``step`` s grid."""
    refs, hyps = sorted({t.speaker for t in reference}), sorted({t.speaker for t in turns})
    frames = int(max(t.end for t in (*reference, *turns)) / step) + 1
    grids = []
    for names, seq in ((refs, reference), (hyps, turns)):
        grid = np.zeros((len(names), frames), dtype=np.float32)
        for t in seq:
            grid[names.index(t.speaker), int(t.start / step):int(t.end / step)] = 1
        grids.append(grid)
    return grids[1] @ grids[0].T * step


def holds_two(table: np.ndarray, share: float, seconds: float) -> bool:
    """Whether some found speaker (row of ``seconds_table``) holds at least ``seconds`` and
    ``share`` of its speech from each of two reference speakers."""
    enough = (table >= seconds) & (table >= share * table.sum(axis=1, keepdims=True))
    return bool((enough.sum(axis=1) >= 2).any())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="tune", help="comma-separated: dev, tune, check")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--speakers", help="comma-separated true speaker counts to keep (default: all)")
    parser.add_argument("--share", type=float, default=0.3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per call")
    args = parser.parse_args()
    models = choose_models("campplus")
    diarizer = Diarizer(replace(models, vad=None), config_for(models.embedding))
    diarizer.embedder.embed = pieces = PieceCache(diarizer.embedder.embed, args.cache / "pieces.pkl")
    items = [i for name in args.sets.split(",")
             for i in set_items(name, args.corpus, args.cache)]
    if args.speakers:
        items = [i for i in items if str(i.speakers) in args.speakers.split(",")]
    confusion, right, first = np.zeros(len(STAGES)), np.zeros(len(STAGES), dtype=int), Counter()
    total = 0.0
    for item in items:
        line = f"  {item.name:12s} {item.speakers}"
        appeared = None
        for k, found in enumerate(stages(diarizer, item, args.cache)):
            count = len({t.speaker for t in found.turns})
            seconds = diarization_error(list(item.reference), list(found.turns)).confusion
            confusion[k] += seconds
            right[k] += count == item.speakers
            two = holds_two(seconds_table(item.reference, found.turns), args.share, args.seconds)
            appeared = appeared or (STAGES[k] if two else None)
            line += f" | {STAGES[k]} {count} {'2in1' if two else '    '}"
        pieces.save()
        item_total = der_parts(item.reference, found.turns)["strict"][1]
        total += item_total
        final_two = holds_two(seconds_table(item.reference, found.turns), args.share, args.seconds)
        first[(appeared if final_two else "none") + (", count right" if count == item.speakers else "")] += 1
        if args.verbose:
            print(line + f" | confusion {seconds / item_total:6.1%}")
    print(f"{len(items)} calls; after each stage: counts right, confusion of the speech")
    for k, name in enumerate(STAGES):
        print(f"  {name:13s} {right[k]:3d}  {confusion[k] / total:6.1%}")
    print("a found speaker holding two people at the end, by the stage it first appeared:")
    for key, n in sorted(first.items()):
        print(f"  {key:30s} {n}")


if __name__ == "__main__":
    main()
