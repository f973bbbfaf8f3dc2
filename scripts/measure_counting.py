"""Speaker counting on the tuning corpus (``make_corpus.py``) and the dev set: why speakers
merge (same- against different-speaker CAM++ centroid scores by condition), and the count,
DER and confusion of each clustering setting per condition.

Segmentation and CAM++ embeddings run once per file (the product's settings: every 5th
window embedded on files over 3 minutes) and are cached with the reference turns in
``--cache``; every setting then re-runs only clustering, reconstruction, the turn-by-turn split (it
embeds the long turns again each time) and scoring.

    PYTHONPATH=. python scripts/measure_counting.py --sets dev,tune --scores      # why they merge
    PYTHONPATH=. python scripts/measure_counting.py --sets dev,tune --thresholds 0.5,0.6
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --snorm-thresholds 4,6 --penalties 0,3
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --wideband-snorm-thresholds none,6,7
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --small-aparts none,4,5   # small clusters kept
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --write-cohort    # the shipped cohort
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --write-cohort --second   # GE2E's
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --second-weights 0,0.5,1 \
        --second-snorm-thresholds 5,7    # GE2E's s-norm added to the merge (narrowband audio)
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --methods vbx --fas 0.07 --fbs 3 \
        --plda-rows /tmp/plda-rows.npz       # VBx; each tune call with a PLDA trained without its speakers
    PYTHONPATH=. python scripts/measure_counting.py --sets check -v               # the verdict
    PYTHONPATH=. python scripts/measure_counting.py --sets dev -v --no-split      # without the split
    PYTHONPATH=. python scripts/measure_counting.py --sets tune --oracle leave    # a perfect mixed-window detector
    PYTHONPATH=. python scripts/measure_counting.py --sets tune -v --silence-biases 0,1.5 --unheard-gates 0.15,0.2
    PYTHONPATH=. python scripts/measure_counting.py --bench CALL.wav [--bench-cohort none] [--no-split]  # time, RSS
    PYTHONPATH=. python scripts/measure_counting.py --bench CALL.wav --silence-biases 0,1.5  # CPU s with/without

The count here is the diarization's (``witness diarize``). ``witness FILE`` can count fewer: its merge
joins a voice found twice (``witness/opinion.py``), so the product's verdict is the full job's
(``end_to_end.py`` then ``attribution_errors.py -v``: on the rebuilt v3 check parts 50 of 62
2-4-speaker calls against 48 here).

Sets: ``dev`` (the sample call and the 7 dev-set files), ``devlong`` (the dev set
concatenated to 20 minutes, 21 people), ``tune`` and ``check`` (the corpus parts;
``--corpus`` is its folder), ``onevoice`` (one speaker alone, cut from the check part's
2-speaker calls: ``one_voice_items``), ``onevoice-tune`` (the same from the tune part), ``muted``
and ``muted-tune`` (those calls with one party muted: ``muted_items``). Tune on ``dev``, ``tune``,
``onevoice-tune`` and ``muted-tune`` only. The turn pieces the split embeds are cached too
(``PieceCache``, ``--cache``/pieces.pkl); so are the silence-biased windows of the calls where the
bias fires (``SegmentationConfig``; ``cached_windows``), and each call's share of loud frames heard
as nobody (``--cache``/unheard.json).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import itertools
import pickle
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from scripts.counting_sets import COHORT, CORPUS, SET_NAMES, TUNING_SETS, Item, set_items
from scripts.diarization_cases import der_parts
from witness.audio import SAMPLE_RATE, load_audio
from witness.diarize import clustering as clustering_module, pipeline as pipeline_module
from witness.diarize.clustering import filter_embeddings, load_cohort, normalized
from witness.diarize.config import ClusteringConfig, SegmentationConfig, SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer, WindowEmbeddings
from witness.diarize.masks import embedding_masks
from witness.diarize.segmentation import WINDOW_SAMPLES, cut_windows, frame_db, unheard_loud, window_starts
from witness.diarize.vbx import load_plda
from witness.diarize.windows import Segmentations, SlidingWindow
from witness.evaluate import diarization_error
from witness.models.diarization_choice import choose_models
from witness.rttm import read_rttm

class PieceCache:
    """An embedder's ``embed`` whose rows are kept by their audio's digest, in memory and in
    ``path`` (``save``): the split embeds the same turn pieces for every setting scored."""

    def __init__(self, embed, path: Path):
        self.embed, self.path = embed, path
        self.vectors: dict[str, np.ndarray] = pickle.loads(path.read_bytes()) if path.exists() else {}
        self.added = 0

    def __call__(self, waveforms: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        rows = np.atleast_2d(np.asarray(waveforms, dtype=np.float32))
        keys = [hashlib.sha1(row.tobytes() + (b"" if masks is None else np.asarray(m).tobytes())).hexdigest()
                for row, m in zip(rows, rows if masks is None else masks)]
        missing = [i for i, key in enumerate(keys) if key not in self.vectors]
        if missing:
            new = self.embed(rows[missing], None if masks is None else np.asarray(masks)[missing])
            self.vectors.update({keys[i]: vector for i, vector in zip(missing, new)})
            self.added += len(missing)
        return np.stack([self.vectors[key] for key in keys])

    def save(self) -> None:
        if self.added:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.vectors))
            self.added = 0


def cached_windows(diarizer: Diarizer, item: Item, cache: Path) -> WindowEmbeddings:
    """Segmentation and embeddings of ``item``, from ``cache`` when computed before. The cache
    holds the plain decoding; where ``diarizer``'s silence bias (``SegmentationConfig``) fires on
    the call (the share of loud frames that decoding hears as nobody, ``unheard_share``), the
    biased variant (every window embedded again) is cached beside it."""
    stem = cache / item.set / f"{item.name}-{item.wav.stat().st_size}"
    config = diarizer.config.segmentation
    plain = _cached(diarizer, item, stem.with_suffix(".npz"), replace(config, silence_bias=0.0))
    if not config.silence_bias:
        return plain
    unheard = unheard_share(diarizer, item, plain, cache)
    if unheard < config.unheard_gate:
        return replace(plain, unheard=unheard)
    variant = f"-bias{config.silence_bias:g}-loud{config.loud_db:g}-floor{config.loud_floor_db:g}.npz"
    biased = _cached(diarizer, item, stem.parent / (stem.name + variant), replace(config, unheard_gate=0.0))
    return replace(biased, unheard=unheard)


def _cached(diarizer: Diarizer, item: Item, path: Path, segmentation) -> WindowEmbeddings:
    """``item``'s windows with the ``segmentation`` settings, from ``path`` when computed before."""
    window = SlidingWindow(0.0, WINDOW_SAMPLES / SAMPLE_RATE, diarizer.config.segmentation.window_step)
    if path.exists():
        data = np.load(path)
        seg = Segmentations(data["activity"], window, float(data["frame_step"]), float(data["frame_size"]))
        return WindowEmbeddings(seg, data["embeddings"], {"streaming": float(data["seconds"])})
    run = Diarizer(diarizer.models, replace(diarizer.config, segmentation=segmentation))
    windows = run.embed_windows(load_audio(item.wav).samples)
    path.parent.mkdir(parents=True, exist_ok=True)
    seg = windows.segmentations
    np.savez(path, activity=seg.data, embeddings=windows.embeddings, frame_step=seg.frame_step,
             frame_size=seg.frame_duration, seconds=windows.timings["streaming"])
    return windows


