"""How the second voice check (``witness.diarize.second_voice``) tells a 2-speaker call that
clustering heard as one voice from one voice alone: for each file the pipeline without the
check finds one speaker in, why clustering joined its voices (the s-norm score of the merge that
left one cluster, ``inf`` where the AHC cut already did; in how many windows segmentation heard
two local speakers), its long turns and the cosine between the centroids of their two groups
(spherical 2-means of their CAM++ pieces) by CAM++ and by GE2E, and the CAM++ centroids' s-norm;
for calls, the same cosines of the groups a perfect check would find (the reference's turns);
and which files each model alone and both together would split.

    PYTHONPATH=. python scripts/measure_counting.py --sets tune,muted-tune --cache DIR   # caches first
    PYTHONPATH=. python scripts/second_voice_study.py --sets tune,onevoice-tune,muted-tune --cache DIR

Sets and cache as in ``measure_counting.py``; tune on ``tune``, ``onevoice-tune``, ``muted-tune``.
``--dump FILE`` appends one JSON line per file found as one speaker.

Answer (issue 22, at b50cbf1, corpus v1 and v2 as built 2026-11-28; the cuts chosen from it and
their measurements are in ``second_voice``'s docstring): v1 tune, 14 calls with 2-3 speakers
found as one (12 of them 16-40 s telephone, opus, amr-nb), none on v2 tune, against 58 + 55
lone voices on v1 and 16 + 14 on v2. No signal separates them: the last merge scores
5.6-11.3 where it ran (the AHC cut alone gave one cluster in 7; -0.5 on tune_063, found as one
all the same), lone voices' 4.3-21.7; segmentation heard two local speakers in at most 2
windows of any of the calls; the turn groups score CAM++
0.281-0.847, GE2E 0.626-0.923 and s-norm -2.2-6.6 on the calls, 0.305-0.921, 0.551-0.981 and
-5.7-14.1 on lone voices. Even grouped by the reference, the calls' two people score CAM++
0.306-0.785 and GE2E 0.643-0.922: none under both lone voices' lowest (v1: 0.305 and 0.551).
Calls with 4+ long turns in two groups of 2+ (6 calls, 21 lone voices): CAM++ 0.631, 0.729,
0.732 then 0.815-0.847 on the calls, 0.513 (v2 muted tune_022) then 0.739-0.921 on lone voices.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts.counting_sets import CORPUS, set_items
from scripts.measure_counting import PieceCache, _cohort_without, cached_windows
from scripts.merge_scores import merges
from witness.audio import load_audio
from scripts.diarization_cases import der_parts
from witness.diarize.clustering import filter_embeddings, load_cohort, normalized, rival_pairs, score_merge, snorm_scores
from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.diarize.second_voice import CAM_COSINE, GE2E_COSINE, MIN_TURNS, centroid_cosine, group_centroids, two_means
from witness.diarize.split import embedded_turns, middle
from witness.diarize.features import SAMPLE_RATE
from witness.models.diarization_choice import choose_models


def last_merge(diarizer: Diarizer, windows, signal: np.ndarray) -> dict:
    """The clustering replayed (its first pass, before the unmixing): the s-norm score of the
    merge that left one cluster (inf when the AHC cut, small clusters joined, already gave one),
    whether it was cannot-linked, the number of training embeddings, of windows holding two
    of them (segmentation heard two local speakers: ``rival_pairs``) and those pairs' mean cosine."""
    clustering = diarizer.clustering_for(signal)
    train = filter_embeddings(windows.embeddings, windows.segmentations, clustering.min_active_ratio)
    got = {"last_merge": np.inf, "linked": False, "embeddings": len(train.embeddings), "windows": 0,
           "rival_windows": 0, "rival_cosine": np.nan}
    if len(train.embeddings) < 2:
        return got
    normed = normalized(train.embeddings)
    rivals = rival_pairs(train)
    got.update(windows=len(set(train.chunk_idx.tolist())), rival_windows=len(set(train.chunk_idx[rivals[:, 0]].tolist())))
    if len(rivals):
        got["rival_cosine"] = float(np.mean(np.sum(normed[rivals[:, 0]] * normed[rivals[:, 1]], axis=1)))
    steps = merges(train, clustering, None, score_merge(clustering).cohort)
    if steps:
        got.update(last_merge=steps[-1]["score"], linked=steps[-1]["linked"])
    return got


