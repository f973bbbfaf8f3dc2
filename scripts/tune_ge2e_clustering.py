"""Sweep GE2E clustering settings (linkage, threshold, min_active_ratio) over every case.

Cases: the scored cases of ``diarization_cases`` plus the sample call tiled to 3 and 10
minutes (many embeddings, exact repeats: a stress test for small spurious clusters).
Segmentation and embeddings run once per case and GE2E variant; only clustering and
reconstruction are repeated per setting. Prints, per setting, "speakers found / strict DER"
per case.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/tune_ge2e_clustering.py
    ... --linkages average --thresholds 0.12,0.16,0.2 --ratios 0.2
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from scripts.diarization_cases import MODELS, cases, ders, sample_call, tiled
from witness.diarize.clustering import SpeakerBounds
from witness.diarize.config import config_for
from witness.diarize.pipeline import Diarizer
from witness.models.diarization_choice import choose_models


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="pooled,window")
    parser.add_argument("--linkages", default="centroid")
    parser.add_argument("--thresholds", default="0.36,0.40,0.42,0.44,0.46,0.48,0.50,0.52,0.56")
    parser.add_argument("--ratios", default="0.2,0.4", help="min_active_ratio values")
    args = parser.parse_args()
    models = choose_models("ge2e", MODELS)
    all_cases = cases() + [tiled(sample_call(), 3), tiled(sample_call(), 10)]
    for variant in args.variants.split(","):
        windows = {c.name: Diarizer(models, ge2e_variant=variant).embed_windows(c.samples) for c in all_cases}
        print(f"\n== GE2E {variant}: " + "  ".join(f"{c.name} ({c.speakers})" for c in all_cases))
        for linkage in args.linkages.split(","):
            for ratio in _floats(args.ratios):
                for threshold in _floats(args.thresholds):
                    config = config_for("ge2e", threshold=threshold)
                    clustering = replace(config.clustering, linkage=linkage, min_active_ratio=ratio)
                    diarizer = Diarizer(models, replace(config, clustering=clustering), ge2e_variant=variant)
                    row = []
                    for c in all_cases:
                        out = diarizer.cluster_windows(windows[c.name], SpeakerBounds(), c.duration)
                        speakers = len({t.speaker for t in out.turns})
                        row.append(f"{speakers}/{ders(c.reference, out.turns)['strict']:5.1%}")
                    print(f"{linkage:8s} ratio {ratio:.2f} t={threshold:.2f}  " + "  ".join(row))


if __name__ == "__main__":
    main()
