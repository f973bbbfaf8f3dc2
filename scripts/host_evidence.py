"""Is there evidence inside one found speaker that it holds two people? (issue 22, under-counts)

For each call, the final turns (``stage_confusion.stages``, replayed from ``measure_counting.py``'s
cache) are paired with the reference speakers (``stage_confusion.matched``). A found speaker is
a "host" (a) when its call is under-counted and it holds at least ``--lost-seconds`` of a lost
reference speaker (paired with nobody); it is "one" (b) when its call is counted right and it is
paired with a reference speaker; else "other". Where each lost speaker went is
``stage_confusion.lost_where``. Per found speaker, from its long exclusive turns (as the split
embeds them: each turn of at least 1 s by its middle 3 s, CAM++) cut into two groups
(``second_voice.two_means``):

    cam_cos    cosine of the two groups' CAM++ centroids
    cam_snorm  their adaptive s-norm against the clustering's cohort (the call's own speakers
               left out, as ``measure_counting.py`` does) less the call's merge cut
    ge2e_cos   cosine of the same two groups embedded again by GE2E (``Diarizer.second``)
    minority   the smaller group's share of the turns
    switch     of its consecutive long turns at most 1 s apart, the share whose groups differ
               (two halves of one voice do not answer each other within 1 s)
    rivals     windows where two local speakers (training embeddings) are both closest to its
               centroid among the final centroids (segmentation heard two people there; the
               constrained assignment gave one of them to another speaker), per 100 windows
               whose local speakers it is closest to
    rivals_all the same over every embedded local speaker, not only those clustering takes

One JSON line per found speaker (``--out``, appended); ``--table`` prints, from such lines, the
quantiles of each statistic on (a) and (b) and how many of each a cut flags.

    PYTHONPATH=. python scripts/host_evidence.py --corpus ~/.cache/witness/corpus/v3 \\
        --cache /tmp/under17/count-v3 --out /tmp/under17/evidence.jsonl
    PYTHONPATH=. python scripts/host_evidence.py --table /tmp/under17/evidence.jsonl

Answer (issue 22, session 17, main ea73c25; tune parts of v3 (17 of its 19 2-4-speaker calls:
tune_024, 025 not run), v3-d1 (19) and v3-d2 (22), 58 calls: 51 right, 2 under, 5 over; the
under-counted 5-6-speaker tune calls of v3 and v3-d1 added with ``--speakers 5,6 --lost-seconds
1``, since v3 and v3-d1 have no under-counted 2-4-speaker tune call at this main). Hosts (a): 12
found speakers in 8 calls (3 in the 2-4-speaker calls v3-d2 tune_004, 2 found as 1, and tune_013,
4 as 3); right speakers (b): 146 in 55 calls counted right (``rivals_all`` on 73: added after the
v3 and v3-d1 2-4-speaker rows were written). 9 of the 11 lost voices had no AHC cluster of their
own or one under ``min_cluster_size`` (1-2 s of their speech in the host); v3 tune_013's was
split off and joined back by the near-voice join. Percentiles 10/50/90, and the cuts at the
hosts' values (flagged a / b):

    stat        a (n)           b (n)             cut: a / b
    cam_cos     0.54 0.76 0.82 (8)   0.63 0.81 0.92 (122)   0.58: 2/10  0.64: 3/18  0.77: 5/48
    cam_snorm   -5.5 -1.7  0.0       -3.0  1.7  8.1         -4.40: 2/6  -2.74: 3/13 -1.21: 6/26
    ge2e_cos    0.79 0.91 0.95       0.78 0.92 0.97         0.69: 1/3   0.83: 2/23  0.87: 3/36
    minority    0.14 0.21 0.31       0.10 0.25 0.43         (no cut: a within b)
    switch      0.00 0.28 0.70 (7)   0.00 0.33 0.75 (115)   0.40: 3/49  1.00: 1/11
    rivals      0.0  0.0  12.8 (12)  0.0  0.0  7.8 (146)    13.64: 2/3  17.50: 1/0
    rivals_all  0.0 10.3 32.0 (12)   0.0  6.8 17.9 (73)     16.67: 5/11 30.95: 3/1 (one of the 3
                                                            a host of a call found as one, where
                                                            every window of 2 local speakers counts)

No statistic separates: the three hosts of 2-4-speaker calls lie inside the right speakers'
spread on each (cam_snorm -1.78, -0.10, -1.21 less the cut; GE2E 0.93, 0.96, 0.93; switch
0.40, 0.28, 0.50), and the cuts that flag 2-3 hosts flag 1-13 right speakers of 122-146. No rule
built (``SplitConfig``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from scripts.counting_sets import set_items
from scripts.measure_counting import _cohort_without, cached_windows
from scripts.stage_confusion import replay_diarizer, write_call_rows, lost_where, matched, seconds_table, stages
from witness.audio import load_audio
from witness.diarize.clustering import filter_embeddings, normalized, score_merge, snorm_scores
from witness.diarize.features import SAMPLE_RATE
from witness.diarize.pipeline import Diarizer
from witness.diarize.second_voice import centroid_cosine, group_centroids, two_means
from witness.diarize.split import embedded_turns, middle

STATS = ("cam_cos", "cam_snorm", "ge2e_cos", "minority", "switch", "rivals", "rivals_all")


def rival_windows(windows, clustering, centroids: np.ndarray, every: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per found speaker (rows of unit ``centroids``): windows where two training embeddings (with
    ``every``, any embedded local speakers) of one window are both closest to it, and windows
    where any is."""
    train = filter_embeddings(windows.embeddings, windows.segmentations, 0.0 if every else clustering.min_active_ratio)
    nearest = np.argmax(normalized(train.embeddings) @ centroids.T, axis=1)
    both, any_ = np.zeros(len(centroids)), np.zeros(len(centroids))
    for chunk in np.unique(train.chunk_idx):
        owners = nearest[train.chunk_idx == chunk]
        counts = np.bincount(owners, minlength=len(centroids))
        both += counts >= 2
        any_ += counts >= 1
    return both, any_


