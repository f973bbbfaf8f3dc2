"""Cost of one speaker embedding (CAM++ or GE2E) on this CPU, one ONNX Runtime thread: per
embedding of a 10 s window under a typical single-speaker mask, and of a 3 s piece, for model
calls of 1, 8 and 32 rows.

CPU seconds of this process are reported beside wall seconds: on a shared machine the wall
clock counts other processes' time too. Masks come from the sample call's human RTTM.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/bench_embedding_cost.py --embedding campplus
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scripts import SAMPLE_CALL
from witness.audio import load_audio
from witness.evaluate.oracle import alone_mask
from witness.diarize.segmentation import FRAME_SIZE_SAMPLES, FRAME_STEP_SAMPLES, FRAMES_PER_WINDOW, WINDOW_SAMPLES
from witness.rttm import read_rttm

CALL = SAMPLE_CALL
RATE = 16000


def make_embedder(name: str, batch_size: int):
    if name == "ge2e":
        from witness.diarize.embedding import GE2EEmbedder
        from witness.models.ge2e import ge2e_onnx_path

        return GE2EEmbedder(ge2e_onnx_path(), threads=1)
    from witness.diarize.embedding import CamPlusPlusEmbedder
    from witness.models.campplus_onnx import campplus_onnx_path

    return CamPlusPlusEmbedder(campplus_onnx_path(), threads=1, batch_size=batch_size)


def timed(call, repeats: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the fastest of ``repeats`` calls."""
    call()  # warm-up: session creation, first-run allocations
    best = (np.inf, np.inf)
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        call()
        best = min(best, (time.process_time() - cpu, time.perf_counter() - wall))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedding", choices=("ge2e", "campplus"), default="campplus")
    parser.add_argument("--batches", default="1,8,32")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    audio = load_audio(CALL / "sample.wav").samples
    (turns,) = read_rttm(CALL / "sample.rttm").values()
    start = 8 * RATE  # 8-18 s: both speakers take turns
    window = audio[start:start + WINDOW_SAMPLES]
    mask = alone_mask(turns, "speaker90", start / RATE, FRAMES_PER_WINDOW,
                      FRAME_STEP_SAMPLES / RATE, FRAME_SIZE_SAMPLES / RATE)
    piece = audio[21 * RATE:24 * RATE]
    print(f"{args.embedding}: window mask keeps {mask.mean() * 10:.1f} s of 10 s; piece 3.0 s")
    for batch in (int(b) for b in args.batches.split(",")):
        embedder = make_embedder(args.embedding, batch)
        windows, masks = np.stack([window] * batch), np.stack([mask] * batch)
        pieces = np.stack([piece] * batch)
        for label, call in (("10 s window, mask", lambda: embedder.embed(windows, masks)),
                            ("3 s piece", lambda: embedder.embed(pieces))):
            cpu, wall = timed(call, args.repeats)
            print(f"  batch {batch:2d}  {label:17s}  {1000 * cpu / batch:7.1f} ms CPU  "
                  f"{1000 * wall / batch:7.1f} ms wall per embedding")


if __name__ == "__main__":
    main()