def unheard_share(diarizer: Diarizer, item: Item, plain: WindowEmbeddings, cache: Path) -> float:
    """The share of ``item``'s loud frames (``Diarizer.silence_bias``) that the ``plain``
    decoding hears as nobody, as the pipeline's first pass measures it (kept in ``cache``/unheard.json)."""
    config = diarizer.config.segmentation
    path = cache / "unheard.json"
    key = f"{item.set}/{item.name}-{item.wav.stat().st_size}/{config.loud_db:g}/{config.loud_floor_db:g}"
    known = json.loads(path.read_text()) if path.exists() else {}
    if key not in known:
        signal = load_audio(item.wav).samples
        loud_db, _ = diarizer.silence_bias(signal)
        starts = window_starts(len(signal), int(round(config.window_step * SAMPLE_RATE)))
        loud = unheard = 0
        for first in range(0, len(starts), 64):
            frames = frame_db(cut_windows(signal, starts[first:first + 64])) > loud_db
            counts = unheard_loud(plain.segmentations.data[first:first + 64] > 0, frames)
            loud, unheard = loud + counts[0], unheard + counts[1]
        known[key] = unheard / max(loud, 1)
        path.write_text(json.dumps(known, indent=0, sort_keys=True))
    return known[key]


def _reference_frames(seg: Segmentations, item: Item) -> tuple[np.ndarray, list[str]]:
    """(frames, reference speakers) float32 1 where each reference speaker talks, and their names."""
    names = sorted({t.speaker for t in item.reference})
    ref = np.zeros((seg.num_frames, len(names)), dtype=np.float32)
    for t in item.reference:
        first, last = seg.frames.closest_frame(t.start), seg.frames.closest_frame(t.end)
        ref[max(0, first):max(0, last), names.index(t.speaker)] = 1
    return ref, names


def _reference_votes(windows: WindowEmbeddings, item: Item):
    """The training set; per training embedding its lone frames' votes (n, reference speakers):
    how many of them each reference speaker talks in, and (n,) how many lone frames it has;
    also the speakers' names."""
    seg = windows.segmentations
    train = filter_embeddings(windows.embeddings, seg)
    ref, names = _reference_frames(seg, item)
    data = np.nan_to_num(seg.data)
    alone = data.sum(axis=2) == 1
    votes = np.zeros((len(train.chunk_idx), len(names)), dtype=np.float32)
    lone = np.zeros(len(train.chunk_idx), dtype=np.int64)
    for i, (c, s) in enumerate(zip(train.chunk_idx, train.speaker_idx)):
        first = seg.chunk_start_frame(int(c))
        mine = (data[c, :, s] > 0) & alone[c]
        votes[i], lone[i] = ref[first:first + len(mine)][mine[:len(ref) - first]].sum(axis=0), mine.sum()
    return train, votes, lone, names