def group_cosines(pieces: list[tuple[float, float]], labels: np.ndarray, signal: np.ndarray, embed) -> float:
    """Centroid cosine of groups 0 and 1 of ``pieces`` ((start, end) s of ``signal``) embedded by
    ``embed`` one by one; NaN when a group has no piece that could be embedded."""
    rows = np.stack([embed(signal[None, int(a * SAMPLE_RATE):int(b * SAMPLE_RATE)])[0] for a, b in pieces])
    ok = np.isfinite(rows).all(axis=1) & (np.abs(rows).sum(axis=1) > 0)
    if np.bincount(labels[ok], minlength=2).min() < 1:
        return np.nan
    return centroid_cosine(normalized(rows[ok]), labels[ok])


def reference_pieces(item, config) -> tuple[list[tuple[float, float]], np.ndarray]:
    """The grouping a perfect second-voice check would find: the middle ``turn_seconds`` of each
    reference turn of at least ``min_turn`` s that no one else talks over, of the two people
    with the most such turns (0 for the one with more), in time order."""
    alone = [t for t in item.reference if t.duration >= config.min_turn and not any(
        o.speaker != t.speaker and o.start < t.end and o.end > t.start for o in item.reference)]
    two = [who for who, _ in Counter(t.speaker for t in alone).most_common(2)]
    alone = sorted((t for t in alone if t.speaker in two), key=lambda t: t.start)
    return [middle(t, config.turn_seconds) for t in alone], np.array([two.index(t.speaker) for t in alone], dtype=np.int64)


