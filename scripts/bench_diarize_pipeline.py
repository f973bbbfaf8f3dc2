"""Where diarization's time goes: the whole pipeline on the sample call tiled to N minutes,
and the cost of one speaker embedding.

Pipeline: prints seconds and real-time factor per stage, the share of wall time during which ONNX
Runtime was running a model (the union of every ``session.run`` interval of both threads:
the rest is our own Python and numpy), per-thread busy time, CPU seconds (the process, and
the main thread's embedding and clustering apart from the segmentation thread) and DER
against the tiled human reference. Sessions are started on a short clip first, outside the timing.

    PYTHONPATH=. python scripts/bench_diarize_pipeline.py --minutes 10
    ... --embedding campplus --device auto        # each stage on the GPU provider (doctor's choice)
    ... --step 2 --embed-batch 16 --variant window
    ... --embedding campplus --embed-every 10

The pipeline limits numpy's BLAS to one thread itself (``RuntimeOptions.blas_threads``);
``--blas-threads 0`` leaves it alone, to measure what that limit buys. ``--no-share`` keeps
segmentation to its worker thread (``RuntimeOptions.share_segmentation``). ``--variant window``
embeds every window's masked audio instead of pooling GE2E partials.

``--per-embedding``: instead, the cost of one embedding on one ONNX Runtime thread, of a 10 s
window under a single-speaker mask from the sample call's human RTTM and of a 3 s piece, in
model calls of ``--batches`` rows; CPU milliseconds (what a shared machine distorts least)
beside wall milliseconds, the fastest of ``--repeats``:

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/bench_diarize_pipeline.py --per-embedding --embedding campplus
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from dataclasses import replace

import numpy as np

from scripts.diarization_cases import MODELS, ders, sample_call, tiled
from witness.accel.providers import choose_provider
from witness.audio import SAMPLE_RATE
from witness.diarize.config import RuntimeOptions, config_for
from witness.accel.onnx_session import LazySession
from witness.diarize.pipeline import Diarizer
from witness.diarize.segmentation import FRAME_SIZE_SAMPLES, FRAME_STEP_SAMPLES, FRAMES_PER_WINDOW, WINDOW_SAMPLES
from witness.evaluate.oracle import alone_mask
from witness.models.diarization_choice import choose_models


class OrtClock:
    """Records every ``LazySession.run`` interval (start, end, thread name)."""

    def __init__(self):
        self.intervals: list[tuple[float, float, str]] = []
        self._lock = threading.Lock()
        self._original = LazySession.run

    def __enter__(self) -> "OrtClock":
        clock, original = self, self._original

        def timed_run(session, feeds, outputs=None):
            began = time.perf_counter()
            try:
                return original(session, feeds, outputs)
            finally:
                with clock._lock:
                    clock.intervals.append((began, time.perf_counter(), threading.current_thread().name))

        LazySession.run = timed_run
        return self

    def __exit__(self, *exc) -> None:
        LazySession.run = self._original

    def union_seconds(self, since: float, until: float) -> float:
        """Wall time within [since, until] during which at least one model was running."""
        total, end = 0.0, since
        for a, b, _ in sorted(self.intervals):
            a, b = max(a, end), min(b, until)
            if b > a:
                total += b - a
                end = b
        return total

    def per_thread(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for a, b, name in self.intervals:
            out[name] = out.get(name, 0.0) + b - a
        return out


def embedding_cost(embedding: str, batches: list[int], repeats: int) -> None:
    """Milliseconds per embedding of a masked 10 s window and of a 3 s piece, per batch size."""
    models = choose_models(embedding, MODELS)
    call = sample_call()
    start = 8 * SAMPLE_RATE  # 8-18 s: both speakers take turns
    window = call.samples[start:start + WINDOW_SAMPLES]
    mask = alone_mask(list(call.reference), "speaker90", start / SAMPLE_RATE, FRAMES_PER_WINDOW,
                      FRAME_STEP_SAMPLES / SAMPLE_RATE, FRAME_SIZE_SAMPLES / SAMPLE_RATE)
    piece = call.samples[21 * SAMPLE_RATE:24 * SAMPLE_RATE]
    print(f"{embedding}: window mask keeps {mask.mean() * 10:.1f} s of 10 s; piece 3.0 s")
    for batch in batches:
        # GE2E's batch size counts 1.6 s partials, not rows: it keeps its own
        runtime = RuntimeOptions(embedding_batch_size=None if embedding == "ge2e" else batch)
        embedder = Diarizer(models, runtime=runtime).embedder
        windows, masks, pieces = np.stack([window] * batch), np.stack([mask] * batch), np.stack([piece] * batch)
        for label, call_once in (("10 s window, mask", lambda: embedder.embed(windows, masks)),
                                 ("3 s piece", lambda: embedder.embed(pieces))):
            call_once()  # warm-up: session creation, first-run allocations
            best = (np.inf, np.inf)
            for _ in range(repeats):
                cpu, wall = time.process_time(), time.perf_counter()
                call_once()
                best = min(best, (time.process_time() - cpu, time.perf_counter() - wall))
            print(f"  batch {batch:2d}  {label:17s}  {1000 * best[0] / batch:7.1f} ms CPU  "
                  f"{1000 * best[1] / batch:7.1f} ms wall per embedding")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--step", type=float, default=1.0)
    parser.add_argument("--embedding", default="ge2e", choices=("ge2e", "campplus"))
    parser.add_argument("--embed-every", type=int, help="embed every n-th window only (default: the config's, "
                        "on files over its long_file_windows)")
    parser.add_argument("--segmentation", default="auto", choices=("auto", "fp32", "int8"))
    parser.add_argument("--variant", default="pooled", choices=("pooled", "window"), help="GE2E only")
    parser.add_argument("--embed-batch", type=int, default=None, help="GE2E partials per model call")
    parser.add_argument("--seg-threads", type=int, default=1)
    parser.add_argument("--embed-threads", type=int, default=1)
    parser.add_argument("--blas-threads", type=int, default=1, help="0: leave numpy's BLAS pool alone")
    parser.add_argument("--no-share", action="store_true",
                        help="segmentation in its worker thread only (RuntimeOptions.share_segmentation off)")
    parser.add_argument("--device", default="cpu", help="auto (as a run chooses per model), cpu, cuda, migraphx, ...")
    parser.add_argument("--per-embedding", action="store_true", help="the cost of one embedding instead")
    parser.add_argument("--batches", default="1,8,32", help="with --per-embedding: rows per model call")
    parser.add_argument("--repeats", type=int, default=3, help="with --per-embedding")
    args = parser.parse_args()
    if args.per_embedding:
        embedding_cost(args.embedding, [int(b) for b in args.batches.split(",")], args.repeats)
        return
    case = tiled(sample_call(), args.minutes)
    models = choose_models(args.embedding, MODELS, segmentation=args.segmentation)
    runtime = RuntimeOptions(segmentation_providers=choose_provider("segmentation", args.device),
                             embedding_providers=choose_provider("embedding", args.device),
                             segmentation_threads=args.seg_threads, embedding_threads=args.embed_threads,
                             embedding_batch_size=args.embed_batch, blas_threads=args.blas_threads or None,
                             share_segmentation=not args.no_share)
    config = config_for(args.embedding, window_step=args.step)
    if args.embed_every:
        config = replace(config, embed_every=args.embed_every)
    diarizer = Diarizer(models, config, runtime, args.variant)
    diarizer.run(case.samples[:11 * 16000])  # start the sessions outside the timing
    providers = diarizer.open_sessions()  # what each model really runs on, after any fallback
    load = os.getloadavg()
    with OrtClock() as clock:
        cpu, main_cpu = time.process_time(), time.thread_time()
        began = time.perf_counter()
        out = diarizer.run(case.samples)
        ended = time.perf_counter()
        cpu, main_cpu = time.process_time() - cpu, time.thread_time() - main_cpu
    wall, audio_s = ended - began, case.duration
    inside = clock.union_seconds(began, ended)
    print(f"{case.name}: {models.segmentation.name}, step {args.step} s, every {config.embed_every}, "
          f"{diarizer.embedding_name}, embedding batch "
          f"{diarizer.embedder.batch_size}, threads seg {args.seg_threads} / embed {args.embed_threads} / "
          f"BLAS {args.blas_threads or 'default'}, shared segmentation {not args.no_share}; providers {providers}; "
          f"load average before {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    for stage, seconds in out.timings.items():
        print(f"  {stage:15s} {seconds:7.2f} s  RTF {seconds / audio_s:.4f}")
    print(f"  inside ONNX Runtime (either thread): {inside:.2f} s = {inside / wall:.1%} of wall; "
          f"outside: {wall - inside:.2f} s = {1 - inside / wall:.1%}")
    for name, seconds in clock.per_thread().items():
        print(f"  ORT busy in thread {name}: {seconds:.2f} s")
    # CPU time is what a loaded machine distorts least: wall time counts other processes too
    print(f"  CPU: process {cpu:.2f} s (RTF {cpu / audio_s:.4f}); main thread (embedding, clustering) "
          f"{main_cpu:.2f} s; other threads (segmentation) {cpu - main_cpu:.2f} s")
    scores = ders(case.reference, out.turns)
    print(f"  speakers {out.num_speakers} (found {out.found_speakers}); DER "
          + ", ".join(f"{k} {v:.1%}" for k, v in scores.items()))


if __name__ == "__main__":
    main()