def speaker_stats(turns, normed, pieces, signal, second, cohort, top, cut) -> dict:
    """The statistics of one found speaker's long turns (time order) and their unit rows."""
    if len(turns) < 4:
        return {"turns": len(turns)}
    labels = two_means(normed)
    if labels.min() == labels.max():
        return {"turns": len(turns)}
    out = {"turns": len(turns), "cam_cos": centroid_cosine(normed, labels),
           "cam_snorm": float(snorm_scores(group_centroids(normed, labels), cohort, top)[0, 1]) - cut,
           "minority": float(np.bincount(labels).min() / len(labels))}
    close = [(a, b) for (a, b) in zip(range(len(turns)), range(1, len(turns))) if turns[b].start - turns[a].end <= 1.0]
    out["close_pairs"] = len(close)
    out["switch"] = float(np.mean([labels[a] != labels[b] for a, b in close])) if close else None
    again = np.asarray([second(signal[None, int(a * SAMPLE_RATE):int(b * SAMPLE_RATE)])[0] for a, b in pieces],
                       dtype=np.float64)
    ok = np.isfinite(again).all(axis=1) & (np.abs(again).sum(axis=1) > 0)
    if np.bincount(labels[ok], minlength=2).min() >= 1:
        out["ge2e_cos"] = centroid_cosine(normalized(again[ok]), labels[ok])
    return out


