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

``--second``: beside each merge, the cosine of the two clusters' centroids by the second
voice check's model (Resemblyzer GE2E, each training row embedded again from the same window
audio and mask; rows cached under ``--cache``/ge2e), to see whether a second model tells the
merges that join two people from those that join one voice where CAM++'s s-norm cannot
(narrowband, 2-8). Answer (issue 22, at 80f7b4e; ``--second --sets tune``; GE2E cosine 10th
percentile / median / 90th (merges) of 2-6-speaker narrowband calls, two people | one voice):

    s-norm   corpus v1 tune                             corpus v2 tune
    2-4      0.83/0.91/0.95 (19) | 0.90/0.93/0.95 (4)   0.91/0.92/0.93 (5) | 0.87/0.93/0.96 (15)
    4-5      0.89/0.90/0.92 (9)  | 0.88/0.92/0.95 (10)  0.90 (1)           | 0.87/0.93/0.97 (6)
    5-6      0.90/0.94/0.96 (7)  | 0.87/0.91/0.94 (10)  -                  | 0.92/0.95/0.97 (9)
    6-7      0.91/0.94/0.95 (3)  | 0.91/0.95/0.96 (11)  0.96 (1)           | 0.93/0.95/0.97 (11)
    7-8      0.94 (2)            | 0.88/0.92/0.96 (9)   0.98 (1)           | 0.92/0.94/0.97 (13)

GE2E's cosine alone scores the wrong merges as high as the right ones (on wideband calls its
two-people merges sit at 0.66-0.88); its s-norm added to CAM++'s orders them a little better
(``--fused``, below).

``--fused W,...``: each merge chosen and scored by CAM++'s s-norm + w x GE2E's adaptive s-norm
(GE2E cohort made from the default corpus's tune part as CAM++'s is, ``--cohort-cache`` its
``--cache``; a call's own speakers left out). Answer (issue 22, at a1cacf6; ``--sets tune``, v2
with ``--cohort-cache`` of v1; AUC: chance a one-voice merge of a 2-6-speaker call scores above
a two-people one; right: 2-4-speaker calls stopped at their true count by the best single cut,
at this stage, before unmixing, split and second voice):

    w      v1 narrowband        v2 narrowband        v1 wideband          v2 wideband
    0      0.884  40/65 (4.26)  0.900  15/24 (3.03)  0.958  25/27 (7.30)  0.949  3/4
    0.25   0.913  40/65 (5.93)  0.899  14/24 (2.94)  0.958  24/27         0.949  3/4
    0.5    0.920  40/65 (6.79)  0.896  15/24 (4.33)  0.958  24/27         0.949  3/4
    1      0.915  40/65 (7.09)  0.893  15/24 (4.74)  0.952  24/27         0.962  3/4
    2      0.912  39/65 (11.7)  0.891  14/24 (7.55)  0.942  22/27         0.974  4/4

Each corpus alone gains nothing at its own best cut; the gain is that one cut serves both: v1+v2
narrowband 2-4-speaker calls at one shared cut (89 calls; v1 | v2 at the cut named):

    cut     2   3   4   5   6   7   8      w 0 cut 5 (shipped): 38 | 11
    w 0     42  50  49  49  43  40  39     w 0.5 cut 5:         39 | 14
    w 0.5   33  41  51  53  51  50  44     w 1 cut 7:           40 | 14
    w 1     28  35  43  45  51  54  50

Guard at the same stage, v2 onevoice-tune (one voice alone, 20 calls): kept as one 16/20 at
w 0 cut 5, w 0.5 cut 5 and w 1 cut 7 alike (the split ones found 2,2,4,3 -> 2,2,2,2 fused).
Wideband gains nothing. Through the whole replay (``measure_counting.py --second-weights``, the
same sum in ``clustering.next_merge``, narrowband audio only; v1+v2+v3 tune 2-4-speaker calls
right of 135): 93 at w 0 -> 97 at w 0.5 cut 5, 96 at w 1 cut 7, 98 at w 0.75 cut 5.5, but v1's
strict DER 26.1% -> 28.0 / 27.8 / 28.1% and v3's 19.3% -> 20.3 / 20.4 / 20.2% (similar voices of
short 3-6-speaker calls joined; a lower CAM++ cut alone, 4.5, also gives 96): dropped, numbers
in ``ClusteringConfig``'s docstring (``CAMPPLUS_CLUSTERING``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts.counting_sets import COHORT, CORPUS, set_items
from scripts.measure_counting import _cohort_without, cached_windows, cohort_rows, reference_labels, with_second
from witness.diarize import clustering as C
from witness.diarize.config import ClusteringConfig, config_for
from witness.diarize.pipeline import Diarizer
from witness.models.diarization_choice import choose_models

