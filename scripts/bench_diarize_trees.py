#!/usr/bin/env python3
"""Diarization cost of two or more checkouts side by side: `witness diarize FILE` under
`/usr/bin/time -v` once per tree and round, the rounds in alternating order (a shared machine
drifts), with OpenBLAS on one thread as a run on 2 cores has it.

    python scripts/bench_diarize_trees.py FILE TREE [TREE ...] [--rounds 2] [--out DIR]
    # e.g. trees made with `git worktree add --detach /tmp/base 894aa20`

Each tree runs with its own code on PYTHONPATH and this interpreter (so the same libraries).
Prints per run the wall, user + system CPU seconds and peak RSS (the largest process, as
`time -v` reports it) with the load average at its start, then per tree the mean of each and
its ratio to the first tree, and whether every tree's JSON turns (regular and exclusive) are
identical to the first tree's, else how many differ.

E.g. the silence bias's re-embedding on two threads (README), an 11-minute Opus call where it fires: near idle
wall 14.5 -> 13.4 s, at load 2-3 23.2 -> 23.4 s, CPU and turns the same, peak RSS +3.9%.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIELDS = {"wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", "user": r"User time \(seconds\): (\S+)",
          "sys": r"System time \(seconds\): (\S+)", "rss_mb": r"Maximum resident set size \(kbytes\): (\S+)"}


def _seconds(clock: str) -> float:
    parts = [float(p) for p in clock.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def run_once(tree: Path, audio: Path, out: Path) -> dict:
    """One `witness diarize` of ``audio`` with ``tree``'s code; its costs and turns."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(tree)}
    load = os.getloadavg()[0]
    command = [sys.executable, "-m", "witness", "diarize", str(audio), "-o", str(out), "--format", "json"]
    # run in the tree: ``-m`` puts the working folder ahead of PYTHONPATH
    done = subprocess.run(["/usr/bin/time", "-v", *command], env=env, cwd=tree, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{tree}: witness diarize failed:\n{done.stderr[-2000:]}")
    found = {k: re.search(p, done.stderr).group(1) for k, p in FIELDS.items()}
    doc = json.loads((out / f"{audio.stem}.json").read_text())
    return {"wall": _seconds(found["wall"]), "cpu": float(found["user"]) + float(found["sys"]),
            "rss_mb": int(found["rss_mb"]) / 1024, "load": load,
            "turns": [[t["start"], t["end"], t["speaker"]] for key in ("turns", "exclusive_turns") for t in doc[key]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audio", type=Path)
    parser.add_argument("trees", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "witness-bench-trees")
    args = parser.parse_args()
    args.audio, args.out = args.audio.resolve(), args.out.resolve()
    runs: dict[Path, list[dict]] = {tree: [] for tree in args.trees}
    for r in range(args.rounds):
        for tree in (args.trees if r % 2 == 0 else args.trees[::-1]):
            run = run_once(tree, args.audio, args.out / f"{tree.name}-{r}")
            runs[tree].append(run)
            print(f"round {r} {tree}: wall {run['wall']:.1f} s, cpu {run['cpu']:.1f} s, "
                  f"rss {run['rss_mb']:.0f} MB (load {run['load']:.2f} at start)", flush=True)
    first = args.trees[0]
    means = {tree: {k: sum(run[k] for run in rs) / len(rs) for k in ("wall", "cpu", "rss_mb")}
             for tree, rs in runs.items()}
    for tree, mean in means.items():
        ratios = ", ".join(f"{k} {mean[k]:.1f} ({mean[k] / means[first][k]:.3f}x)" for k in mean)
        differ = sum(run["turns"] != runs[first][0]["turns"] for run in runs[tree])
        same = f"turns differ in {differ} of {len(runs[tree])} runs" if differ else "turns identical to the first tree's"
        print(f"{tree}: {ratios}; {same}")


if __name__ == "__main__":
    main()
