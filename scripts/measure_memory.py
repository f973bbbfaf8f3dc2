#!/usr/bin/env python3
"""Peak memory of a whole `witness` run (parent and worker processes) on long files.

Tiles the sample call to each length, runs `witness FILE -o TMP --format json` in a fresh
process per length, samples the RSS of the process tree every 0.2 s with psutil, and
prints the peak per process role and in total, with the ratio to the first length:

    python scripts/measure_memory.py --minutes 10 60 [--models-dir ../shared/models] [-- extra witness options]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.audio_factory import encode, read_wav  # noqa: E402

SAMPLE = REPO.parent / "shared" / "data" / "sample-call" / "sample.wav"


def tiled(minutes: int, folder: Path) -> Path:
    path = folder / f"call-{minutes}min.flac"
    if not path.exists():
        samples, rate = read_wav(SAMPLE)
        reps = int(np.ceil(minutes * 60 * rate / samples.shape[1]))
        encode(np.tile(samples, (1, reps))[:, : minutes * 60 * rate], rate, path, "flac", "flac", rate)
    return path


def role(proc: psutil.Process) -> str:
    try:
        cmd = " ".join(proc.cmdline())
    except psutil.Error:
        return "gone"
    return "worker" if "multiprocessing" in cmd else "parent"


def run(path: Path, extra: list[str]) -> tuple[float, dict[str, int], int]:
    """(wall seconds, peak RSS per role, peak RSS of the whole tree) of one witness run."""
    out = tempfile.mkdtemp(prefix="witness-mem-")
    cmd = [sys.executable, "-m", "witness", "-q", str(path), "-o", out, "--format", "json", *extra]
    start = time.perf_counter()
    proc = psutil.Popen(cmd, cwd=REPO)
    peaks: dict[str, int] = {}
    total_peak = 0
    while proc.poll() is None:
        tree = [proc] + proc.children(recursive=True)
        total = 0
        for p in tree:
            try:
                rss = p.memory_info().rss
            except psutil.Error:
                continue
            key = f"{role(p)}-{p.pid}"
            peaks[key] = max(peaks.get(key, 0), rss)
            total += rss
        total_peak = max(total_peak, total)
        time.sleep(0.2)
    if proc.returncode != 0:
        raise SystemExit(f"witness failed on {path} (exit {proc.returncode})")
    return time.perf_counter() - start, peaks, total_peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, nargs="+", default=[10, 60])
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "witness-long")
    parser.add_argument("extra", nargs="*", help="options passed to witness (after --)")
    args = parser.parse_args()
    args.folder.mkdir(exist_ok=True)
    first = None
    print(f"load average {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} cores")
    for minutes in args.minutes:
        wall, peaks, total = run(tiled(minutes, args.folder), args.extra)
        first = first or total
        roles = ", ".join(f"{k.split('-')[0]} {v / 2**20:.0f} MiB" for k, v in sorted(peaks.items(), key=lambda kv: -kv[1])[:3])
        print(f"{minutes:4d} min: wall {wall:6.1f} s (RTF {wall / (minutes * 60):.3f}); peak tree RSS "
              f"{total / 2**20:.0f} MiB ({total / first:.2f}x of the first); by process: {roles}")


if __name__ == "__main__":
    main()
