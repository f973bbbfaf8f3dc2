#!/usr/bin/env python3
"""Serial vs parallel on this machine: wall time of `witness FILE --serial` and `--parallel`
on the same audio, alternating, in one run; prints the ratio and the thread split chosen.

    python scripts/bench_plan.py --minutes 10 [--rounds 2] [-- extra witness options]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.measure_memory import tiled  # noqa: E402


def once(path: Path, mode: str, extra: list[str]) -> tuple[float, dict]:
    out = Path(tempfile.mkdtemp(prefix="witness-plan-"))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "witness", "-q", str(path), "-o", str(out), "--format", "json",
                    f"--{mode}", *extra], cwd=REPO, check=True)
    wall = time.perf_counter() - start
    transcript = json.loads((out / (path.stem + ".json")).read_text())
    return wall, transcript


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="options passed to witness (after --)")
    args = parser.parse_args()
    folder = Path(tempfile.gettempdir()) / "witness-long"
    folder.mkdir(exist_ok=True)
    path = tiled(args.minutes, folder)
    print(f"{args.minutes} min of audio; load average {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} cores")
    walls: dict[str, list[float]] = {"serial": [], "parallel": []}
    for _ in range(args.rounds):
        for mode in walls:
            wall, t = once(path, mode, args.extra)
            walls[mode].append(wall)
            print(f"  {mode:8s} {wall:6.1f} s  asr {t['timings']['asr']:.1f} s, diarization "
                  f"{t['timings']['diarization']:.1f} s; threads whisper {t['plan']['whisper_threads']}, "
                  f"onnx {t['plan']['onnx_threads']}")
    s, p = statistics.median(walls["serial"]), statistics.median(walls["parallel"])
    print(f"median serial {s:.1f} s, parallel {p:.1f} s: parallel/serial = {p / s:.2f}")


if __name__ == "__main__":
    main()
