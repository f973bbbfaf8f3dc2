#!/usr/bin/env python3
"""Peak memory of `witness` runs, the whole process tree (parent and engine workers) sampled
with psutil (scripts/process_tree.py): does it grow with the length of a file, and over a
long batch?

    python scripts/measure_memory.py length --minutes 10 60 [-- extra witness options]
    python scripts/measure_memory.py batch --files 200 [--seconds 10] [-- extra options]

``length``: the sample call tiled to each length, one `witness FILE -o TMP --format json` per
length; prints the peak RSS of each process (labelled by its engine: asr, diarization) and of
the whole tree, with the ratio to the first length. The audio itself is 3.84 MB per minute
(float32, 16 kHz). `-- --no-diarize` measures Whisper alone, `-- --serial` one engine at a time.

``batch``: N cuts of the sample call (``--seconds`` each, at different offsets), one `witness
batch DIR -o OUT`, sampled with the number of manifest rows (files done). Prints the peak over
the first ``--early`` files, over all of them and over the last ones (per process), and the
peak of each stretch of ``--early`` files, to show whether memory stays flat.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.process_tree import MIB, Sample, load, processes, run_sampled, witness, write_call, write_calls  # noqa: E402

FOLDER = Path(tempfile.gettempdir()) / "witness-memory"


def length(minutes: list[float], extra: list[str]) -> None:
    first = None
    for m in minutes:
        path = FOLDER / f"call-{m:g}min.wav"
        if not path.exists():
            write_call(path, m * 60)
        with tempfile.TemporaryDirectory() as out:
            wall, samples = run_sampled(witness(str(path), "-o", out, "--format", "json", *extra))
        total = max(s.rss for s in samples)
        first = first or total
        roles = ", ".join(f"{p.label.split('-')[0]} {p.peak_rss / MIB:.0f} MiB" for p in processes(samples)
                          if not p.label.startswith("tracker"))
        print(f"{m:5g} min: wall {wall:6.1f} s (RTF {wall / (m * 60):.3f}); peak tree RSS {total / MIB:.0f} MiB "
              f"({total / first:.2f}x of the first); peak per process: {roles}", flush=True)


def _peak(samples: list[Sample]) -> Sample:
    return max(samples, key=lambda s: s.rss)


def _describe(s: Sample) -> str:
    parts = ", ".join(f"{name} {rss / MIB:.0f}" for name, rss in sorted(s.by_process.items()))
    return (f"RSS {s.rss / MIB:.0f} MiB, PSS {s.pss / MIB:.0f} MiB at {s.at:.0f} s, {s.mark} files done "
            f"({s.processes} processes: {parts} MiB)")


def batch(files: int, seconds: float, early: int, extra: list[str]) -> None:
    calls = FOLDER / f"batch-{files}x{seconds:g}s"
    write_calls(calls, files, seconds)
    out = FOLDER / "batch-out"
    shutil.rmtree(out, ignore_errors=True)
    manifest = out / "witness-manifest.jsonl"

    def files_done() -> int:
        return manifest.read_text().count("\n") if manifest.exists() else 0

    wall, samples = run_sampled(witness("batch", str(calls), "-o", str(out), "--format", "json", *extra),
                                every=0.25, mark=files_done)
    done = files_done()
    first, overall = _peak([s for s in samples if s.mark <= early]), _peak(samples)
    print(f"{done} files ({done * seconds / 60:.0f} min of audio) in {wall:.0f} s "
          f"(RTF {wall / (done * seconds):.3f}); {len(samples)} samples")
    print(f"peak over the first {early} files: {_describe(first)}")
    print(f"peak over all {done} files:      {_describe(overall)}")
    print(f"peak over the last {early} files:  {_describe(_peak([s for s in samples if s.mark >= done - early]))}")
    print(f"ratio of peaks (all / first {early}): RSS {overall.rss / first.rss:.3f}, PSS {overall.pss / first.pss:.3f}")
    stretches = [[s.rss for s in samples if lo <= s.mark < lo + early] for lo in range(0, done, early)]
    print(f"peak RSS per {early} files (MiB): " + " ".join(f"{max(st) / MIB:.0f}" for st in stretches if st))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    by_length = commands.add_parser("length", help="one file per length")
    by_length.add_argument("--minutes", type=float, nargs="+", default=[10.0, 60.0])
    by_length.add_argument("extra", nargs="*", help="options passed to witness (after --)")
    many = commands.add_parser("batch", help="one long witness batch")
    many.add_argument("--files", type=int, default=200)
    many.add_argument("--seconds", type=float, default=10.0)
    many.add_argument("--early", type=int, default=20, help="the 'after N files' point")
    many.add_argument("extra", nargs="*", help="options for witness batch (after --)")
    args = parser.parse_args()
    print(load())
    if args.command == "length":
        length(args.minutes, args.extra)
    else:
        batch(args.files, args.seconds, args.early, args.extra)
    print(load())


if __name__ == "__main__":
    main()
