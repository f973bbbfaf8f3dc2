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

``--trace`` (issue 22): where each speaker the final turns lose went, and which stage made each
extra one (``trace_calls``). Answer on the tune parts' 2-4-speaker calls at main 3152883 (before
``SplitConfig.min_speaker_share``; ``--sets tune --speakers 2,3,4 --trace -v``, corpora v1, v2,
v3 with their caches); a speaker's "clean rows" are its training embeddings >= 80% its own:

    lost speakers, where                      v1 (92 calls)   v2 (28)   v3 (15)
    AHC: no cluster of its own (0-5 clean)     14 + 1 wide        -         1
    AHC: its clusters under min_size (1 row)        2             -         1
    s-norm merge (score)                  5.2 6.0 7.3; 7.8w    10.9Lw     6.1
    unmixing, split, second voice                   0             0         0

The 3-4-speaker calls counted short (v1 tune_026, 035, 040, 045, 049, 061, 079, 082; v2
tune_019; v3 tune_004) lose 13 speakers: 8 never had a cluster of their own (0-5 clean rows:
segmentation gave them no local speaker of their own, their speech is in rows under 80% one
person), 2 had one AHC cluster of one row that ``min_cluster_size`` merged away (v1 tune_082,
v3 tune_004), 3 were joined by the s-norm merge (v1 tune_045 at 5.2, narrowband, clusters of
29 and 10 rows; tune_061 at 7.8, wideband, 11 and 11; v2 tune_019 at 10.9 with a cannot-link,
wideband, a speaker with 4% of the speech). Why the split, which sees each
inside a found speaker with another person, does not part them (the long turns it embedded,
each named by the reference speaker of most of it): in 6 of those calls the lost speaker has a
single long turn in its host (v1 tune_026, 040, 045, 061, 079; v2 tune_019; a group needs 2),
cosine 0.30-0.64 with the host's other person (one voice's two most different turn groups score
down to 0.31, ``witness.diarize.second_voice``); in 4 its turns form a group but score 0.68-0.84
with the host's other person, over ``max_cosine`` 0.65 (v1 tune_035, 049, 082; v3 tune_004).
Extra speakers: v1 8 (6 made by the clustering,
2-6 s; one by the split, 2 s; one by the unmixing, wideband, 7 s), v2 24 (23 by the clustering,
1-24 s, median 6 s, 37-98% one person's speech, median 86%; in 7 of their 11 calls the
clustering's best pair left scored 4.0-4.8, just under the cut of 5; one by the unmixing, 3 s),
v3 1 (by the clustering, 9 s). Hence the last step (``witness.diarize.small_speakers``): a found
speaker under 4.5% of the speech joins the closest other. After it (the same command at its
defaults, share 4.5%, cosine 0.65): the same lost speakers; extras v1 7, v2 16 (3-24 s), v3 1.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.cluster.hierarchy import fcluster
from scipy.optimize import linear_sum_assignment

from scripts.counting_sets import CORPUS, set_items
from scripts.diarization_cases import der_parts
from scripts.measure_counting import PieceCache, _cohort_without, cached_windows, reference_labels
from scripts.merge_scores import merge_chain, owners
from witness.audio import load_audio
from witness.diarize import clustering as C, pipeline as pipeline_module
from witness.diarize.clustering import score_merge
from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer, _Reporter
from witness.evaluate import diarization_error
from witness.models.diarization_choice import choose_models

STAGES = ("clustering", "unmixing", "split", "second voice", "small joined")


def stages(diarizer: Diarizer, item, cache: Path, trace: bool = False):
    """The turns after each of ``STAGES``, as ``cluster_windows`` runs them; with ``trace``
    also the clustering's ``Trace`` of the pass the unmixing kept."""
    windows = cached_windows(diarizer, item, cache)
    signal = load_audio(item.wav).samples
    clustering = diarizer.clustering_for(signal)  # the s-norm cut of the audio's band
    bounds, known, merge, report = SpeakerBounds(), {}, score_merge(clustering), _Reporter(None)
    left_out = []
    with _cohort_without(item, clustering.cohort), _kept_mixed(left_out):
        found = [diarizer._speaker_turns(windows, bounds, item.duration, report, clustering)]
        found.append(diarizer._unmixed(found[-1], windows, bounds, item.duration, signal, known, report, clustering))
        found.append(diarizer._split(found[-1], signal, merge, bounds, report, known))
        found.append(diarizer._second_voice(found[-1], signal, bounds, known))
        found.append(diarizer._small_joined(found[-1], bounds, merge))
        if not trace:
            return found
        first = clustering_trace(windows, item, clustering, None)
        if not left_out or not left_out[0].any():
            return found, first
        again = clustering_trace(windows, item, clustering, left_out[0])
        return found, first if again.found == 1 < first.found else again  # as ``Diarizer._unmixed`` keeps


@contextmanager
def _kept_mixed(into: list):
    """While open, the unmixing's ``mixed_windows`` answers are appended to ``into``."""
    found = pipeline_module.mixed_windows

    def kept(*args, **kwargs):
        into.append(found(*args, **kwargs))
        return into[-1]

    pipeline_module.mixed_windows = kept
    try:
        yield
    finally:
        pipeline_module.mixed_windows = found


@dataclass
class Trace:
    """One clustering pass followed by who owns each cluster (``clustering_trace``).

    names: the reference speakers; rows: each one's clean training embeddings (>= 80% of their
    lone frames its); raw: the largest AHC cluster (before ``min_size``) each owns (0: none);
    kept: whether each owns a cluster after the small ones are merged; taken: for each whose
    last cluster an s-norm merge first joined to another speaker's cluster (either may own the
    result), (score, its size, the other's size, cannot-link); found: clusters left; stop: the
    best score left under the cut (None: one cluster); smallest: the smallest cluster left;
    owned: the speakers who own one of them."""

    names: list
    rows: np.ndarray
    raw: np.ndarray
    min_size: int
    kept: np.ndarray
    taken: dict
    found: int
    stop: float | None
    smallest: int
    owned: set


def clustering_trace(windows, item, clustering, exclude) -> Trace:
    """The clustering of ``item``'s training embeddings (less ``exclude``) replayed with
    ``clustering``'s rule, each cluster named by its clean rows' reference speaker."""
    _, reference, _, names = reference_labels(windows, item)
    train = C.filter_embeddings(windows.embeddings, windows.segmentations, clustering.min_active_ratio)
    if exclude is not None:
        keep = ~exclude[train.chunk_idx, train.speaker_idx]
        if keep.sum() >= 2:
            train = C.TrainingSet(train.embeddings[keep], train.chunk_idx[keep], train.speaker_idx[keep])
            reference = reference[keep]
    rows = np.bincount(reference[reference >= 0], minlength=len(names))
    normed = C.normalized(train.embeddings)
    if len(normed) < 2:
        return Trace(names, rows, rows * 0, 1, rows > 0, {}, len(normed), None, len(normed), set())
    merge, rivals = C.score_merge(clustering), C.rival_pairs(train)
    dendrogram, min_size, labels = C.ahc_start(normed, clustering.threshold, clustering.linkage,
                                               clustering.min_cluster_size, merge, rivals, clustering.small_apart,
                                               clustering.small_speakers)
    raw_labels = C._renumber(fcluster(dendrogram, clustering.threshold, criterion="distance"))
    raw = np.zeros(len(names), dtype=int)
    k = int(raw_labels.max()) + 1
    for c, owner in enumerate(owners(raw_labels, reference, k)):
        if owner >= 0:
            raw[owner] = max(raw[owner], int((raw_labels == c).sum()))
    k = int(labels.max()) + 1
    kept = np.isin(np.arange(len(names)), owners(labels, reference, k))
    taken, stop = {}, None
    for before, a, b, score, linked in merge_chain(normed, labels, merge, rivals):
        if score < merge.threshold:
            stop = score
            break
        owner = owners(before, reference, int(before.max()) + 1)
        if owner[a] != owner[b] and min(owner[a], owner[b]) >= 0:  # two people: each whose last cluster it was
            for mine, other in ((a, b), (b, a)):
                if int(owner[mine]) not in taken and (owner == owner[mine]).sum() == 1:
                    taken[int(owner[mine])] = (score, int((before == mine).sum()), int((before == other).sum()), linked)
        labels = C.joined(before, a, b)
    k = int(labels.max()) + 1
    return Trace(names, rows, raw, min_size, kept, taken, k, stop, int(np.bincount(labels).min()),
                 {int(o) for o in owners(labels, reference, k) if o >= 0})


def matched(table: np.ndarray) -> dict:
    """{reference speaker: found speaker} (rows, columns of ``seconds_table``) by the one-to-one
    pairing with the most shared seconds; a pair sharing nothing is no match."""
    found, ref = linear_sum_assignment(table, maximize=True)
    return {int(r): int(f) for f, r in zip(found, ref) if table[f, r] > 0}


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
    parser.add_argument("--trace", action="store_true", help="where each lost speaker went and which stage made "
                        "each extra one (``trace_calls``)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per call")
    args = parser.parse_args()
    diarizer, pieces = replay_diarizer(args.cache)
    items = [i for name in args.sets.split(",")
             for i in set_items(name, args.corpus, args.cache)]
    if args.speakers:
        items = [i for i in items if str(i.speakers) in args.speakers.split(",")]
    if args.trace:
        return trace_calls(diarizer, items, args.cache, pieces, args.verbose)
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


def replay_diarizer(cache: Path) -> tuple[Diarizer, PieceCache]:
    """The default CAM++ diarizer (no VAD) for replaying ``measure_counting.py``'s ``cache``: the
    turn pieces it embeds come from and go to ``cache``/pieces.pkl (save the cache after each call)."""
    models = choose_models("campplus")
    diarizer = Diarizer(replace(models, vad=None), config_for(models.embedding))
    diarizer.embedder.embed = pieces = PieceCache(diarizer.embedder.embed, cache / "pieces.pkl")
    return diarizer, pieces


def write_call_rows(items: list, calls: str | None, pieces: PieceCache, out: Path, rows_of) -> None:
    """For each of ``items`` (those named in ``calls``, comma-separated, when given) append
    ``rows_of(item)``'s rows to ``out`` as JSON lines, saving the piece cache after each call."""
    if calls:
        items = [i for i in items if i.name in calls.split(",")]
    with out.open("a") as f:
        for item in items:
            for row in rows_of(item):
                f.write(json.dumps(row) + "\n")
            pieces.save()
            print(item.name, flush=True)


def lost_where(trace: Trace, r: int, stage_matched: list) -> str:
    """Where reference speaker ``r`` (``stage_matched``: whether matched after each of ``STAGES``)
    was lost: in the clustering when it owns none of its clusters, else its first stage unmatched."""
    if r in trace.owned:
        return next((f"after {STAGES[k]}" for k, m in enumerate(stage_matched) if not m), "found")
    if trace.raw[r] == 0:
        return "AHC: no cluster of its own"
    if not trace.kept[r]:
        return "AHC: own clusters under min_size" if trace.raw[r] < trace.min_size else "AHC: min_size merge"
    return "s-norm merge" if r in trace.taken else "clustering: lost its clusters' majority"


def trace_calls(diarizer: Diarizer, items: list, cache: Path, pieces: PieceCache, verbose: bool) -> None:
    """``--trace``: per call, as many reference speakers as the final turns lose (paired with no
    found speaker, ``matched``), those the clustering left without a cluster of their own (none
    whose clean rows they hold most of) first, and where each went (``lost_where``); each found
    speaker paired with nobody (an extra) and the stage after which the extras first appeared."""
    lost, extra, scores, extra_sizes = Counter(), Counter(), [], []
    for item in items:
        found, trace = stages(diarizer, item, cache, trace=True)
        pieces.save()
        tables = [seconds_table(item.reference, f.turns) for f in found]
        pairs = [matched(t) for t in tables]
        counts = [len({t.speaker for t in f.turns}) for f in found]
        extras = [c - len(p) for c, p in zip(counts, pairs)]
        speech = {r: sum(t.duration for t in item.reference if t.speaker == name) for r, name in enumerate(trace.names)}
        total = sum(speech.values())
        band = "wide" if item.band == "wide" else "narrow"
        notes = []
        unmatched = [r for r in range(len(trace.names)) if r not in pairs[-1]]
        candidates = [r for r in range(len(trace.names)) if r not in trace.owned] + unmatched
        for r in list(dict.fromkeys(candidates))[:len(unmatched)]:
            where = lost_where(trace, r, [r in p for p in pairs])
            lost[(band, where)] += 1
            taken = trace.taken.get(r)
            if taken:
                scores.append((band, taken[0]))
            notes.append(f"lost {trace.names[r]} ({speech[r] / total:.0%} of speech, {trace.rows[r]} clean rows, "
                         f"raw {trace.raw[r]}/{trace.min_size}): {where}"
                         + (f" at {taken[0]:.1f}{'L' if taken[3] else ''} ({taken[1]}+{taken[2]})" if taken else ""))
        if extras[-1] > 0:
            first = next(k for k, e in enumerate(extras) if e > 0)
            extra[(band, STAGES[first])] += extras[-1]
            hyps = sorted({t.speaker for t in found[-1].turns})
            for f in sorted(set(range(len(hyps))) - set(pairs[-1].values())):
                seconds = sum(t.duration for t in found[-1].turns if t.speaker == hyps[f])
                extra_sizes.append((band, STAGES[first], seconds))
                owner = int(np.argmax(tables[-1][f]))
                stop = "-" if trace.stop is None else f"{trace.stop:.1f}"
                notes.append(f"extra {seconds:.1f} s (after {STAGES[first]}; "
                             f"{tables[-1][f, owner] / max(seconds, 1e-9):.0%} {trace.names[owner]}; "
                             f"clustering stopped at {stop}, smallest cluster {trace.smallest})")
        if verbose and notes:
            print(f"  {item.name:10s} {item.band:9s} {item.duration:5.0f}s {item.speakers} -> "
                  + "/".join(map(str, counts)) + " | " + "; ".join(notes))
    print("lost speakers (final turns), by band and where:")
    for key, n in sorted(lost.items()):
        print(f"  {key[0]:7s} {key[1]:34s} {n}")
    for band in ("narrow", "wide"):
        mine = sorted(round(x, 1) for b, x in scores if b == band)
        if mine:
            print(f"  {band} s-norm scores of the merges that took them: {mine}")
    print("extra speakers (final turns), by band and the stage the extras first appeared:")
    for key, n in sorted(extra.items()):
        sizes = sorted(round(x) for b, st, x in extra_sizes if (b, st) == key)
        print(f"  {key[0]:7s} {key[1]:13s} {n}  seconds {sizes}")


if __name__ == "__main__":
    main()
