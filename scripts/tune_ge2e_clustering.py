"""Sweep GE2E clustering settings (linkage, threshold) over every scored case.

Segmentation and embeddings run once per case and GE2E variant; only clustering and
reconstruction are repeated per setting. Prints, per setting, the speakers found and the
strict DER on each case.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/tune_ge2e_clustering.py
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np

from scripts.diarization_cases import MODELS, cases, ders
from witness.diarize.clustering import SpeakerBounds
from witness.diarize.config import config_for
from witness.diarize.pipeline import Diarizer
from witness.models.diarization_choice import choose_models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="pooled,window")
    parser.add_argument("--linkages", default="average,centroid")
    parser.add_argument("--thresholds", default="0.10,0.12,0.14,0.16,0.18,0.20,0.22,0.25,0.30")
    parser.add_argument("--min-cluster-sizes", default="12")
    args = parser.parse_args()
    models = choose_models("ge2e", MODELS)
    all_cases = cases()
    for variant in args.variants.split(","):
        windows = {c.name: Diarizer(models, ge2e_variant=variant).embed_windows(c.samples) for c in all_cases}
        print(f"\n== {variant}: " + "  ".join(f"{c.name} ({c.speakers} spk)" for c in all_cases))
        for linkage in args.linkages.split(","):
            for size in map(int, args.min_cluster_sizes.split(",")):
                for threshold in map(float, args.thresholds.split(",")):
                    config = config_for("ge2e", threshold=threshold)
                    config = replace(config, clustering=replace(config.clustering, linkage=linkage,
                                                                min_cluster_size=size))
                    diarizer = Diarizer(models, config, ge2e_variant=variant)
                    row, total = [], []
                    for c in all_cases:
                        out = diarizer.cluster_windows(windows[c.name], SpeakerBounds(), c.duration)
                        speakers = len({t.speaker for t in out.turns})
                        der = ders(c.reference, out.turns)["strict"]
                        total.append(der)
                        row.append(f"{speakers}/{der:6.1%}")
                    print(f"{linkage:8s} min{size:<3d} t={threshold:.2f}  " + "  ".join(row)
                          + f"   mean {np.mean(total):.1%}")


if __name__ == "__main__":
    main()
