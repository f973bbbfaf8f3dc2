"""Where the s-norm merge joins two people: the clustering's merges replayed per call, by score.

Each call's training embeddings (``measure_counting.py``'s cache) are cut by AHC as the
pipeline cuts them, then the s-norm merge (``clustering.merge_by_snorm``) runs on to one
cluster, recording each merge's score (cannot-link penalty included), the two clusters' sizes
and whether it joined two different people (each cluster named by the reference speaker most
of its clean embeddings hold). The table counts merges by score bin and band (wideband or
narrowband, from the corpus's own label); with ``-v`` one line per call: its last merges and
the range of cuts that would have given the true count at this stage (before the unmixing,
split and second voice). ``--band-cohort`` normalises against the cohort rows of the call's
own band only. A tuning call's own speakers are left out of the cohort.

    PYTHONPATH=. python scripts/merge_scores.py --corpus ~/.cache/witness/corpus/v1 \\
        --cache /tmp/count-v1 --sets tune

Answer (corpus v1 tune, 2-6-speaker calls, at 62cabc1; merges joining two people / all):

    s-norm score    <0     0-2    2-4    4-5    5-6    6-7    7-8    8-10   >=10
    narrowband    40/42  33/36  19/23  9/19   7/17   3/14   2/11   1/10   0/3
    wideband      26/27  10/11   9/9   1/1    3/3    1/2    1/4    2/17   2/39

On wideband calls the merges scoring 4-7 mostly joined two people, hence the wideband cut of
7 (``config.CAMPPLUS_CLUSTERING``); on narrowband ones the two kinds overlap from 2 to 8. A
band-only cohort moved wideband scores higher still (4-7: 10 of 11 joined two people).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts.counting_sets import COHORT, CORPUS, set_items
from scripts.measure_counting import _cohort_without, cached_windows, reference_labels
from witness.diarize import clustering as C
from witness.diarize.config import ClusteringConfig, config_for
from witness.diarize.pipeline import Diarizer
from witness.models.diarization_choice import choose_models

BINS = (-np.inf, 0, 2, 4, 5, 6, 7, 8, 10, np.inf)


def merges(train: C.TrainingSet, config: ClusteringConfig, reference: np.ndarray, cohort: np.ndarray) -> list[dict]:
    """The s-norm merges of ``train`` after the AHC cut, down to one cluster: score, sizes,
    cannot-link, clusters before, and whether the two clusters' reference speakers differ."""
    normed = C.normalized(train.embeddings)
    _, _, labels = C.ahc_start(normed, config.threshold, config.linkage, config.min_cluster_size)
    rivals = C.rival_pairs(train)
    merge = C.ScoreMerge(cohort, config.cohort_top, config.snorm_threshold, config.cannot_link_penalty)
    steps = []
    while labels.max() + 1 > 1:
        a, b, score, linked = C.next_merge(normed, labels, merge, rivals)
        owner = [np.bincount(reference[(labels == c) & (reference >= 0)]).argmax()
                 if ((labels == c) & (reference >= 0)).any() else -1 for c in (a, b)]
        sizes = [int((labels == a).sum()), int((labels == b).sum())]
        steps.append({"k": int(labels.max()) + 1, "score": score, "sizes": sizes, "linked": linked,
                      "two_people": bool(owner[0] != owner[1] and min(owner) >= 0)})
        labels = C.joined(labels, a, b)
    return steps


def right_cuts(steps: list[dict], true: int) -> list[tuple[float, float]]:
    """(low, high) ranges of cuts that stop the merging at ``true`` clusters."""
    edges = sorted({s["score"] for s in steps} | {-np.inf, np.inf})
    out = []
    for low, high in zip(edges, edges[1:]):
        if np.isfinite(low) and np.isfinite(high):
            cut = (low + high) / 2
        else:
            cut = high - 1 if np.isfinite(high) else low + 1
        count = next((s["k"] for s in steps if s["score"] < cut), 1)
        if count == true:
            out.append((low, high))
    return out


def band_cohort(item, cohort_name: str) -> np.ndarray:
    """The shipped cohort's rows from calls of ``item``'s band kind (wideband or not), without its speakers."""
    rows = json.loads((COHORT / cohort_name).with_suffix(".json").read_text())["rows"]
    corpus = json.loads((COHORT / cohort_name).with_suffix(".json").read_text())["corpus"]
    folder = CORPUS.parent / corpus["version"] / corpus["part"]
    wide = {call: json.loads((folder / f"{call}.json").read_text())["band"] == "wide" for call in {r[0] for r in rows}}
    own = {t.speaker for t in item.reference}
    keep = [wide[call] == (item.band == "wide") and speaker not in own for call, speaker in rows]
    return C.load_cohort(cohort_name)[np.array(keep)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="tune", help="comma-separated: dev, tune, check")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--band-cohort", action="store_true", help="the cohort rows of the call's own band only")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per call")
    args = parser.parse_args()
    models = choose_models("campplus")
    config = config_for(models.embedding)
    clustering = config.clustering
    diarizer = Diarizer(replace(models, vad=None), config)
    items = [item for name in args.sets.split(",")
             for item in set_items(name, args.corpus, args.cache)]
    table: dict[str, np.ndarray] = {}
    for item in items:
        windows = cached_windows(diarizer, item, args.cache)
        train = C.filter_embeddings(windows.embeddings, windows.segmentations, clustering.min_active_ratio)
        _, reference, _, _ = reference_labels(windows, item)
        if len(train.embeddings) < 2:
            continue
        with contextlib.nullcontext() if args.band_cohort else _cohort_without(item, clustering.cohort):
            cohort = band_cohort(item, clustering.cohort) if args.band_cohort else C.load_cohort(clustering.cohort)
            steps = merges(train, clustering, reference, cohort)
        band = "wideband" if item.band == "wide" else "narrowband"
        counts = table.setdefault(band, np.zeros((2, len(BINS) - 1), dtype=np.int64))
        if 2 <= item.speakers <= 6:
            for s in steps:
                counts[int(s["two_people"]), np.searchsorted(BINS, s["score"], side="right") - 1] += 1
        if args.verbose:
            last = " ".join(f"{s['score']:.1f}{'L' if s['linked'] else ''}{'*' if s['two_people'] else ''}"
                            f"({s['sizes'][0]},{s['sizes'][1]})" for s in steps[-6:])
            cuts = ", ".join(f"{a:.1f}..{b:.1f}" for a, b in right_cuts(steps, item.speakers))
            print(f"  {item.name:12s} {item.band:9s} {item.speakers} speakers, {len(train.embeddings):4d} embeddings"
                  f" | right cuts {cuts or 'none'} | last merges {last}  (*: two people, L: cannot-link)")
    print("merges joining two people / all, 2-6-speaker calls, by s-norm score")
    print(f"  {'':12s}" + "".join(f"{f'{a:g}..{b:g}':>9s}" for a, b in zip(BINS, BINS[1:])))
    for band, counts in sorted(table.items()):
        print(f"  {band:12s}" + "".join(f"{f'{w}/{w + r}':>9s}" for r, w in counts.T))


if __name__ == "__main__":
    main()
