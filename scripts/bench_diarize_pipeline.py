"""Speed of the whole diarization pipeline on the sample call tiled to N minutes.

Prints seconds and real-time factor per stage, the share of wall time during which ONNX
Runtime was running a model (the union of every ``session.run`` interval of both threads:
the rest is our own Python and numpy), per-thread busy time, CPU seconds (the process, and
the main thread's embedding and clustering apart from the segmentation thread) and DER
against the tiled human reference. Sessions are started on a short clip first, outside the timing.

    PYTHONPATH=. python scripts/bench_diarize_pipeline.py --minutes 10
    ... --embedding campplus --device auto        # each stage on the GPU provider (doctor's choice)
    ... --step 2 --embed-batch 16 --variant window
    ... --embedding campplus --embed-every 10

The pipeline limits numpy's BLAS to one thread itself (``RuntimeOptions.blas_threads``);
``--blas-threads 0`` leaves it alone, to measure what that limit buys.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from dataclasses import replace

from scripts.diarization_cases import MODELS, ders, sample_call, tiled
from witness.accel.providers import choose_provider
from witness.diarize.config import config_for
from witness.diarize.onnx_session import LazySession
from witness.diarize.pipeline import Diarizer, RuntimeOptions
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
    parser.add_argument("--device", default="cpu", help="auto (as a run chooses per model), cpu, cuda, migraphx, ...")
    args = parser.parse_args()
    case = tiled(sample_call(), args.minutes)
    models = choose_models(args.embedding, MODELS, segmentation=args.segmentation)
    runtime = RuntimeOptions(segmentation_providers=choose_provider("segmentation", args.device),
                             embedding_providers=choose_provider("embedding", args.device),
                             segmentation_threads=args.seg_threads, embedding_threads=args.embed_threads,
                             embedding_batch_size=args.embed_batch, blas_threads=args.blas_threads or None)
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
          f"BLAS {args.blas_threads or 'default'}; providers {providers}; "
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
