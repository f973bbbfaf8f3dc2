"""Speed of the diarization models on this machine: segmentation windows/s and GE2E embedding
per (window, speaker), per-window masked versus pooled partials, on the sample call tiled.

Masks come from the human RTTM (tiled with the audio), so the embedding work is what a real
run would do without depending on the clustering code.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/bench_diarize_models.py --minutes 10 --threads 2

Multi-threaded OpenBLAS made each small numpy matmul of the frontends ~35x slower here
(8 ms instead of 0.2 ms for (1001, 201) @ (201, 40)); run with one BLAS thread.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from scripts import SAMPLE_CALL, SHARED
from witness.audio import load_audio
from witness.diarize.embedding import GE2EEmbedder
from witness.evaluate.oracle import alone_mask
from witness.diarize.pooled_partials import PooledGE2E
from witness.diarize.segmentation import (
    FRAME_SIZE_SAMPLES, FRAME_STEP_SAMPLES, FRAMES_PER_WINDOW, WINDOW_SAMPLES, SegmentationModel)
from witness.models.diarization_catalogue import SEGMENTATION_INT8
from witness.models.ge2e import ge2e_onnx_path
from witness.rttm import read_rttm
from witness.transcript import Turn

RATE = 16000


def tiled_call(minutes: float) -> tuple[np.ndarray, list[Turn]]:
    """The sample call repeated to ``minutes``, with its reference turns shifted along."""
    call = SAMPLE_CALL
    audio, rate = (load_audio(call / "sample.wav").samples, 16000)
    assert rate == RATE
    (turns,) = read_rttm(call / "sample.rttm").values()
    copies = int(np.ceil(minutes * 60 * RATE / len(audio)))
    span = len(audio) / RATE
    tiled = [Turn(t.start + k * span, t.end + k * span, t.speaker) for k in range(copies) for t in turns]
    return np.tile(audio, copies)[:int(minutes * 60 * RATE)], tiled


def bench_segmentation(audio: np.ndarray, threads: int, batch_size: int | None) -> None:
    model = SegmentationModel(SHARED / "models" / SEGMENTATION_INT8.name, batch_size=batch_size,
                              threads=threads)
    model.run(np.zeros((1, WINDOW_SAMPLES), np.float32))  # session start-up outside the timing
    began, windows = time.perf_counter(), 0
    for batch in model.segment(audio, step_seconds=1.0):
        windows += len(batch.scores)
    elapsed = time.perf_counter() - began
    print(f"segmentation int8, batch {model.batch_size}, {threads} threads: {windows} windows in "
          f"{elapsed:.1f} s = {windows / elapsed:.1f} windows/s, RTF {elapsed / (len(audio) / RATE):.4f}")


def window_rows(audio: np.ndarray, turns: list[Turn], chunk: int = 32):
    """Batches of (starts (R,), masks (R, 589)) for each (window, speaker) with >= 1 s alone."""
    step = RATE
    starts = np.arange(0, max(1, len(audio) - WINDOW_SAMPLES + 1), step)
    speakers = sorted({t.speaker for t in turns})
    for first in range(0, len(starts), chunk):
        rows, masks = [], []
        for start in starts[first:first + chunk]:
            near = [t for t in turns if t.end > start / RATE and t.start < (start + WINDOW_SAMPLES) / RATE]
            for speaker in speakers:
                mask = alone_mask(near, speaker, start / RATE, FRAMES_PER_WINDOW,
                                  FRAME_STEP_SAMPLES / RATE, FRAME_SIZE_SAMPLES / RATE)
                if mask.sum() * FRAME_STEP_SAMPLES >= RATE:
                    rows.append(start)
                    masks.append(mask)
        if rows:
            yield np.array(rows), np.stack(masks)


def bench_embeddings(audio: np.ndarray, turns: list[Turn], threads: int, batch_size: int) -> None:
    seconds = len(audio) / RATE
    batches = list(window_rows(audio, turns))
    n_rows = sum(len(r) for r, _ in batches)
    embedder = GE2EEmbedder(ge2e_onnx_path(), threads=threads, batch_size=batch_size)
    embedder.embed_partials(np.zeros((1, 160, 40), np.float32))

    warm = embedder.partials_embedded
    began = time.perf_counter()
    per_window = [embedder.embed(np.stack([audio[s:s + WINDOW_SAMPLES] for s in rows]), masks)
                  for rows, masks in batches]
    per_window_s = time.perf_counter() - began
    per_window_partials = embedder.partials_embedded - warm

    pooled = PooledGE2E(embedder, audio)
    began = time.perf_counter()
    pooled_out = [pooled.embed(rows, masks) for rows, masks in batches]
    pooled_s = time.perf_counter() - began

    a, b = np.concatenate(per_window), np.concatenate(pooled_out)
    both = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    cosine = np.median(np.sum(a[both] * b[both], axis=1))
    print(f"GE2E, {threads} thread(s), batch {batch_size}: {n_rows} (window, speaker) rows over "
          f"{seconds / 60:.0f} min")
    print(f"  per-window masked: {per_window_s:.1f} s, RTF {per_window_s / seconds:.4f}, "
          f"{n_rows / per_window_s:.1f} rows/s, {per_window_partials} partials")
    print(f"  pooled partials:   {pooled_s:.1f} s, RTF {pooled_s / seconds:.4f}, "
          f"{pooled.partials_embedded} partials, {per_window_s / pooled_s:.1f}x faster; "
          f"median cosine to per-window {cosine:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--embed-batch", type=int, default=64, help="GE2E partials per call")
    parser.add_argument("--skip-segmentation", action="store_true")
    args = parser.parse_args()
    audio, turns = tiled_call(args.minutes)
    print("load average before: %.1f %.1f %.1f (other processes share these cores)" % os.getloadavg())
    if not args.skip_segmentation:
        for threads in sorted({1, args.threads}):
            for batch_size in (None, 8):
                bench_segmentation(audio, threads, batch_size)
    bench_embeddings(audio, turns, args.threads, args.embed_batch)


if __name__ == "__main__":
    main()