def reference_labels(windows: WindowEmbeddings, item: Item, min_purity: float = 0.8):
    """The training embeddings (n, dim) and the reference speaker of each (n,) int, -1 where
    under ``min_purity`` of the local speaker's lone frames belong to one reference speaker;
    also the chunk of each and the reference speaker names."""
    train, votes, lone, names = _reference_votes(windows, item)
    pure = (votes.sum(axis=1) > 0) & (votes.max(axis=1, initial=0) >= min_purity * lone)
    labels = np.where(pure, np.argmax(votes, axis=1) if len(names) else 0, -1).astype(np.int64)
    return train.embeddings, labels, train.chunk_idx, names


def reference_mixed(windows: WindowEmbeddings, item: Item, min_purity: float = 0.8) -> np.ndarray:
    """(chunks, local speakers) bool: the training embeddings whose lone frames are under
    ``min_purity`` one reference speaker where any talks (what a perfect detector of mixed
    embeddings flags)."""
    train, votes, _, _ = _reference_votes(windows, item)
    mixed = np.zeros(windows.segmentations.data.shape[::2], dtype=bool)
    flagged = (votes.sum(axis=1) > 0) & (votes.max(axis=1, initial=0) < min_purity * votes.sum(axis=1))
    mixed[train.chunk_idx[flagged], train.speaker_idx[flagged]] = True
    return mixed


def reference_split(diarizer: Diarizer, windows: WindowEmbeddings, item: Item, signal: np.ndarray,
                    min_frames: int = 30) -> WindowEmbeddings:
    """``windows`` with each ``reference_mixed`` local speaker cut in two by the reference (a
    perfect splitter): its frames where only its second reference speaker talks become an
    extra local speaker (local speakers 3-5), when both parts keep ``min_frames``; both parts
    are embedded again as the pipeline embeds windows."""
    seg = windows.segmentations
    chunks, frames, local = seg.data.shape
    ref, _ = _reference_frames(seg, item)
    ref = np.concatenate([ref, np.zeros((frames, ref.shape[1]), dtype=np.float32)])
    data = np.concatenate([np.nan_to_num(seg.data), np.zeros_like(seg.data)], axis=2)
    embeddings = np.concatenate([windows.embeddings, np.full_like(windows.embeddings, np.nan)], axis=1)
    changed = []
    for c, s in zip(*np.nonzero(reference_mixed(windows, item))):
        active = data[c, :, s] > 0
        heard = ref[seg.chunk_start_frame(int(c)):][:frames]
        if heard.shape[1] < 2:
            continue
        first, second = np.argsort(-heard[active].sum(axis=0))[:2]
        part = active & (heard[:, second] > 0) & (heard[:, first] == 0)
        if part.sum() >= min_frames and (active & ~part).sum() >= min_frames:
            data[c, :, s], data[c, :, local + s] = active & ~part, part
            changed += [(c, s), (c, local + s)]
    if changed:
        min_clean = frames * diarizer.embedder.min_clean_seconds * SAMPLE_RATE / WINDOW_SAMPLES
        masks, _ = embedding_masks(data, min_clean)
        starts = window_starts(len(signal), int(round(diarizer.config.segmentation.window_step * SAMPLE_RATE)))
        rows, speakers = (np.array(x) for x in zip(*changed))
        for at in range(0, len(rows), 32):
            r, s = rows[at:at + 32], speakers[at:at + 32]
            embeddings[r, s] = diarizer.embedder.embed(cut_windows(signal, starts[r]), masks[r, s])
    return WindowEmbeddings(Segmentations(data, seg.window, seg.frame_step, seg.frame_duration),
                            embeddings, windows.timings)


def centroid_scores(embeddings: np.ndarray, labels: np.ndarray) -> tuple[list[float], list[float]]:
    """Same-speaker scores (cosine between the centroids of each speaker's first and second
    half of embeddings in time) and different-speaker scores (between speakers' centroids)."""
    same, centroids = [], []
    for k in range(labels.max(initial=-1) + 1):
        own = normalized(embeddings[labels == k])
        if len(own) < 4:
            continue
        half = len(own) // 2
        same.append(float(normalized(own[:half].mean(0)) @ normalized(own[half:].mean(0))))
        centroids.append(normalized(own.mean(0)))
    different = [float(a @ b) for i, a in enumerate(centroids) for b in centroids[i + 1:]]
    return same, different


