#!/usr/bin/env python3
"""Memory of one long `witness batch`: does it stay flat from the 20th file to the 200th?

Writes N short calls (10 s cuts of the sample call at different offsets), runs `witness
batch DIR -o OUT` once, and samples the process tree's RSS and PSS (summed over its
processes) every 0.25 s together with the number of manifest rows (files done). Prints the
peak over the first 20 files and over all of them (per process at both points), and the
peak of each stretch of 20 files, to show whether memory grows or stays flat.

    python scripts/batch_memory.py [--files 200] [--seconds 10] [--models-dir ../shared/models] [-- extra options]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.process_tree import MIB, Sample, load, run_sampled, witness, write_call  # noqa: E402


def peak(samples: list[Sample], until: int) -> Sample:
    """The sample with the most RSS among those taken while at most ``until`` files were done."""
    return max((s for s in samples if s.mark <= until), key=lambda s: s.rss)


def describe(s: Sample) -> str:
    parts = ", ".join(f"{name} {rss / MIB:.0f}" for name, rss in sorted(s.by_process.items()))
    return (f"RSS {s.rss / MIB:.0f} MiB, PSS {s.pss / MIB:.0f} MiB at {s.at:.0f} s, {s.mark} files done "
            f"({s.processes} processes: {parts} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--early", type=int, default=20, help="the 'after N files' point")
    parser.add_argument("--models-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "models"))
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "witness-batch-memory")
    parser.add_argument("extra", nargs="*", help="options for witness batch (after --)")
    args = parser.parse_args()
    calls = args.folder / "calls"
    for i in range(args.files):
        path = calls / f"call-{i:03d}.wav"
        if not path.exists():
            write_call(path, args.seconds, offset=(i * 1.7) % 20)
    out = args.folder / "out"
    shutil.rmtree(out, ignore_errors=True)
    manifest = out / "witness-manifest.jsonl"

    def files_done() -> int:
        return manifest.read_text().count("\n") if manifest.exists() else 0

    print(load())
    wall, samples = run_sampled(witness("batch", str(calls), "-o", str(out), "--format", "json",
                                        "--models-dir", args.models_dir, *args.extra), every=0.25, mark=files_done)
    done = manifest.read_text().count("\n")
    early, overall = peak(samples, args.early), peak(samples, done)
    print(f"{done} files ({done * args.seconds / 60:.0f} min of audio) in {wall:.0f} s "
          f"(RTF {wall / (done * args.seconds):.3f}); {len(samples)} samples")
    print(f"peak over the first {args.early} files: {describe(early)}")
    print(f"peak over all {done} files:      {describe(overall)}")
    late = [s for s in samples if s.mark >= done - args.early]
    print(f"peak over the last {args.early} files:  {describe(max(late, key=lambda s: s.rss))}")
    print(f"ratio of peaks (all / first {args.early}): RSS {overall.rss / early.rss:.3f}, PSS {overall.pss / early.pss:.3f}")
    stretches = [[s for s in samples if lo <= s.mark < lo + args.early] for lo in range(0, done, args.early)]
    print(f"peak RSS per {args.early} files (MiB): " + " ".join(f"{max(s.rss for s in st) / MIB:.0f}" for st in stretches if st))
    print(load())


if __name__ == "__main__":
    main()