BINS = (-np.inf, 0, 2, 4, 5, 6, 7, 8, 10, np.inf)


def merges(train: C.TrainingSet, config: ClusteringConfig, reference: np.ndarray | None, cohort: np.ndarray,
           second: np.ndarray | None = None, fused: tuple[np.ndarray, float] | None = None) -> list[dict]:
    """The s-norm merges of ``train`` after the AHC cut, down to one cluster: score, sizes,
    cannot-link, clusters before, and whether the two clusters' reference speakers differ
    (``reference``: a speaker index per row, -1 unclear; None: not asked);
    with ``second`` (the rows by another model, unit norm), its centroids' cosine; with
    ``fused`` (that model's cohort, weight w) each merge is chosen and scored by CAM++'s
    s-norm + w x the second model's s-norm (``clustering.SecondScore``)."""
    normed = C.normalized(train.embeddings)
    merge = C.ScoreMerge(cohort, config.cohort_top, config.snorm_threshold, config.cannot_link_penalty,
                         None if fused is None else C.SecondScore(second, *fused))
    _, _, labels = C.ahc_start(normed, config.threshold, config.linkage, config.min_cluster_size, merge,
                               C.rival_pairs(train), config.small_apart, config.small_speakers)
    steps = []
    for labels, a, b, score, linked in merge_chain(normed, labels, merge, C.rival_pairs(train)):
        owner = [-1, -1] if reference is None else owners(labels, reference, int(labels.max()) + 1)[[a, b]]
        sizes = [int((labels == a).sum()), int((labels == b).sum())]
        steps.append({"k": int(labels.max()) + 1, "score": score, "sizes": sizes, "linked": linked,
                      "two_people": bool(owner[0] != owner[1] and min(owner) >= 0)})
        if second is not None:
            ca, cb = (C.normalized(second[labels == c].mean(axis=0)) for c in (a, b))
            steps[-1]["second"] = float(ca @ cb)
    return steps


def merge_chain(normed: np.ndarray, labels: np.ndarray, merge: C.ScoreMerge, rivals: np.ndarray):
    """The s-norm merges from the clusters ``labels`` down to one, best pair first, whatever
    their score: (labels before the merge, a, b, score, linked) as ``clustering.next_merge``."""
    while labels.max() + 1 > 1:
        a, b, score, linked = C.next_merge(normed, labels, merge, rivals)
        yield labels, a, b, score, linked
        labels = C.joined(labels, a, b)


def owners(labels: np.ndarray, reference: np.ndarray, k: int) -> np.ndarray:
    """(k,) the reference speaker most of each cluster's clean rows hold (-1: none clean)."""
    return np.array([np.bincount(reference[(labels == c) & (reference >= 0)]).argmax()
                     if ((labels == c) & (reference >= 0)).any() else -1 for c in range(k)])


def best_cut(calls: list[tuple[int, list[dict]]]) -> tuple[int, float]:
    """The cut (merge while score > cut) that stops most ``calls`` ((true count, steps)) at their
    true count, and how many it stops there."""
    cuts = sorted({s["score"] for _, steps in calls for s in steps})
    cuts = [c - 1e-9 for c in cuts] + [cuts[-1] + 1] if cuts else [0.0]
    right = [sum(next((s["k"] for s in steps if s["score"] <= cut), 1) == true for true, steps in calls)
             for cut in cuts]
    return int(max(right)), float(cuts[int(np.argmax(right))])


def auc(two: list[float], one: list[float]) -> float:
    """Chance that a one-voice merge scores above a two-people merge (ties half)."""
    if not two or not one:
        return float("nan")
    a, b = np.asarray(one)[:, None], np.asarray(two)[None, :]
    return float((a > b).mean() + 0.5 * (a == b).mean())


def second_cohort(diarizer: Diarizer, items: list, cache: Path, group: int = 8) -> tuple[np.ndarray, list[str]]:
    """The second model's cohort made as ``measure_counting.write_cohort`` makes it (the
    tune calls' rows, ``group`` per centroid), with each row's speaker."""
    rows, sources = cohort_rows(diarizer, items, cache, group, second=True)
    return C.normalized(rows), [speaker for _, speaker in sources]


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


def second_rows(diarizer: Diarizer, item, windows, train: C.TrainingSet, cache: Path) -> np.ndarray:
    """(n, 256) unit (or zero) rows: each training row of ``train`` embedded by GE2E from the same window
    audio and frame mask CAM++ had (``measure_counting.with_second``, cached in ``cache``/ge2e)."""
    return C.second_rows(with_second(diarizer, item, windows, cache).second, train)