def condition_keys(item: Item) -> dict[str, str]:
    snr = "clean" if item.snr is None else ("<=10dB" if item.snr <= 10 else ("<=20dB" if item.snr <= 20 else ">20dB"))
    n = item.speakers
    length = "<2min" if item.duration < 120 else ("<10min" if item.duration < 600 else ">=10min")
    return {"band": item.band, "snr": snr, "speakers": str(n) if n <= 4 else ("5-6" if n <= 6 else "7+"),
            "length": length, "set": item.set}


def print_scores(diarizer: Diarizer, items: list[Item], cache: Path) -> None:
    """Same- and different-speaker centroid cosine by condition."""
    groups: dict[tuple[str, str], tuple[list, list, list]] = defaultdict(lambda: ([], [], []))
    for item in items:
        embeddings, labels, _, _ = reference_labels(cached_windows(diarizer, item, cache), item)
        same, different = centroid_scores(embeddings, labels)
        margin = (min(same) - max(different)) if same and different else None
        for key, value in condition_keys(item).items():
            s, d, m = groups[(key, value)]
            s += same
            d += different
            m += [] if margin is None else [margin]
    print(f"{'condition':22s} {'same: n':>7s} {'mean':>5s} {'p10':>5s}   {'diff: n':>7s} {'mean':>5s} {'p90':>5s}"
          f"   {'files: min same - max diff < 0':>30s}")
    for (key, value), (s, d, m) in sorted(groups.items()):
        q = lambda xs, p: np.percentile(xs, p) if xs else float("nan")  # noqa: E731
        print(f"{key + '=' + value:22s} {len(s):7d} {np.mean(s) if s else np.nan:5.2f} {q(s, 10):5.2f}   "
              f"{len(d):7d} {np.mean(d) if d else np.nan:5.2f} {q(d, 90):5.2f}   "
              f"{sum(x < 0 for x in m):>22d} of {len(m)}")


def cohort_rows(diarizer: Diarizer, items: list[Item], cache: Path, group: int, second: bool = False):
    """Cohort rows (m, dim) float32: unit centroids of about ``group`` consecutive embeddings
    of one reference speaker in one call, and (call, speaker) per row; with ``second``, of the
    second model's (GE2E) rows of the same embeddings (``with_second``)."""
    rows, sources = [], []
    for item in items:
        windows = cached_windows(diarizer, item, cache)
        embeddings, labels, _, names = reference_labels(windows, item)
        if second:
            train = filter_embeddings(windows.embeddings, windows.segmentations)
            embeddings = clustering_module.second_rows(with_second(diarizer, item, windows, cache).second, train)
        for row, name in speaker_groups(embeddings, labels, names, group):
            rows.append(row)
            sources.append((item.name, name))
    return np.stack(rows), sources


def with_second(diarizer: Diarizer, item: Item, windows: WindowEmbeddings, cache: Path) -> WindowEmbeddings:
    """``windows`` with the second model's (GE2E) rows of its training embeddings
    (``Diarizer.second_embeddings``), cached in ``cache``/ge2e in training order."""
    clustering = diarizer.config.clustering
    train = filter_embeddings(windows.embeddings, windows.segmentations, clustering.min_active_ratio)
    path = cache / "ge2e" / item.set / f"{item.name}-{item.wav.stat().st_size}.npy"
    if not path.exists():
        second = diarizer.second_embeddings(windows, load_audio(item.wav).samples, clustering)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, second[train.chunk_idx, train.speaker_idx])
    rows = np.load(path)
    second = np.full(windows.embeddings.shape[:2] + rows.shape[1:], np.nan, dtype=np.float32)
    second[train.chunk_idx, train.speaker_idx] = rows
    return replace(windows, second=second)


