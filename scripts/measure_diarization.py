"""Diarization accuracy on the dev set: DER (strict, paper) per file and in total, and the
speakers found, for one segmentation + embedding model pair, over a sweep of clustering
settings when asked.

Cases (``diarization_cases``): the sample call, the 7 dev-set files, and with ``--long N`` the
dev set shuffled and concatenated to N minutes (21 people). Segmentation and embeddings run
once per case and are cached in ``--cache`` (keyed by file, models and step), so sweeping
clustering settings costs seconds.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/measure_diarization.py            # defaults
    ... --segmentation ../shared/models/pyannote-seg3-int8.onnx --embedding ge2e         # before
    ... --long 25 --thresholds 0.5,0.6,0.7 --min-cluster-sizes 3,6,12                   # a sweep
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts.diarization_cases import Case, dev_set, der_parts, long_case, sample_call
from witness.diarize.config import SpeakerBounds
from witness.diarize.config import config_for
from witness.diarize.pipeline import Diarizer, WindowEmbeddings
from witness.audio import SAMPLE_RATE
from witness.diarize.segmentation import WINDOW_SAMPLES
from witness.diarize.windows import Segmentations, SlidingWindow
from witness.evaluate import diarization_error
from witness.models.diarization_choice import DiarizationModels, choose_models


DEV_NAMES = {"trn01", "trn07", "tst01", "devcall_01", "devcall_02", "devcall_03", "devcall_04"}


def _models(args) -> DiarizationModels:
    chosen = choose_models(args.embedding, args.models_dir)
    segmentation = Path(args.segmentation) if args.segmentation else chosen.segmentation
    return replace(chosen, segmentation=segmentation, vad=None)


def _cached_windows(diarizer: Diarizer, case: Case, cache: Path) -> WindowEmbeddings:
    models = diarizer.models
    key = hashlib.sha256(repr((case.name, len(case.samples), models.segmentation.name, diarizer.embedding_name,
                               diarizer.config.segmentation.window_step, diarizer.config.embed_every)
                              ).encode()).hexdigest()[:16]
    path = cache / f"{case.name}-{key}.npz"
    if path.exists():
        data = np.load(path)
        window = SlidingWindow(0.0, WINDOW_SAMPLES / SAMPLE_RATE, diarizer.config.segmentation.window_step)
        seg = Segmentations(data["activity"], window, float(data["frame_step"]), float(data["frame_size"]))
        return WindowEmbeddings(seg, data["embeddings"], {k[2:]: float(data[k]) for k in data.files if k.startswith("t_")})
    windows = diarizer.embed_windows(case.samples)
    cache.mkdir(parents=True, exist_ok=True)
    seg = windows.segmentations
    np.savez(path, activity=seg.data, embeddings=windows.embeddings, frame_step=seg.frame_step,
             frame_size=seg.frame_duration, **{"t_" + k: v for k, v in windows.timings.items()})
    return windows


def _floats(text: str | None) -> list[float | None]:
    return [None] if not text else [float(x) for x in text.split(",")]


def _settings(args, base):
    """Every clustering setting of the sweep, as ClusteringConfig variants of ``base``."""
    grid = itertools.product(_floats(args.thresholds), _floats(args.min_cluster_sizes), _floats(args.ratios))
    for threshold, size, ratio in grid:
        changes = {k: v for k, v in (("threshold", threshold), ("min_cluster_size", None if size is None else int(size)),
                                     ("min_active_ratio", ratio)) if v is not None}
        yield replace(base, **changes)


def _every(windows: WindowEmbeddings, stride: int) -> WindowEmbeddings:
    """``windows`` as if only every ``stride``-th window had been embedded."""
    if stride == 1:
        return windows
    embeddings = windows.embeddings.copy()
    embeddings[np.arange(len(embeddings)) % stride != 0] = np.nan
    return WindowEmbeddings(windows.segmentations, embeddings, windows.timings)


def report(diarizer: Diarizer, windows: dict[str, WindowEmbeddings], cases: list[Case], clustering,
           stride: int = 1) -> None:
    config = replace(diarizer.config, clustering=clustering)
    run = Diarizer(diarizer.models, config)  # sessions start lazily: clustering needs none
    totals = {"strict": [0.0, 0.0], "paper": [0.0, 0.0]}
    right, dev_files, rows = 0, 0, []
    for case in cases:
        out = run.cluster_windows(_every(windows[case.name], stride), SpeakerBounds(), case.duration)
        found = len({t.speaker for t in out.turns})
        parts = der_parts(case.reference, out.turns)
        if case.name in DEV_NAMES:  # the total is the dev set's alone
            dev_files += 1
            right += found == case.speakers
            for name in totals:
                totals[name][0] += parts[name][0]
                totals[name][1] += parts[name][1]
        strict = diarization_error(list(case.reference), list(out.turns))
        rows.append(f"{case.name:20s} {case.speakers:3d} {found:5d}  {parts['strict'][0] / parts['strict'][1]:7.1%}"
                    f" {parts['paper'][0] / parts['paper'][1]:7.1%}   {strict.missed / strict.total:6.1%}"
                    f" {strict.false_alarm / strict.total:6.1%} {strict.confusion / strict.total:6.1%}")
    print(f"\n-- threshold {clustering.threshold:g}, min cluster size {clustering.min_cluster_size}, "
          f"min active ratio {clustering.min_active_ratio:g}, linkage {clustering.linkage}, method {clustering.method}"
          + (f", every {stride}th window embedded" if stride > 1 else ""))
    print(f"{'case':20s} {'ref':>3s} {'found':>5s}  {'strict':>7s} {'paper':>7s}   (strict: missed, false alarm, confusion)")
    print("\n".join(rows))
    if dev_files:
        print(f"{'dev set total':20s} {'':3s} {right:2d}/{dev_files:<2d}  {totals['strict'][0] / totals['strict'][1]:7.1%}"
              f" {totals['paper'][0] / totals['paper'][1]:7.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedding", default="auto", help="auto, ge2e, campplus, wespeaker")
    parser.add_argument("--segmentation", help="a segmentation ONNX file (default: the run's choice)")
    parser.add_argument("--models-dir", default=None)
    parser.add_argument("--step", type=float, default=1.0, help="window step in seconds")
    parser.add_argument("--long", type=float, default=0, help="add the dev set concatenated to N minutes")
    parser.add_argument("--no-sample", action="store_true", help="leave the sample call out")
    parser.add_argument("--no-dev", action="store_true", help="leave the dev-set files out")
    parser.add_argument("--embed-every", type=int, default=1, help="embed every n-th window when caching")
    parser.add_argument("--thresholds", help="comma-separated clustering thresholds to sweep")
    parser.add_argument("--min-cluster-sizes", help="comma-separated minimum cluster sizes to sweep")
    parser.add_argument("--ratios", help="comma-separated min_active_ratio values to sweep")
    parser.add_argument("--strides", default="1", help="embed only every k-th window, e.g. 1,2,3,5")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-diarization-cache"))
    args = parser.parse_args()
    models = _models(args)
    diarizer = Diarizer(models, replace(config_for(models.embedding, args.step), embed_every=args.embed_every))
    cases = (([] if args.no_sample else [sample_call()]) + ([] if args.no_dev else dev_set())
             + ([long_case(args.long)] if args.long else []))
    print(f"segmentation {models.segmentation.name}, embedding {diarizer.embedding_name}, step {args.step:g} s")
    windows = {}
    for case in cases:
        windows[case.name] = _cached_windows(diarizer, case, args.cache)
        t = windows[case.name].timings
        print(f"  {case.name}: {case.duration:.0f} s audio, segmentation {t.get('segmentation', 0):.1f} s, "
              f"embedding {t.get('embedding', 0):.1f} s, wall {t.get('streaming', 0):.1f} s")
    for clustering in _settings(args, diarizer.config.clustering):
        for stride in map(int, args.strides.split(",")):
            report(diarizer, windows, cases, clustering, stride)


if __name__ == "__main__":
    main()
