"""Do segmentation-3.0's raw powerset posteriors hold a voice that the hard decoding gives no
local speaker of its own (issue 22)? Per 10 s window (1 s step) and frame, against the reference:

- lost: one reference voice talks, the frame decodes as one local speaker whose lone frames
  belong mostly to another voice, and this voice owns no local speaker in the window;
- host: the owner's own frames in a local speaker that holds lost frames;
- single: the owner's frames in a pure local speaker (>= 90% of its lone frames one voice) of a
  window with no lost frames (the controls: 2-speaker calls).

Owner of a local speaker: the reference voice of most of its lone frames (one local speaker
decoded, one voice talking, at the frame's centre). Per such frame, with s the decoded speaker
and p the posteriors (exp of the log-softmax): free = the most likely other local speaker j's
P(j active) = p({j}) + p({s,j}) + p({j,k}) over j != s that the window's hard decoding never
uses; other = the same over every j != s; pair = sum of p({s,j}); self = p({s}). Printed as
percentiles by category; then, per threshold, the share of each category's lone frames that lie
in a run of ``--min-run`` frames with one free local speaker's P(active) >= threshold (what a
decoding that opens a new local speaker there would move), the windows without lost frames that
would gain one, and the windows where those frames would give a local speaker with enough lone frames
to train clustering (``--min-active``): of the lost voice (>= 80% lost frames) or not.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/seg_posteriors.py \
        --corpus ~/.cache/witness/corpus/v3 --calls tune_007,tune_016 --controls tune_004,tune_005 \
        [--scores /tmp/seglost17/scores]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from scripts.counting_sets import corpus_items
from scripts.measure_segmentation import reference_voices, scores_of
from witness.audio import load_audio
from witness.diarize.powerset import decode_powerset, powerset_mapping
from witness.diarize.reconstruct import runs
from witness.diarize.segmentation import SegmentationModel
from witness.models.diarization_choice import choose_segmentation

FEATURES = ("free", "other", "pair", "self")
CATEGORIES = ("lost", "host", "single")
THRESHOLDS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
PERCENTILES = (10, 25, 50, 75, 90, 95, 99)


def window_scores(model: SegmentationModel, item, store: Path | None) -> tuple[np.ndarray, np.ndarray]:
    """(windows,) start samples and (windows, 589, 7) log-posteriors of ``item`` at a 1 s step."""
    path = None if store is None else store / f"{item.set}-{item.name}-{item.wav.stat().st_size}.npz"
    if path is not None and path.exists():
        data = np.load(path)
        return data["starts"], data["scores"]
    starts, scores = scores_of(model, load_audio(item.wav).samples)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, starts=starts, scores=scores)
    return starts, scores


def frame_features(scores: np.ndarray, activity: np.ndarray) -> dict[str, np.ndarray]:
    """Per frame (windows, 589): the FEATURES of the decoded lone local speaker (NaN elsewhere),
    and ``active`` (windows, 589, 3): each local speaker's P(active)."""
    mapping = powerset_mapping(3, 2)
    p = np.exp(scores.astype(np.float64))
    active = p @ mapping  # (W, F, 3) P(local speaker active)
    lone = activity.sum(axis=2) == 1
    s = np.argmax(activity, axis=2)
    used = activity.any(axis=1)  # (W, 3)
    other = np.where(np.arange(3) == s[..., None], -1.0, active)
    free = np.where(used[:, None, :], -1.0, other)
    pair_classes = mapping.sum(axis=1) == 2
    pair = np.zeros(lone.shape)
    for c in np.flatnonzero(pair_classes):
        pair += p[..., c] * mapping[c][s]
    self_p = np.take_along_axis(p[..., 1:4], s[..., None], axis=2)[..., 0]
    out = {"free": free.max(axis=2), "other": other.max(axis=2), "pair": pair, "self": self_p}
    out = {k: np.where(lone & (v >= 0), v, np.nan) for k, v in out.items()}
    out["active"] = active
    return out


