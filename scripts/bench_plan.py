#!/usr/bin/env python3
"""Serial vs parallel on this machine: wall time of `witness FILE --serial` and `--parallel`
on the same audio, alternating, in one run; prints the ratio, the thread split chosen, each
engine's time (alone in serial, side by side in parallel) and, on a GPU, the peak VRAM the
run used above what was in use before it (sampled every 0.25 s).

    python scripts/bench_plan.py --minutes 3 10 30 [--rounds 2] [-- extra witness options]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.measure_memory import tiled  # noqa: E402
from witness.accel.vram import probe_gpus  # noqa: E402

MIB = 1 << 20


def vram_used() -> int | None:
    gpus = probe_gpus()
    return sum(g.total - g.free for g in gpus) if gpus else None


def once(path: Path, mode: str, extra: list[str]) -> tuple[float, dict, int | None]:
    """Wall time, transcript JSON and peak VRAM used above the baseline (None: no GPU seen)."""
    out = Path(tempfile.mkdtemp(prefix="witness-plan-"))
    baseline, peak, done = vram_used(), [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], (vram_used() or 0) - baseline)

    sampler = threading.Thread(target=sample, daemon=True)
    if baseline is not None:
        sampler.start()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "witness", "-q", str(path), "-o", str(out), "--format", "json",
                    f"--{mode}", *extra], cwd=REPO, check=True)
    wall = time.perf_counter() - start
    done.set()
    transcript = json.loads((out / (path.stem + ".json")).read_text())
    return wall, transcript, None if baseline is None else peak[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, nargs="+", default=[10])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="options passed to witness (after --)")
    args = parser.parse_args()
    folder = Path(tempfile.gettempdir()) / "witness-long"
    folder.mkdir(exist_ok=True)
    for minutes in args.minutes:
        path = tiled(minutes, folder)
        print(f"{minutes} min of audio; load average {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} cores")
        walls: dict[str, list[float]] = {"serial": [], "parallel": []}
        for _ in range(args.rounds):
            for mode in walls:
                wall, t, vram = once(path, mode, args.extra)
                walls[mode].append(wall)
                peak = "no GPU seen" if vram is None else f"peak VRAM +{vram / MIB:.0f} MiB"
                print(f"  {mode:8s} {wall:6.1f} s  asr {t['timings']['asr']:.1f} s, diarization "
                      f"{t['timings']['diarization']:.1f} s; threads whisper {t['plan']['whisper_threads']}, "
                      f"onnx {t['plan']['onnx_threads']}; {peak}")
        s, p = statistics.median(walls["serial"]), statistics.median(walls["parallel"])
        print(f"median serial {s:.1f} s, parallel {p:.1f} s: parallel/serial = {p / s:.2f}")

if __name__ == "__main__":
    main()
