#!/usr/bin/env python3
"""`witness batch` against one `witness FILE` process per file, in one run: wall time and
peak memory of the whole process tree.

Three sets of 20 calls made from the sample call: 20 copies of it (30 s each), a mix of
lengths (7 x 10 s, 7 x 30 s, 6 x 2 min tiles), and 20 cuts of 10 s. For each set and round: `witness batch DIR -o
OUT`, then the 20 files one `witness FILE -o OUT` process after another; RSS and PSS of the
process tree (summed over its processes) sampled every 0.2 s with psutil. Ratios are taken
within a round, so machine load affects both sides alike.

    python scripts/bench_batch.py [--rounds 2] [--models-dir ../shared/models] [-- extra witness options]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.process_tree import MIB, load, run_sampled, witness, write_call  # noqa: E402

SETS = {
    "copies": [30.0] * 20,
    "mix": [10.0] * 7 + [30.0] * 7 + [120.0] * 6,
    "short": [10.0] * 20,
}


def make_set(folder: Path, lengths: list[float]) -> list[Path]:
    return [write_call(folder / f"call-{i:02d}-{int(s)}s.wav", s, offset=(5.0 if s < 30 else 0.0))
            for i, s in enumerate(lengths)]


def one_round(files: list[Path], folder: Path, common: list[str]) -> dict:
    out = Path(tempfile.mkdtemp(prefix="witness-bench-", dir=folder))
    wall_batch, batch = run_sampled(witness("batch", str(files[0].parent), "-o", str(out / "batch"), *common))
    separate_wall, separate = 0.0, []
    for path in files:
        wall, samples = run_sampled(witness(str(path), "-o", str(out / "single"), *common))
        separate_wall += wall
        separate.extend(samples)
    rows = [json.loads(line) for line in (out / "batch" / "witness-manifest.jsonl").read_text().splitlines()]
    assert all(r["status"] == "ok" for r in rows) and len(rows) == len(files), rows
    shutil.rmtree(out)
    return {
        "batch_s": wall_batch, "separate_s": separate_wall, "ratio": separate_wall / wall_batch,
        "batch_peak_rss_mib": max(s.rss for s in batch) / MIB, "separate_peak_rss_mib": max(s.rss for s in separate) / MIB,
        "batch_peak_pss_mib": max(s.pss for s in batch) / MIB, "separate_peak_pss_mib": max(s.pss for s in separate) / MIB,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--sets", default=",".join(SETS), help=f"which of {', '.join(SETS)}")
    parser.add_argument("--models-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "models"))
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "witness-bench-batch")
    parser.add_argument("extra", nargs="*", help="options for both witness commands (after --)")
    args = parser.parse_args()
    common = ["--format", "json", "--models-dir", args.models_dir, *args.extra]
    print(load())
    for name in args.sets.split(","):
        lengths = SETS[name]
        files = make_set(args.folder / name, lengths)
        audio = sum(lengths)
        for r in range(args.rounds):
            m = one_round(files, args.folder, common)
            print(f"{name:6s} round {r + 1}: {len(files)} files, {audio / 60:.1f} min of audio | "
                  f"batch {m['batch_s']:6.1f} s (RTF {m['batch_s'] / audio:.3f}) | "
                  f"separate {m['separate_s']:6.1f} s (RTF {m['separate_s'] / audio:.3f}) | "
                  f"ratio {m['ratio']:.2f}x | peak tree RSS batch {m['batch_peak_rss_mib']:.0f} MiB, "
                  f"one witness FILE {m['separate_peak_rss_mib']:.0f} MiB | peak PSS "
                  f"{m['batch_peak_pss_mib']:.0f} / {m['separate_peak_pss_mib']:.0f} MiB", flush=True)
    print(load())


if __name__ == "__main__":
    main()
