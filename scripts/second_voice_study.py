"""How the second voice check (``witness.diarize.second_voice``) tells a 2-speaker call that
clustering heard as one voice from one voice alone: for each file the pipeline without the
check finds one speaker in, the cosine between the centroids of the two groups of its long
turns (spherical 2-means of their CAM++ pieces), by CAM++ and by GE2E, and which files each
model alone and both together would split.

    PYTHONPATH=. python scripts/measure_counting.py --sets tune,muted-tune --cache DIR   # caches first
    PYTHONPATH=. python scripts/second_voice_study.py --sets tune,onevoice-tune,muted-tune --cache DIR

Sets and cache as in ``measure_counting.py``; tune on ``tune``, ``onevoice-tune``, ``muted-tune``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts.counting_sets import CORPUS, corpus_items, dev_items, muted_items, one_voice_items
from scripts.measure_counting import PieceCache, _cohort_without, cached_windows
from witness.audio import load_audio
from witness.diarize.clustering import normalized
from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.diarize.second_voice import CAM_COSINE, GE2E_COSINE, MIN_TURNS, centroid_cosine, two_means
from witness.diarize.split import embedded_turns, middle
from witness.diarize.features import SAMPLE_RATE
from witness.models.diarization_choice import choose_models


def items_of(name: str, corpus: Path, cache: Path):
    return (dev_items() if name == "dev" else one_voice_items(corpus, "check", cache) if name == "onevoice"
            else one_voice_items(corpus, "tune", cache) if name == "onevoice-tune"
            else muted_items(corpus, "check" if name == "muted" else "tune", cache) if name.startswith("muted")
            else corpus_items(corpus, name))


def cosines(diarizer: Diarizer, ge2e, item, cache: Path) -> tuple[int, float, float] | None:
    """(long turns, CAM++ cosine, GE2E cosine) of the two groups of the one speaker found in
    ``item`` without the check; None when more (or none) are found or the groups are too small."""
    windows = cached_windows(diarizer, item, cache)
    signal = load_audio(item.wav).samples
    with _cohort_without(item, diarizer.config.clustering.cohort):
        out = diarizer.cluster_windows(windows, SpeakerBounds(), item.duration, signal=signal)
    if len({t.speaker for t in out.turns}) != 1:
        return None
    config = diarizer.config.split
    long, normed = embedded_turns(out.exclusive_turns, signal, diarizer.embedder.embed, config)
    if len(long) < 2 * MIN_TURNS:
        return len(long), np.nan, np.nan
    labels = two_means(normed)
    if np.bincount(labels, minlength=2).min() < MIN_TURNS:
        return len(long), np.nan, np.nan
    pieces = [middle(t, config.turn_seconds) for t in long]
    again = np.stack([ge2e.embed(signal[None, int(a * SAMPLE_RATE):int(b * SAMPLE_RATE)])[0] for a, b in pieces])
    ok = np.isfinite(again).all(axis=1) & (np.abs(again).sum(axis=1) > 0)
    ge = centroid_cosine(normalized(again[ok]), labels[ok]) if np.bincount(labels[ok], minlength=2).min() >= MIN_TURNS else np.nan
    return len(long), centroid_cosine(normed, labels), ge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="tune,onevoice-tune,muted-tune")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--cam", type=float, default=CAM_COSINE)
    parser.add_argument("--ge2e", type=float, default=GE2E_COSINE)
    args = parser.parse_args()
    models = replace(choose_models("campplus"), vad=None)
    diarizer = Diarizer(replace(models, second=None), config_for("campplus"))
    diarizer.embedder.embed = pieces = PieceCache(diarizer.embedder.embed, args.cache / "pieces.pkl")
    ge2e = Diarizer(models).second
    splits = {"CAM++ alone": lambda c, g: c < args.cam, "GE2E alone": lambda c, g: g < args.ge2e,
              "both": lambda c, g: c < args.cam and g < args.ge2e}
    for name in args.sets.split(","):
        found_one, by = {"voices": 0, "one": 0}, {rule: {"voices": [], "one": []} for rule in splits}
        for item in items_of(name, args.corpus, args.cache):
            got = cosines(diarizer, ge2e, item, args.cache)
            pieces.save()
            if got is None:
                continue
            kind = "voices" if item.speakers >= 2 else "one"
            found_one[kind] += 1
            turns, cam, ge = got
            print(f"  {name:14s} {item.name:12s} {item.speakers} speakers, {turns:3d} long turns: "
                  f"CAM++ {cam:.3f}, GE2E {ge:.3f}")
            for rule, split in splits.items():
                if split(cam, ge):
                    by[rule][kind].append(item.name)
        print(f"{name}: found as one {found_one['voices']} with 2+ speakers, {found_one['one']} with one")
        for rule, hits in by.items():
            print(f"  {rule:12s} splits {len(hits['voices'])} with 2+ ({' '.join(hits['voices'])}), "
                  f"{len(hits['one'])} with one ({' '.join(hits['one'])})")


if __name__ == "__main__":
    main()