def call_rows(diarizer: Diarizer, item, cache: Path, lost_seconds: float) -> list[dict]:
    """One row per found speaker of ``item``'s final turns: its role and statistics."""
    found, trace = stages(diarizer, item, cache, trace=True)
    final = found[-1]
    tables = [seconds_table(item.reference, f.turns) for f in found]
    pairs = [matched(t) for t in tables]
    table, pair = tables[-1], pairs[-1]
    refs = sorted({t.speaker for t in item.reference})
    hyps = sorted({t.speaker for t in final.turns})
    signal = load_audio(item.wav).samples
    config = diarizer.config.split
    long, normed = embedded_turns(final.exclusive_turns, signal, diarizer.embedder.embed, config, {}, 2)
    clustering = diarizer.clustering_for(signal)
    with _cohort_without(item, clustering.cohort):
        merge = score_merge(clustering)
    windows = cached_windows(diarizer, item, cache)
    labels = [h for h in hyps if h in final.centroids]
    centroids = normalized(np.stack([final.centroids[h] for h in labels]))
    both, any_ = rival_windows(windows, clustering, centroids)
    both_all, any_all = rival_windows(windows, clustering, centroids, every=True)
    lost = [r for r in range(len(refs)) if r not in pair]
    where = {refs[r]: lost_where(trace, trace.names.index(refs[r]), [r in p for p in pairs]) for r in lost}
    rows = []
    for f, hyp in enumerate(hyps):
        held = {refs[r]: float(table[f, r]) for r in lost if table[f, r] >= lost_seconds}
        owner = next((refs[r] for r, g in pair.items() if g == f), None)
        role = ("host" if held and len(hyps) < item.speakers else
                "one" if owner and len(hyps) == item.speakers else "other")
        mine = [i for i, t in enumerate(long) if t.speaker == hyp]
        stats = speaker_stats([long[i] for i in mine], normed[mine], [middle(long[i], config.turn_seconds) for i in mine],
                              signal, diarizer.second.embed, merge.cohort, merge.top, merge.threshold)
        if hyp in labels:
            k = labels.index(hyp)
            stats["rivals"] = float(100 * both[k] / max(any_[k], 1))
            stats["rivals_all"] = float(100 * both_all[k] / max(any_all[k], 1))
        seconds = float(table[f].sum())
        rows.append({"call": f"{item.wav.parent.parent.name}/{item.name}", "speakers": item.speakers,
                     "found": len(hyps), "band": item.band, "hyp": hyp, "role": role, "owner": owner,
                     "owner_share": float(table[f, refs.index(owner)] / max(seconds, 1e-9)) if owner else None,
                     "lost_held": held, "lost_where": {r: where[r] for r in held}, "seconds": seconds, **stats})
    return rows


def print_table(path: Path) -> None:
    """Quantiles of each statistic on hosts (a) and right speakers (b), and cuts."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    groups = {"host": [r for r in rows if r["role"] == "host"], "one": [r for r in rows if r["role"] == "one"]}
    print(f"hosts (a): {len(groups['host'])} found speakers in "
          f"{len({r['call'] for r in groups['host']})} under-counted calls; right speakers (b): "
          f"{len(groups['one'])} in {len({r['call'] for r in groups['one']})} calls counted right")
    print(f"  with 4+ long turns: a {sum('cam_cos' in r for r in groups['host'])}, "
          f"b {sum('cam_cos' in r for r in groups['one'])}")
    for r in groups["host"]:
        print(f"  a {r['call']:16s} {r['band']:9s} {r['speakers']}->{r['found']} {r['hyp']} turns {r.get('turns')} "
              f"lost {r['lost_held']} {r['lost_where']} "
              + " ".join(f"{s} {r[s]:.2f}" for s in STATS if r.get(s) is not None))
    qs = (5, 10, 25, 50, 75, 90, 95)
    print(f"{'stat':10s} {'group':5s} {'n':>4s}  " + " ".join(f"p{q:<4d}" for q in qs))
    for stat in STATS:
        for name, group in groups.items():
            values = np.array([r[stat] for r in group if r.get(stat) is not None])
            if len(values):
                print(f"{stat:10s} {name:5s} {len(values):4d}  " + " ".join(f"{np.percentile(values, q):5.2f}" for q in qs))
    print("cuts at each host's value: flagged a / b (cam_cos, cam_snorm, ge2e_cos flag at or under it, the others at or over)")
    for stat in STATS:
        low = stat not in ("switch", "rivals", "rivals_all", "minority")
        a = np.array([r[stat] for r in groups["host"] if r.get(stat) is not None])
        b = np.array([r[stat] for r in groups["one"] if r.get(stat) is not None])
        if not len(a) or not len(b):
            continue
        line = " ".join(f"{c:.2f}:{int(((a <= c) if low else (a >= c)).sum())}/"
                        f"{int(((b <= c) if low else (b >= c)).sum())}" for c in np.unique(a))
        print(f"  {stat:10s} {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--set", default="tune")
    parser.add_argument("--calls", help="comma-separated call names (default: every call of --speakers)")
    parser.add_argument("--speakers", default="2,3,4", help="comma-separated true speaker counts to look at")
    parser.add_argument("--lost-seconds", type=float, default=3.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--table", type=Path, help="print the table from these JSON lines and stop")
    args = parser.parse_args()
    if args.table:
        return print_table(args.table)
    diarizer, pieces = replay_diarizer(args.cache)
    items = [i for i in set_items(args.set, args.corpus, args.cache) if str(i.speakers) in args.speakers.split(",")]
    write_call_rows(items, args.calls, pieces, args.out,
                    lambda item: call_rows(diarizer, item, args.cache, args.lost_seconds))


if __name__ == "__main__":
    main()
