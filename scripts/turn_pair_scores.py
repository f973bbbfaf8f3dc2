"""Do the split's turn embeddings tell one voice from two people better than window centroids?

Each call is diarized as ``measure_counting.py`` replays it (cached segmentation and window
embeddings, the clustering, unmixing and split; a tuning call's own speakers left out of the
cohort). After the split, every pair of found speakers gets

- window: the adaptive s-norm (the clustering's cohort and top) of their window centroids:
  the unit mean of the training window embeddings whose lone frames lie >= 80% in that found
  speaker's turns (what the clustering's merge scored, without the cannot-link penalty);
- turn s-norm, turn cosine: the s-norm and the cosine of the unit means of their embedded
  turns (``split.SplitTurns.long``: exclusive turns >= ``min_turn`` s, their middle 3 s);
- ratio: ``opinion.piece_ratio`` of their embedded turns (two each at least);

and is labelled one voice (both found speakers hold most of their time with one reference
speaker) or two people. Per band (``band.narrowband``): the AUC of each score and the
overlap (lowest one-voice score, highest two-people score); ``-v``: one line per pair. Found
speakers without an embedded turn are counted, with their time and whether they are a voice
found twice.

    PYTHONPATH=. python scripts/turn_pair_scores.py --corpus ~/.cache/witness/corpus/v1 \\
        --cache /tmp/count-v1 --sets tune [--cut 7]

Answer (tune parts at b50cbf1, narrowband calls; AUC: the chance a one-voice pair outscores a
two-people pair, over the pairs that have the score; one-voice / two-people pairs):

                     window        turn s-norm   turn cosine   ratio (2+ turns each)
    v1, cut 5        0.767 10/218  0.723 13/235  0.709 13/235  0.870  2/158
    v2, cut 5        0.916 38/131  0.860 46/140  0.818 46/140  0.917 20/118
    v1, --cut 7      0.856 19/257  0.813 26/284  0.786 26/284  0.928  5/179
    v2, --cut 7      0.885 61/160  0.838 85/184  0.800 85/184  0.854 36/142

(wideband: v1 1 one-voice pair of 101, every score 0.99-1.00; v2 none of 6.) The turn
centroids' s-norm and cosine separate worse than the window centroids'; the ratio about as
well, but only where both speakers have two embedded turns, which the extra found speakers of
v1 (1-3 turns, 2-19 s) mostly lack, while 20 two-people pairs of v1 score a ratio of 0.88 to
1.03. Found speakers without an embedded turn: v1 2 (0.7 s, 2.2 s; both a voice found twice),
v2 none. A merge by the ratio after the split lost on v1 (``SplitConfig``'s docstring).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts.counting_sets import CORPUS, set_items
from scripts.measure_counting import PieceCache, _cohort_without, _reference_votes, cached_windows
from witness.audio import load_audio
from witness.diarize import pipeline as pipeline_module
from witness.diarize.band import narrowband
from witness.diarize.clustering import normalized, snorm_scores
from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.models.diarization_choice import choose_models
from witness.opinion import piece_ratio

SCORES = ("window", "turn_snorm", "turn_cosine", "ratio")


def owners(turns, reference) -> dict[str, str]:
    """{found speaker: the reference speaker holding most of its time}."""
    held: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for t in turns:
        for r in reference:
            overlap = min(t.end, r.end) - max(t.start, r.start)
            if overlap > 0:
                held[t.speaker][r.speaker] += overlap
    return {name: max(votes, key=votes.get) for name, votes in held.items()}


def window_centroids(windows, item, turns) -> dict[str, np.ndarray]:
    """{found speaker: unit mean of the training window embeddings >= 80% in its turns}."""
    train, votes, lone, names = _reference_votes(windows, replace(item, reference=tuple(turns)))
    pure = (votes.sum(axis=1) > 0) & (votes.max(axis=1, initial=0) >= 0.8 * lone)
    best = np.argmax(votes, axis=1) if len(names) else np.zeros(len(votes), dtype=np.int64)
    normed = normalized(train.embeddings) if len(train.embeddings) else train.embeddings
    return {name: normalized(normed[pure & (best == k)].mean(axis=0)) for k, name in enumerate(names)
            if (pure & (best == k)).any()}


def pair_rows(item, windows, split, merge, signal) -> tuple[list[dict], list[dict]]:
    """One dict per pair of found speakers (``SCORES``, one voice or not) and one per found
    speaker without an embedded turn."""
    speakers = sorted({t.speaker for t in split.turns})
    owner = owners(split.turns, item.reference)
    seconds = defaultdict(float)
    for t in split.turns:
        seconds[t.speaker] += t.duration
    centroid = window_centroids(windows, item, split.turns)
    turns = {s: split.normed[[t.speaker == s for t in split.long]] for s in speakers} if len(split.long) else {}
    band = "narrowband" if narrowband(signal) else "wideband"
    rows, bare = [], []
    for i, a in enumerate(speakers):
        if not len(turns.get(a, ())):
            twice = sum(owner.get(s) == owner.get(a) for s in speakers) > 1
            bare.append({"call": item.name, "speaker": a, "seconds": seconds[a], "twice": twice, "band": band})
        for b in speakers[i + 1:]:
            row = {"call": item.name, "pair": (a, b), "band": band, "one": owner.get(a) == owner.get(b),
                   "seconds": (seconds[a], seconds[b]), "turns": (len(turns.get(a, ())), len(turns.get(b, ())))}
            if a in centroid and b in centroid:
                row["window"] = float(snorm_scores(np.stack([centroid[a], centroid[b]]), merge.cohort, merge.top)[0, 1])
            if min(row["turns"]) >= 1:
                means = normalized(np.stack([turns[a].mean(axis=0), turns[b].mean(axis=0)]))
                row["turn_snorm"] = float(snorm_scores(means, merge.cohort, merge.top)[0, 1])
                row["turn_cosine"] = float(means[0] @ means[1])
            if min(row["turns"]) >= 2:
                row["ratio"] = piece_ratio(turns[a], turns[b])
            rows.append(row)
    return rows, bare


def auc(ones: list[float], twos: list[float]) -> float:
    """P(one-voice score > two-people score), ties half."""
    if not ones or not twos:
        return float("nan")
    a, b = np.array(ones)[:, None], np.array(twos)[None, :]
    return float(((a > b).sum() + 0.5 * (a == b).sum()) / (a.size * b.size))


def summary(rows: list[dict], bare: list[dict]) -> None:
    for band in sorted({r["band"] for r in rows}):
        print(f"\n{band}: pairs with every score / all pairs")
        full = [r for r in rows if r["band"] == band and all(k in r for k in SCORES)]
        every = [r for r in rows if r["band"] == band]
        print(f"  {len(full)} / {len(every)} (one voice {sum(r['one'] for r in full)} / {sum(r['one'] for r in every)})")
        for key in SCORES:
            for label, chosen in (("pairs with every score", full), ("pairs with this score", [r for r in every if key in r])):
                ones = [r[key] for r in chosen if r["one"]]
                twos = [r[key] for r in chosen if not r["one"]]
                if not ones or not twos:
                    continue
                over = sum(x > min(ones) for x in twos) + sum(x < max(twos) for x in ones)
                print(f"  {key:11s} {label:23s} AUC {auc(ones, twos):.3f}  one voice {len(ones):3d} "
                      f"[{min(ones):6.2f} .. {np.median(ones):6.2f} .. {max(ones):6.2f}]  two people {len(twos):4d} "
                      f"[{min(twos):6.2f} .. {np.median(twos):6.2f} .. {max(twos):6.2f}]  in the overlap {over}")
    print(f"\nfound speakers without an embedded turn: {len(bare)}, {sum(b['twice'] for b in bare)} of them a voice "
          f"found twice; their seconds: {sorted(round(b['seconds'], 1) for b in bare)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="tune", help="comma-separated: dev, tune (check: the verdict only)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--cut", type=float, help="the narrowband s-norm cut instead of the config's (lower: "
                                                  "over-clustered, the pairs a turn-level merge would judge)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per pair")
    args = parser.parse_args()
    models = choose_models("campplus")
    config = config_for(models.embedding)
    if args.cut is not None:
        config = replace(config, clustering=replace(config.clustering, snorm_threshold=args.cut))
    diarizer = Diarizer(replace(models, vad=None), config)
    diarizer.embedder.embed = pieces = PieceCache(diarizer.embedder.embed, args.cache / "pieces.pkl")
    items = [item for name in args.sets.split(",")
             for item in set_items(name, args.corpus, args.cache)]
    seen = {}
    split_speakers = pipeline_module.split_speakers

    def watched(*a, **k):
        seen["split"], seen["merge"] = split_speakers(*a, **k), a[5]
        return seen["split"]

    pipeline_module.split_speakers = watched
    rows, bare = [], []
    for item in items:
        windows = cached_windows(diarizer, item, args.cache)
        signal = load_audio(item.wav).samples
        seen.clear()
        with _cohort_without(item, diarizer.config.clustering.cohort):
            diarizer.cluster_windows(windows, SpeakerBounds(), item.duration, signal=signal)
        pieces.save()
        if "split" not in seen:
            continue
        new, gone = pair_rows(item, windows, seen["split"], seen["merge"], signal)
        rows += new
        bare += gone
        if args.verbose:
            for r in new:
                scores = " ".join(f"{k} {r[k]:6.2f}" if k in r else f"{k}   -   " for k in SCORES)
                print(f"  {r['call']:10s} {r['band']:10s} {'ONE' if r['one'] else 'two'} {r['pair'][0]}-{r['pair'][1]} "
                      f"{r['seconds'][0]:6.1f}/{r['seconds'][1]:6.1f}s turns {r['turns'][0]:3d}/{r['turns'][1]:3d}  {scores}")
    summary(rows, bare)


if __name__ == "__main__":
    main()