def categories(activity: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """(windows, 589) int8: 0 lost, 1 host, 2 single (CATEGORIES), -1 none of these."""
    cat = np.full(activity.shape[:2], -1, dtype=np.int8)
    one_voice = ref.sum(axis=2) == 1
    voice = np.argmax(ref, axis=2)
    lone = activity.sum(axis=2) == 1
    s = np.argmax(activity, axis=2)
    for w in range(len(activity)):
        known = lone[w] & one_voice[w]
        owners, pure = {}, {}
        for k in range(activity.shape[2]):
            votes = np.bincount(voice[w][known & (s[w] == k)], minlength=ref.shape[2])
            if votes.sum():
                owners[k], pure[k] = int(votes.argmax()), votes.max() >= 0.9 * votes.sum()
        owned = set(owners.values())
        lost = known & np.array([owners.get(int(k), -1) != v and v not in owned for k, v in zip(s[w], voice[w])])
        hosts = set(s[w][lost].tolist())
        mine = known & np.array([owners.get(int(k), -1) == v for k, v in zip(s[w], voice[w])])
        cat[w][lost] = 0
        cat[w][mine & np.isin(s[w], list(hosts))] = 1
        if not lost.any():
            cat[w][mine & np.array([pure.get(int(k), False) for k in s[w]])] = 2
    return cat


def switched(active: np.ndarray, used: np.ndarray, lone: np.ndarray, threshold: float, min_run: int) -> np.ndarray:
    """(589,) bool: the ``lone`` frames of one window in a run of >= ``min_run`` frames where one
    free local speaker's P(active) ((589, 3), ``used`` (3,) bool) is >= ``threshold``."""
    out = np.zeros(len(lone), dtype=bool)
    for j in np.flatnonzero(~used):
        for a, b in runs(lone & (active[:, j] >= threshold)):
            if b - a >= min_run:
                out[a:b] = True
    return out


def auc_above(high: np.ndarray, low: np.ndarray) -> float:
    """P(a value of ``high`` exceeds one of ``low``), ties counted half (Mann-Whitney)."""
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([high, low]))[:len(high)]
    return float((ranks.sum() - len(high) * (len(high) + 1) / 2) / (len(high) * len(low)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--part", default="tune")
    parser.add_argument("--calls", required=True, help="comma-separated calls that lose a voice")
    parser.add_argument("--controls", default="", help="comma-separated right-counted 2-speaker calls")
    parser.add_argument("--scores", type=Path, help="folder keeping each call's raw scores")
    parser.add_argument("--min-run", type=int, default=30, help="frames (30: about 0.5 s)")
    parser.add_argument("--min-active", type=int, default=118,
                        help="lone frames a local speaker needs to train clustering (ClusteringConfig.min_active_ratio 0.2)")
    args = parser.parse_args()
    items = {i.name: i for i in corpus_items(args.corpus, args.part)}
    model = SegmentationModel(choose_segmentation("auto", None, True, None), threads=1)
    values = {(group, c, f): [] for group in ("calls", "controls") for c in CATEGORIES for f in FEATURES}
    moved = defaultdict(lambda: np.zeros(2))  # (group, category, threshold) -> frames switched, frames
    opened = defaultdict(lambda: np.zeros(2))  # (group, threshold) -> windows without lost frames opened, windows
    embeddable = defaultdict(lambda: np.zeros(3))  # (group, threshold) -> windows: a pure lost piece, another piece, with lost frames
    for group, names in (("calls", args.calls), ("controls", args.controls)):
        for name in filter(None, names.split(",")):
            item = items[name]
            starts, scores = window_scores(model, item, args.scores)
            activity = decode_powerset(scores)
            ref = reference_voices(starts, item.reference)
            feats, cat = frame_features(scores, activity), categories(activity, ref)
            used = activity.any(axis=1)
            print(f"{group:8s} {name}: {len(starts)} windows, {ref.shape[2]} voices, frames lost "
                  f"{(cat == 0).sum()} host {(cat == 1).sum()} single {(cat == 2).sum()}")
            for k, c in enumerate(CATEGORIES):
                for f in FEATURES:
                    values[group, c, f].append(feats[f][cat == k])
            lone = activity.sum(axis=2) == 1
            for t in THRESHOLDS:
                for w in range(len(starts)):
                    new = switched(feats["active"][w], used[w], lone[w], t, args.min_run)
                    for k, c in enumerate(CATEGORIES):
                        moved[group, c, t] += (new[cat[w] == k].sum(), (cat[w] == k).sum())
                    if not (cat[w] == 0).any():
                        opened[group, t] += (new.any(), 1)
                    if new.sum() >= args.min_active:  # the new local speaker's window embedding trains clustering
                        pure = (new & (cat[w] == 0)).sum() >= 0.8 * new.sum()
                        embeddable[group, t] += (pure, not pure, 0)
                    embeddable[group, t][2] += (cat[w] == 0).sum() >= args.min_active
    print(f"\n{'group':8s} {'category':8s} {'feature':7s} {'frames':>7s} " + " ".join(f"p{q:<5d}" for q in PERCENTILES)
          + " AUC(lost above)")
    pooled = {key: np.concatenate(parts) if parts else np.zeros(0) for key, parts in values.items()}
    pooled = {key: v[~np.isnan(v)] for key, v in pooled.items()}
    for (group, c, f), v in pooled.items():
        if len(v):
            lost = pooled[group, "lost", f]
            auc = "" if c == "lost" or not len(lost) else f" {auc_above(lost, v):6.3f}"
            print(f"{group:8s} {c:8s} {f:7s} {len(v):7d} " + " ".join(f"{x:6.3f}" for x in np.percentile(v, PERCENTILES)) + auc)
    print(f"\nlone frames in a run of >= {args.min_run} frames where a free local speaker's P(active) >= threshold"
          " (share of each category's frames; opened: windows without lost frames that would gain a local speaker)")
    print(f"{'group':8s} {'threshold':>9s} " + " ".join(f"{c:>7s}" for c in CATEGORIES) + f" {'opened':>7s}")
    for group in ("calls", "controls"):
        for t in THRESHOLDS if opened[group, THRESHOLDS[0]][1] else ():
            row = " ".join(f"{moved[group, c, t][0] / max(moved[group, c, t][1], 1):7.1%}" for c in CATEGORIES)
            e = embeddable[group, t]
            print(f"{group:8s} {t:9.2f} {row} {opened[group, t][0] / max(opened[group, t][1], 1):7.1%}"
                  f"   embeddable new: {e[0]:.0f} of the lost voice, {e[1]:.0f} other"
                  f" (windows with >= {args.min_active} lost frames: {e[2]:.0f})")


if __name__ == "__main__":
    main()
