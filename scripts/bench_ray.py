#!/usr/bin/env python3
"""What Ray costs on one node: `witness batch` locally vs `--ray local`, same files.

Writes N short calls (cuts of the sample call at different offsets) and runs both commands
back to back, alternating (local, ray, ray, local, … for --rounds), each into a fresh OUTDIR,
sampling the RSS and PSS of the whole process tree (the batch, its engine workers or Ray's
processes and actors) every 0.25 s. Prints, per run and as ratios ray / local: wall time,
CPU seconds of the tree (less sensitive than wall time to other load on a shared machine),
steady time per file (first to last file done, so Ray's start is left out), peak RSS and
PSS; the per-file stage seconds the transcripts record (decode, Whisper, diarization); and
what the driver spends per file on its own (check and hash the input, write outputs and row).

    python scripts/bench_ray.py [--files 40] [--seconds 10] [--rounds 1] [--models-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts import SHARED  # noqa: E402
from scripts.process_tree import MIB, load, run_sampled, witness, write_calls  # noqa: E402


def one_run(calls: Path, out: Path, models_dir: str, extra: list[str]) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    manifest = out / "witness-manifest.jsonl"

    def files_done() -> int:
        return manifest.read_text().count("\n") if manifest.exists() else 0

    wall, samples = run_sampled(witness("batch", str(calls), "-o", str(out), "--format", "json",
                                        "--models-dir", models_dir, *extra), every=0.25, mark=files_done)
    done = [s for s in samples if s.mark >= 1]
    first = min(s.at for s in done)
    last = min(s.at for s in samples if s.mark == max(x.mark for x in samples)) if done else wall
    top = max(samples, key=lambda s: s.rss)
    cpu: dict[tuple[str, int], float] = {}  # (process, thread) -> CPU seconds, the last seen
    for s in samples:
        for name, threads in s.threads.items():
            cpu.update({(name, tid): seconds for tid, seconds in threads.items()})
    stages = {}
    for path in out.glob("*.json"):
        for key, value in json.loads(path.read_text())["timings"].items():
            stages.setdefault(key, []).append(value)
    return {"wall": wall, "cpu": sum(cpu.values()), "steady": (last - first) / max(1, max(s.mark for s in samples) - 1),
            "rss": top.rss, "pss": max(s.pss for s in samples), "processes": top.processes,
            "by_process": {k: round(v / MIB) for k, v in sorted(top.by_process.items())},
            "stages": {k: statistics.mean(v) for k, v in stages.items()}}


def driver_seconds(calls: Path, out: Path, scratch: Path) -> dict[str, float]:
    """Mean seconds per file of what the driver does itself, whichever runs the engines: the
    header check and SHA-256 of the input, then its outputs (json, txt) and manifest row."""
    from witness.audio import probe
    from witness.fileio import sha256_file
    from witness.run.manifest import Manifest, ManifestRow
    from witness.transcript import read_transcript
    from witness.writers import write_outputs

    check, write, files = 0.0, 0.0, sorted(calls.glob("*.wav"))
    with Manifest(scratch / "witness-manifest.jsonl") as manifest:
        for path in files:
            start = time.perf_counter()
            probe(path)
            digest = sha256_file(path)
            check += time.perf_counter() - start
            transcript = read_transcript(out / f"{path.stem}.json")
            start = time.perf_counter()
            write_outputs(transcript, [scratch / f"{path.stem}.json", scratch / f"{path.stem}.txt"])
            manifest.append(ManifestRow(input=str(path), settings_hash="0" * 16, status="ok", sha256=digest))
            write += time.perf_counter() - start
    return {"check and hash": check / len(files), "write outputs and row": write / len(files)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=1, help="pairs of runs: local, ray, then ray, local, …")
    parser.add_argument("--models-dir", default=str(SHARED / "models"))
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "witness-bench-ray")
    args = parser.parse_args()
    calls = write_calls(args.folder / "calls", args.files, args.seconds)
    kinds = {"local": [], "ray": ["--ray", "local"]}
    results: dict[str, list[dict]] = {"local": [], "ray": []}
    print(load(), flush=True)
    for r in range(args.rounds):
        for kind in (("local", "ray") if r % 2 == 0 else ("ray", "local")):
            result = one_run(calls, args.folder / f"out-{kind}", args.models_dir, kinds[kind])
            results[kind].append(result)
            print(f"{kind:5s} wall {result['wall']:.1f} s, CPU {result['cpu']:.1f} s, {result['steady']:.2f} s/file steady, peak RSS "
                  f"{result['rss'] / MIB:.0f} MiB, PSS {result['pss'] / MIB:.0f} MiB, {result['processes']} processes "
                  f"{result['by_process']} MiB; stages per file {json.dumps(result['stages'])}", flush=True)
            print(load(), flush=True)
    mean = {kind: {key: statistics.mean(r[key] for r in runs) for key in ("wall", "cpu", "steady", "rss", "pss")}
            for kind, runs in results.items()}
    scratch = args.folder / "driver"
    shutil.rmtree(scratch, ignore_errors=True)
    print("driver per file (s):", json.dumps(driver_seconds(calls, args.folder / "out-ray", scratch)))
    audio = args.files * args.seconds
    for key in ("wall", "cpu", "steady", "rss", "pss"):
        print(f"ray / local {key}: {mean['ray'][key] / mean['local'][key]:.3f}")
    print(f"RTF local {mean['local']['wall'] / audio:.3f}, ray {mean['ray']['wall'] / audio:.3f} "
          f"({args.files} files of {args.seconds:g} s)")


if __name__ == "__main__":
    main()