def speaker_groups(embeddings: np.ndarray, labels: np.ndarray, names: list[str], group: int):
    """(unit centroid float32, speaker name) of each run of about ``group`` consecutive
    ``embeddings`` of one reference speaker (``labels`` indexing ``names``, -1 unclear)."""
    for k, name in enumerate(names):
        own = normalized(embeddings[labels == k])
        if len(own) < group // 2:
            continue
        for part in np.array_split(own, max(1, len(own) // group)):
            yield normalized(part.mean(0)).astype(np.float32), name


def write_cohort(diarizer: Diarizer, items: list[Item], cache: Path, corpus: Path, group: int,
                 second: bool = False) -> None:
    """The shipped cohort (witness/diarize/data/campplus_cohort.npy, with ``second``
    ge2e_cohort.npy: the second model's rows, ``cohort_rows``) and its provenance."""
    rows, sources = cohort_rows(diarizer, items, cache, group, second)
    name, model = ("ge2e_cohort", "Resemblyzer GE2E") if second else ("campplus_cohort", "CAM++")
    again = ("; each training embedding embedded again by GE2E from the same window audio and frame mask "
             "(pipeline.Diarizer.second_embeddings)") if second else ""
    COHORT.mkdir(parents=True, exist_ok=True)
    np.save(COHORT / f"{name}.npy", rows.astype(np.float16))
    index = json.loads((corpus / "index.json").read_text())
    provenance = {
        "what": f"{model} cohort for adaptive s-norm of cluster centroid scores (witness.diarize.clustering)",
        "made_by": f"scripts/measure_counting.py --sets tune --write-cohort{' --second' if second else ''} "
                   f"--group {group}",
        "corpus": {"version": index.get("version"), "seed": index.get("seed"), "part": "tune",
                   "generator": "scripts/make_corpus.py", "speakers": index["parts"]["tune"]},
        "method": (f"segmentation-3.0 (fp32) + CAM++ window embeddings as the pipeline computes them"
                   f"{again}; "
                   f"training embeddings (clustering.filter_embeddings) whose lone frames are >= 80% one "
                   f"reference speaker; one row per {group} consecutive embeddings of a speaker in a call "
                   f"(unit mean), stored float16"),
        "speech_licence": "LibriSpeech (CC BY 4.0), via resemble-ai/Resemblyzer; per utterance in each call's .json",
        "rows": [list(s) for s in sources],
    }
    (COHORT / f"{name}.json").write_text(json.dumps(provenance, indent=1) + "\n")
    print(f"cohort: {len(rows)} rows from {len(set(sources))} (call, speaker) pairs in {len(items)} calls")


@dataclass
class Tally:
    """Counts right and DER parts (error, total seconds) of one group of files."""

    files: int = 0
    right: int = 0
    under: int = 0
    over: int = 0
    error: float = 0.0
    confusion: float = 0.0
    total: float = 0.0

    def add(self, found: int, true: int, error: float, confusion: float, total: float) -> None:
        self.files += 1
        self.right += found == true
        self.under += found < true
        self.over += found > true
        self.error += error
        self.confusion += confusion
        self.total += total

    def line(self) -> str:
        return (f"{self.right:3d}/{self.files:<3d} (under {self.under}, over {self.over})  DER {self.error / self.total:6.1%}"
                f"  confusion {self.confusion / self.total:6.1%}")


@contextmanager
def _plda_without(item: Item, clustering: ClusteringConfig, rows: Path | None, dims: int = 128):
    """While open, VBx's PLDA is trained anew without ``item``'s own speakers, from the
    rows ``train_plda.py --save-rows`` wrote (a tuning call's speakers trained the shipped one)."""
    if rows is None or not clustering.plda or item.set not in TUNING_SETS:
        yield
        return
    from scripts.train_plda import train_plda

    own = frozenset(t.speaker for t in item.reference)
    if own not in _PLDAS:
        data = np.load(rows)
        keep = ~np.isin([c.rsplit("/", 1)[1] for c in data["classes"]], list(own))
        _PLDAS[own] = train_plda(data["embeddings"][keep], data["classes"][keep], dims)
    clustering_module.load_plda = lambda name: _PLDAS[own]
    try:
        yield
    finally:
        clustering_module.load_plda = load_plda


_PLDAS: dict = {}


@contextmanager
def _cohort_without(item: Item, *cohorts: str):
    """While open, the ``cohorts`` lack the rows of ``item``'s own speakers (a tuning call's
    speakers are in the cohort; a check call's never are)."""
    if item.set not in TUNING_SETS or not any(cohorts):
        yield
        return
    own = {t.speaker for t in item.reference}
    kept = {}
    for cohort in filter(None, cohorts):
        rows = json.loads((COHORT / cohort).with_suffix(".json").read_text())["rows"]
        kept[cohort] = load_cohort(cohort)[[i for i, (_, speaker) in enumerate(rows) if speaker not in own]]
    clustering_module.load_cohort = lambda name: kept[name] if name in kept else load_cohort(name)
    try:
        yield
    finally:
        clustering_module.load_cohort = load_cohort


@contextmanager
def _oracle_unmixing(windows: WindowEmbeddings, item: Item):
    """While open, the unmixing step leaves out exactly the ``reference_mixed`` embeddings."""
    found = pipeline_module.mixed_windows
    pipeline_module.mixed_windows = lambda *args, **kwargs: reference_mixed(windows, item)
    try:
        yield
    finally:
        pipeline_module.mixed_windows = found


def eigengap_count(embeddings: np.ndarray, keep: float = 0.3, most: int = 12) -> int:
    """Speakers by the largest eigengap of the pruned cosine affinity's normalised Laplacian
    (3D-Speaker's spectral recipe: each row keeps its ``keep`` share of highest scores)."""
    x = normalized(embeddings)
    n = len(x)
    if n < 4:
        return 1
    affinity = x @ x.T
    cut = np.sort(affinity, axis=1)[:, -max(1, int(keep * n))][:, None]
    affinity = np.where(affinity >= cut, affinity, 0.0)
    affinity = np.clip(0.5 * (affinity + affinity.T), 0, None)
    degree = affinity.sum(axis=1)
    laplacian = np.diag(degree) - affinity
    values = np.sort(np.linalg.eigvalsh(laplacian / np.sqrt(np.outer(degree, degree))))
    gaps = np.diff(values[:min(most, n - 1) + 1])
    return int(np.argmax(gaps)) + 1


def silhouette_count(embeddings: np.ndarray, threshold: float, floor: float = 0.1, most: int = 12) -> int:
    """Speakers by the dendrogram cut (2..``most`` clusters) with the best cosine silhouette;
    1 when none reaches ``floor``."""
    from scipy.cluster.hierarchy import fcluster
    from witness.diarize.clustering import _dendrogram

    x = normalized(embeddings)
    n = len(x)
    if n < 4:
        return 1
    dendrogram = _dendrogram(x, "centroid")
    distance = 1 - x @ x.T
    best, best_k = floor, 1
    for k in range(2, min(most, n - 1) + 1):
        labels = fcluster(dendrogram, k, criterion="maxclust")
        if labels.max() < 2:
            continue
        same = labels[:, None] == labels[None, :]
        a = np.array([distance[i, same[i]].sum() / max(same[i].sum() - 1, 1) for i in range(n)])
        b = np.array([min(distance[i, labels == m].mean() for m in set(labels.tolist()) - {labels[i]})
                      for i in range(n)])
        value = float(np.mean((b - a) / np.maximum(a, b)))
        if value > best:
            best, best_k = value, int(labels.max())
    return best_k


COUNTERS = {"eigengap": lambda emb, clustering: eigengap_count(emb),
            "silhouette": lambda emb, clustering: silhouette_count(emb, clustering.threshold)}


def score(diarizer: Diarizer, items: list[Item], cache: Path, clustering, label: str, verbose: bool,
          counter: str | None = None, oracle: str | None = None, plda_rows: Path | None = None,
          dump: Path | None = None) -> None:
    """Count and strict DER of ``clustering`` per file (verbose), per condition and per set
    (with ``dump``, one JSON line per file is appended there);
    with ``counter`` (``COUNTERS``), the count it estimates is forced on the clustering; with
    ``oracle`` "leave" the unmixing leaves out exactly the truly mixed embeddings, with "split"
    they are cut in two by the reference (``reference_split``) before clustering."""
    run = Diarizer(diarizer.models, replace(diarizer.config, clustering=clustering))
    run.embedder.embed = pieces = PieceCache(run.embedder.embed, cache / "pieces.pkl")
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    began = time.perf_counter()
    for item in items:
        windows = cached_windows(diarizer, item, cache)
        bounds = SpeakerBounds()
        if counter:
            train = filter_embeddings(windows.embeddings, windows.segmentations, clustering.min_active_ratio)
            bounds = SpeakerBounds(num_speakers=COUNTERS[counter](train.embeddings, clustering))
        signal = load_audio(item.wav).samples if run.config.split or oracle == "split" else None
        if oracle == "split":
            windows = reference_split(run, windows, item, signal)
        if clustering.second_weight > 0:
            windows = with_second(run, item, windows, cache)
        with _cohort_without(item, clustering.cohort, clustering.second_cohort), \
                _plda_without(item, clustering, plda_rows), (
                _oracle_unmixing(windows, item) if oracle == "leave" else contextlib.nullcontext()):
            out = run.cluster_windows(windows, bounds, item.duration, signal=signal if run.config.split else None)
        found = len({t.speaker for t in out.turns})
        error, total = der_parts(item.reference, out.turns)["strict"]
        confusion = diarization_error(list(item.reference), list(out.turns)).confusion
        if dump:
            with dump.open("a") as f:
                f.write(json.dumps({"label": label, "wav": str(item.wav), "set": item.set, "name": item.name, "duration": item.duration,
                                    "speakers": item.speakers, "found": found, "clustering_found": out.found,
                                    "embeddings": len(filter_embeddings(windows.embeddings, windows.segmentations,
                                                                        clustering.min_active_ratio).chunk_idx),
                                    "error": error, "confusion": confusion, "total": total}) + "\n")
        pieces.save()
        if verbose:
            print(f"  {item.set:5s} {item.name:24s} {item.band:9s} {str(item.snr):5s} {item.duration:6.0f}s "
                  f"{item.speakers:2d} -> {found:2d}  DER {error / total:6.1%}")
        for key, value in condition_keys(item).items():
            tallies[(key, value)].add(found, item.speakers, error, confusion, total)
        tallies[("all", item.set)].add(found, item.speakers, error, confusion, total)
    print(f"\n-- {label} ({time.perf_counter() - began:.1f} s)")
    for (key, value), tally in sorted(tallies.items()):
        print(f"  {key + '=' + value:22s} {tally.line()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="dev", help=f"comma-separated: {', '.join(SET_NAMES)}")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--scores", action="store_true", help="same/different-speaker scores by condition")
    parser.add_argument("--thresholds", help="comma-separated AHC thresholds")
    parser.add_argument("--cohorts", help="comma-separated cohort files ('none': no s-norm merge)")
    parser.add_argument("--snorm-thresholds", help="comma-separated s-norm merge thresholds")
    parser.add_argument("--tops", help="comma-separated cohort top-N sizes")
    parser.add_argument("--penalties", help="comma-separated cannot-link penalties (0: none)")
    parser.add_argument("--wideband-snorm-thresholds", help="comma-separated s-norm cuts on wideband audio "
                                                            "('none': the one cut on every band)")
    parser.add_argument("--small-aparts", help="comma-separated ClusteringConfig.small_apart ('none': off)")
    parser.add_argument("--counters", help="comma-separated count checks forced on AHC: eigengap, silhouette")
    parser.add_argument("--methods", help="comma-separated clustering methods: ahc, vbx")
    parser.add_argument("--plda", default="campplus_plda.npz", help="with vbx: the PLDA in witness/diarize/data")
    parser.add_argument("--plda-rows", type=Path, help="with vbx: train_plda.py --save-rows output, to train each "
                                                       "tune call's PLDA without its speakers")
    parser.add_argument("--vbx-thresholds", help="comma-separated AHC cuts that start VBx")
    parser.add_argument("--vbx-inits", help="comma-separated fewest clusters that start VBx")
    parser.add_argument("--fas", help="comma-separated VBx Fa")
    parser.add_argument("--fbs", help="comma-separated VBx Fb")
    parser.add_argument("--second-weights", help="comma-separated weights of GE2E's s-norm added to CAM++'s in "
                                                 "the merge on narrowband audio (0: off; cohort ge2e_cohort.npy)")
    parser.add_argument("--second-snorm-thresholds", help="comma-separated merge cuts with GE2E's score added "
                                                          "('none': snorm_threshold)")
    parser.add_argument("--write-cohort", action="store_true", help="build the cohort from these sets (tune!)")
    parser.add_argument("--second", action="store_true", help="with --write-cohort: GE2E's cohort")
    parser.add_argument("--group", type=int, default=8, help="embeddings per cohort row")
    parser.add_argument("--bench", type=Path, help="time one whole diarization of this .wav (beside its .rttm)")
    parser.add_argument("--bench-cohort", default="", help="with --bench: 'none' runs the rule before (AHC at 0.7 alone)")
    parser.add_argument("--no-split", action="store_true", help="without the turn-by-turn split (the rule before)")
    parser.add_argument("--mixed-cosines", help="comma-separated split.mixed_cosine values ('none': mixed window "
                                                "embeddings not looked for)")
    parser.add_argument("--split", action="append", help="FIELD=V1,V2: values of a SplitConfig field to score ('none': None) "
                                                          "(repeat for more fields)")
    parser.add_argument("--oracle", choices=("leave", "split"), help="the truly mixed window embeddings (reference "
                        "turns) left out by the unmixing, or cut in two by the reference and embedded again")
    parser.add_argument("--silence-biases", help="comma-separated SegmentationConfig.silence_bias values (0: off)")
    parser.add_argument("--unheard-gates", help="comma-separated SegmentationConfig.unheard_gate values")
    parser.add_argument("--dump", type=Path, help="append one JSON line per file and setting to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per file")
    args = parser.parse_args()
    if args.bench:
        return bench(args.bench, args.bench_cohort, not args.no_split, _segmentation_grid(args, SegmentationConfig()))
    models = choose_models("campplus")
    config = config_for(models.embedding)
    diarizer = Diarizer(replace(models, vad=None), replace(config, split=None) if args.no_split else config)
    items = [item for name in args.sets.split(",") for item in set_items(name, args.corpus, args.cache)]
    for item in items:
        cached_windows(diarizer, item, args.cache)
    if args.write_cohort:
        write_cohort(diarizer, items, args.cache, args.corpus, args.group, args.second)
        return
    if args.scores:
        print_scores(diarizer, items, args.cache)
    for segmentation, split in itertools.product(_segmentation_grid(args, diarizer.config.segmentation),
                                                 _split_grid(args, diarizer.config.split)):
        run = Diarizer(diarizer.models, replace(diarizer.config, segmentation=segmentation, split=split))
        for clustering in _grid(args, diarizer.config.clustering):
            label = ", ".join(f"{k} {getattr(clustering, k)}" for k in (
                ("method", "vbx_threshold", "vbx_init_clusters", "fa", "fb") if clustering.method == "vbx" else
                ("threshold", "cohort", "cohort_top", "snorm_threshold", "wideband_snorm_threshold",
                 "cannot_link_penalty", "small_apart") + (("second_weight", "second_snorm_threshold")
                                                          if clustering.second_weight else ())))
            label += (f", mixed_cosine {split.mixed_cosine}"
                      + "".join(f", {f.split('=')[0]} {getattr(split, f.split('=')[0])}" for f in args.split or [])
                      if split else ", no split")
            if args.silence_biases or args.unheard_gates:
                label += f", silence_bias {segmentation.silence_bias:g}, unheard_gate {segmentation.unheard_gate:g}"
            for counter in args.counters.split(",") if args.counters else [None]:
                named = (label + (f", count by {counter}" if counter else "")
                         + (f", oracle {args.oracle}" if args.oracle else ""))
                score(run, items, args.cache, clustering, named, args.verbose, counter, args.oracle, args.plda_rows,
                      args.dump)


def bench(wav: Path, cohort: str, split: bool = True, segmentations=(SegmentationConfig(),)) -> None:
    """Whole diarizations of ``wav`` in this process, one per ``segmentations`` setting (timed
    in wall and this process's CPU seconds; ``ru_maxrss`` is the peak of them all), with the
    shipped clustering or, with ``cohort`` "none", the rule before it (AHC at 0.7 alone);
    without the turn-by-turn split when ``split`` is False."""
    import resource

    models = choose_models("campplus")
    config = config_for(models.embedding)
    if cohort == "none":
        config = replace(config, clustering=ClusteringConfig())
    if not split:
        config = replace(config, split=None)
    samples = load_audio(wav).samples
    (turns,) = read_rttm(wav.with_suffix(".rttm")).values()
    for segmentation in segmentations:
        cpu = time.process_time()
        out = Diarizer(replace(models, vad=None), replace(config, segmentation=segmentation)).run(samples)
        cpu, seconds = time.process_time() - cpu, out.timings["total"]
        error, total = der_parts(turns, out.turns)["strict"]
        print(f"{wav.stem} cohort={cohort or 'shipped'} split={split} silence_bias={segmentation.silence_bias:g} "
              f"unheard_gate={segmentation.unheard_gate:g}: {out.num_speakers} speakers "
              f"(true {len({t.speaker for t in turns})}), DER {error / total:.1%}, diarization {seconds:.1f} s "
              f"(RTF {seconds / (len(samples) / SAMPLE_RATE):.4f}, CPU {cpu:.1f} s, "
              f"clustering {out.timings['clustering']:.2f} s, splitting {out.timings.get('splitting', 0.0):.2f} s), "
              f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def _segmentation_grid(args, base):
    """Every segmentation setting asked for (``--silence-biases``, ``--unheard-gates``), as variants of ``base``."""
    biases = [float(x) for x in args.silence_biases.split(",")] if args.silence_biases else [base.silence_bias]
    gates = [float(x) for x in args.unheard_gates.split(",")] if args.unheard_gates else [base.unheard_gate]
    for bias, gate in itertools.product(biases, gates):
        yield replace(base, silence_bias=bias, unheard_gate=gate)


def _split_grid(args, base):
    """Every split setting asked for (``--mixed-cosines``, each ``--split FIELD=V1,V2``), as variants of ``base`` (None: no split, and nothing to vary)."""
    def values(text):
        return [None] if not text else [("off" if x == "none" else float(x)) for x in text.split(",")]

    if base is None:
        yield None
        return
    fields = dict(field.split("=", 1) for field in args.split or [])
    kinds = {name: type(getattr(base, name)) for name in fields}
    for mixed, *chosen in itertools.product(values(args.mixed_cosines),
                                            *([None if x == "none" else kinds[name](x) for x in text.split(",")]
                                              for name, text in fields.items())):
        changes = {} if mixed is None else {"mixed_cosine": None if mixed == "off" else mixed}
        yield replace(base, **changes, **dict(zip(fields, chosen)))


def _grid(args, base):
    """Every clustering setting asked for, as variants of ``base``."""
    def values(text, kind):
        return [None] if not text else [kind(x) for x in text.split(",")]
    for (threshold, cohort, snorm, wide, top, penalty, method, cut, init, fa, fb, weight, fused,
         apart) in itertools.product(
            values(args.thresholds, float), values(args.cohorts, str), values(args.snorm_thresholds, float),
            values(args.wideband_snorm_thresholds, str), values(args.tops, int), values(args.penalties, float),
            values(args.methods, str),
            values(args.vbx_thresholds, float), values(args.vbx_inits, int), values(args.fas, float),
            values(args.fbs, float), values(args.second_weights, float), values(args.second_snorm_thresholds, str),
            values(args.small_aparts, str)):
        changes = {"threshold": threshold, "cohort": "" if cohort == "none" else cohort,
                   "snorm_threshold": snorm, "cohort_top": top, "cannot_link_penalty": penalty, "method": method,
                   "plda": args.plda if method == "vbx" else None, "vbx_threshold": cut,
                   "vbx_init_clusters": init, "fa": fa, "fb": fb}
        clustering = replace(base, **{k: v for k, v in changes.items() if v is not None})
        if wide is not None:
            clustering = replace(clustering, wideband_snorm_threshold=None if wide == "none" else float(wide))
        if weight is not None:
            clustering = replace(clustering, second_weight=weight,
                                 second_cohort=clustering.second_cohort or "ge2e_cohort.npy")
        if fused is not None:
            clustering = replace(clustering, second_snorm_threshold=None if fused == "none" else float(fused))
        if apart is not None:
            clustering = replace(clustering, small_apart=None if apart == "none" else float(apart))
        yield clustering


if __name__ == "__main__":
    main()