def clustered_calls(diarizer: Diarizer, items: list, cache: Path):
    """(item, windows, training set, reference label per training row) of each call with at
    least two training embeddings, from ``cache``."""
    for item in items:
        windows = cached_windows(diarizer, item, cache)
        train = C.filter_embeddings(windows.embeddings, windows.segmentations,
                                    diarizer.config.clustering.min_active_ratio)
        if len(train.embeddings) >= 2:
            yield item, windows, train, reference_labels(windows, item)[1]


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    return "/".join(f"{v:.2f}" for v in np.percentile(values, [10, 50, 90])) + f" ({len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="tune", help="comma-separated: dev, tune, check")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--band-cohort", action="store_true", help="the cohort rows of the call's own band only")
    parser.add_argument("--second", action="store_true", help="also GE2E's cosine of each merge's two clusters")
    parser.add_argument("--fused", help="comma-separated weights w: merge by CAM++ s-norm + w x GE2E s-norm "
                        "(GE2E cohort from the default corpus's tune part, a call's own speakers left out); per w and band: "
                        "AUC of one-voice over two-people merges and calls stopped at their true count "
                        "by the best single cut")
    parser.add_argument("--cohort-cache", type=Path, help="--cache of the default corpus (whose tune part "
                        "made CAM++'s cohort), for --fused's GE2E cohort; default --cache")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per call")
    args = parser.parse_args()
    models = choose_models("campplus")
    config = config_for(models.embedding)
    clustering = config.clustering
    diarizer = Diarizer(replace(models, vad=None), config)
    items = [item for name in args.sets.split(",")
             for item in set_items(name, args.corpus, args.cache)]
    if args.fused:
        args.cohort_cache = args.cohort_cache or args.cache
        fused_study(diarizer, items, args, [float(w) for w in args.fused.split(",")])
        return
    table: dict[str, np.ndarray] = {}
    second: dict[tuple[str, int, bool], list[float]] = {}
    for item, windows, train, reference in clustered_calls(diarizer, items, args.cache):
        with contextlib.nullcontext() if args.band_cohort else _cohort_without(item, clustering.cohort):
            cohort = band_cohort(item, clustering.cohort) if args.band_cohort else C.load_cohort(clustering.cohort)
            rows = second_rows(diarizer, item, windows, train, args.cache) if args.second else None
            steps = merges(train, clustering, reference, cohort, rows)
        band = "wideband" if item.band == "wide" else "narrowband"
        counts = table.setdefault(band, np.zeros((2, len(BINS) - 1), dtype=np.int64))
        if 2 <= item.speakers <= 6:
            for s in steps:
                counts[int(s["two_people"]), np.searchsorted(BINS, s["score"], side="right") - 1] += 1
                if "second" in s:
                    key = (band, int(np.searchsorted(BINS, s["score"], side="right") - 1), s["two_people"])
                    second.setdefault(key, []).append(s["second"])
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
    if second:
        print("GE2E centroid cosine, 10th percentile/median/90th (merges): two people | one voice")
        for band in sorted(table):
            for k, (a, b) in enumerate(zip(BINS, BINS[1:])):
                two, one = second.get((band, k, True), []), second.get((band, k, False), [])
                if two or one:
                    print(f"  {band:12s} s-norm {f'{a:g}..{b:g}':>9s}  {_spread(two):>24s} | {_spread(one)}")


def fused_study(diarizer: Diarizer, items: list, args, weights: list[float]) -> None:
    """``--fused``: per weight and band, the merges' AUC and the calls right at the best cut."""
    clustering = diarizer.config.clustering
    cohort, speakers = second_cohort(diarizer, set_items("tune", CORPUS, args.cohort_cache), args.cohort_cache)
    found: dict[tuple[float, str], list] = {}
    for item, windows, train, reference in clustered_calls(diarizer, items, args.cache):
        rows = second_rows(diarizer, item, windows, train, args.cache)
        own = {t.speaker for t in item.reference}
        kept = cohort[[s not in own for s in speakers]]
        band = "wideband" if item.band == "wide" else "narrowband"
        with _cohort_without(item, clustering.cohort):
            for w in weights:
                steps = merges(train, clustering, reference, C.load_cohort(clustering.cohort), rows, (kept, w))
                found.setdefault((w, band), []).append((item.speakers, steps))
    print("w     band        AUC (2-6 spk merges: one voice above two people)  right at best cut (2-4 spk calls)")
    for (w, band), calls in sorted(found.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        merged = [s for true, steps in calls if 2 <= true <= 6 for s in steps]
        area = auc([s["score"] for s in merged if s["two_people"]], [s["score"] for s in merged if not s["two_people"]])
        few = [c for c in calls if 2 <= c[0] <= 4]
        right, cut = best_cut(few)
        print(f"{w:<5g} {band:11s} {area:.3f} ({len(merged)} merges)   {right}/{len(few)} at cut {cut:.2f}")


if __name__ == "__main__":
    main()