def signals(diarizer: Diarizer, ge2e, item, cache: Path) -> dict | None:
    """What tells two voices from one in the one speaker found in ``item`` without the check
    (None when more are found): the clustering's last merge (``last_merge``), the long turns
    and the two groups of their CAM++ pieces (spherical 2-means): turns in each, centroid
    cosine by CAM++ and by GE2E, and the CAM++ centroids' s-norm against the cohort."""
    windows = cached_windows(diarizer, item, cache)
    signal = load_audio(item.wav).samples
    with _cohort_without(item, diarizer.config.clustering.cohort):
        out = diarizer.cluster_windows(windows, SpeakerBounds(), item.duration, signal=signal)
        if len({t.speaker for t in out.turns}) != 1:
            return None
        merged = last_merge(diarizer, windows, signal)
        cohort = load_cohort(diarizer.config.clustering.cohort)
    got = {"set": item.set, "name": item.name, "band": item.band, "duration": item.duration,
           "speakers": item.speakers, "error": der_parts(item.reference, out.turns)["strict"],
           **merged,
           "cam": np.nan, "ge2e": np.nan, "snorm": np.nan, "groups": (0, 0)}
    config = diarizer.config.split
    long, normed = embedded_turns(out.exclusive_turns, signal, diarizer.embedder.embed, config)
    got["turns"] = len(long)
    got["reference"], got["reference_cam"], got["reference_ge2e"] = (0, 0), np.nan, np.nan
    if item.speakers >= 2:
        pieces, labels = reference_pieces(item, config)
        got["reference"] = tuple(int(n) for n in np.bincount(labels, minlength=2))
        if min(got["reference"]) >= 1:
            got["reference_cam"] = group_cosines(pieces, labels, signal, diarizer.embedder.embed)
            got["reference_ge2e"] = group_cosines(pieces, labels, signal, ge2e.embed)
    if len(long) < 2:
        return got
    labels = two_means(normed)
    got["groups"] = tuple(int(n) for n in np.bincount(labels, minlength=2))
    if min(got["groups"]) < 1:
        return got
    got["cam"] = centroid_cosine(normed, labels)
    centres = group_centroids(normed, labels)
    got["snorm"] = float(snorm_scores(centres, cohort, diarizer.config.clustering.cohort_top)[0, 1])
    got["ge2e"] = group_cosines([middle(t, config.turn_seconds) for t in long], labels, signal, ge2e.embed)
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="tune,onevoice-tune,muted-tune")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--cam", type=float, default=CAM_COSINE)
    parser.add_argument("--ge2e", type=float, default=GE2E_COSINE)
    parser.add_argument("--dump", type=Path, help="append one JSON line per file found as one speaker")
    args = parser.parse_args()
    models = replace(choose_models("campplus"), vad=None)
    diarizer = Diarizer(replace(models, second=None), config_for("campplus"))
    diarizer.embedder.embed = pieces = PieceCache(diarizer.embedder.embed, args.cache / "pieces.pkl")
    ge2e = Diarizer(models).second
    splits = {"CAM++ alone": lambda g: g["cam"] < args.cam, "GE2E alone": lambda g: g["ge2e"] < args.ge2e,
              "both": lambda g: g["cam"] < args.cam and g["ge2e"] < args.ge2e}
    seen = []
    for name in args.sets.split(","):
        found_one, by = {"voices": 0, "one": 0}, {rule: {"voices": [], "one": []} for rule in splits}
        for item in set_items(name, args.corpus, args.cache):
            got = signals(diarizer, ge2e, item, args.cache)
            pieces.save()
            if got is None:
                continue
            if args.dump:
                with args.dump.open("a") as f:
                    f.write(json.dumps({k: (None if isinstance(v, float) and not np.isfinite(v) else v)
                                        for k, v in got.items()}) + "\n")
            kind = "voices" if item.speakers >= 2 else "one"
            found_one[kind] += 1
            seen.append(got)
            error, total = got["error"]
            print(f"  {name:14s} {item.name:12s} {item.band:9s} {item.duration:5.0f}s {item.speakers} spk "
                  f"DER {error / total:5.1%} | last merge {got['last_merge']:5.1f}{'L' if got['linked'] else ' '}"
                  f" of {got['embeddings']:3d} | {got['turns']:3d} long turns {got['groups'][0]:2d}+{got['groups'][1]:<2d}"
                  f" CAM++ {got['cam']:.3f} s-norm {got['snorm']:5.1f} GE2E {got['ge2e']:.3f}"
                  f" | two local speakers in {got['rival_windows']}/{got['windows']} windows, cosine {got['rival_cosine']:.2f}"
                  + (f" | by the reference {got['reference'][0]}+{got['reference'][1]} turns: CAM++ "
                     f"{got['reference_cam']:.3f} GE2E {got['reference_ge2e']:.3f}" if item.speakers >= 2 else ""))
            if got["turns"] < 2 * MIN_TURNS or min(got["groups"]) < MIN_TURNS:
                continue
            for rule, split in splits.items():
                if split(got):
                    by[rule][kind].append(item.name)
        print(f"{name}: found as one {found_one['voices']} with 2+ speakers, {found_one['one']} with one")
        for rule, hits in by.items():
            print(f"  {rule:12s} splits {len(hits['voices'])} with 2+ ({' '.join(hits['voices'])}), "
                  f"{len(hits['one'])} with one ({' '.join(hits['one'])})")
    lone = [g for g in seen if g["speakers"] == 1 and np.isfinite(g["cam"])]
    calls = [g for g in seen if g["speakers"] >= 2 and np.isfinite(g["reference_cam"])]
    if lone and calls:
        cam, ge = min(g["cam"] for g in lone), min(g["ge2e"] for g in lone if np.isfinite(g["ge2e"]))
        below = [g["name"] for g in calls if g["reference_cam"] < cam and g["reference_ge2e"] < ge]
        print(f"lone voices' two groups score from CAM++ {cam:.3f}, GE2E {ge:.3f}; the merged calls' two people "
              f"(grouped by the reference) CAM++ {min(g['reference_cam'] for g in calls):.3f}-"
              f"{max(g['reference_cam'] for g in calls):.3f}, GE2E {min(g['reference_ge2e'] for g in calls):.3f}-"
              f"{max(g['reference_ge2e'] for g in calls):.3f}: {len(below)} of {len(calls)} under both ({' '.join(below)})")

if __name__ == "__main__":
    main()
