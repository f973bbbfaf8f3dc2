"""Time and memory of the model-free diarization stages on long inputs.

pyannote's own arrays for the 3-speaker fixture (27 windows, 37 s) are tiled to the requested
length (embeddings get a little noise so no two are identical), then speaker counting,
clustering and reconstruction run as the pipeline runs them. Prints seconds, real-time
factor and the peak of memory allocated inside each stage (tracemalloc, which sees numpy).

    PYTHONPATH=. python scripts/bench_diarize_stages.py --minutes 10 60
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
from pathlib import Path

import numpy as np

from witness.diarize.aggregate import speaker_count
from witness.diarize.clustering import cluster
from witness.diarize.reconstruct import reconstruct
from witness.diarize.windows import Segmentations, SlidingWindow

FIXTURES = Path(os.environ.get("WITNESS_SHARED_DIR", "../shared")) / "data" / "speakrs-fixtures"


def tiled_inputs(minutes: float) -> tuple[Segmentations, np.ndarray]:
    """Segmentations (chunks, 589, 3) and embeddings (chunks, 3, 256) covering ``minutes``."""
    seg = np.load(FIXTURES / "3speakers_segmentation_data.npy")
    emb = np.load(FIXTURES / "3speakers_embeddings_data.npy")
    chunks = int(minutes * 60)  # one window per second
    reps = -(-chunks // len(seg))
    noise = np.random.default_rng(0).normal(scale=0.01, size=(chunks, *emb.shape[1:])).astype(np.float32)
    embeddings = np.tile(emb, (reps, 1, 1))[:chunks] + noise
    return Segmentations(np.tile(seg, (reps, 1, 1))[:chunks], SlidingWindow(0.0, 10.0, 1.0)), embeddings


def measure(stage: str, seconds_of_audio: float, run):
    tracemalloc.start()
    begin = time.perf_counter()
    result = run()
    elapsed = time.perf_counter() - begin
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"  {stage:<12} {elapsed:8.3f} s  RTF {elapsed / seconds_of_audio:.5f}  peak {peak / 2**20:8.1f} MiB")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, nargs="+", default=[10.0, 60.0])
    for minutes in parser.parse_args().minutes:
        segmentations, embeddings = tiled_inputs(minutes)
        print(f"{minutes:g} min: {segmentations.num_chunks} windows, {segmentations.data.nbytes / 2**20:.0f} MiB of segmentation")
        seconds = minutes * 60
        count = measure("count", seconds, lambda: speaker_count(segmentations))
        clusters = measure("clustering", seconds, lambda: cluster(embeddings, segmentations))
        result = measure("reconstruct", seconds, lambda: reconstruct(segmentations, clusters.hard, count))
        print(f"  {clusters.num_clusters} speakers, {len(result.turns)} turns")


if __name__ == "__main__":
    main()
