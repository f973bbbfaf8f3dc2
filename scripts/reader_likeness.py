#!/usr/bin/env python3
"""How alike the corpus's readers are (CAM++ voice prints), and what that does to the counting.

``--speeds``: each reader against itself played faster or slower (``corpus_derived.played_at``):
CAM++ centroids of the first 6 s of 12 of its recordings, against 12 other recordings of it at each
speed; and two readers of one sex, per part. This chose ``corpus_derived.SPEEDS``.

``--calls SET DUMP...``: the calls of ``measure_counting.py --dump`` files (one SET: tune or check)
by the closest pair of their speakers (voice prints as ``make_corpus`` uses them, v4's derived
readers' included): counted right and mean strict DER per band of likeness.

    PYTHONPATH=. python scripts/reader_likeness.py --speeds --source /path/to/Speaker_partition_module
    PYTHONPATH=. python scripts/reader_likeness.py --calls check /tmp/check-v3.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

from scripts import corpus_librispeech
from scripts.corpus_derived import cached_prints, played_at
from scripts.make_corpus import default_out
from witness.audio import SAMPLE_RATE, load_audio

SPEEDS = (0.9, 0.95, 1.0, 1.05, 1.1)
BANDS = ((-1.0, 0.3), (0.3, 0.45), (0.45, 0.55), (0.55, 1.0))


def _sources() -> Path:
    return default_out("v3").parent / "sources"


def reader_prints() -> dict[str, np.ndarray]:
    """Every reader's voice print (``corpus_librispeech.voice_prints``' cache) and every derived
    reader's (``corpus_derived.derived_prints``' caches)."""
    sources = _sources()
    info = json.loads(next(sources.glob("speakers-v2-*.json")).read_text())
    prints = dict(zip(sorted(info), np.load(next(sources.glob("speakers-v2-*.npy")))))
    for path in sources.glob("prints-derived-*.npz"):
        prints.update(cached_prints(path))
    return prints


def speeds_table(source: Path, per_side: int = 12) -> None:
    from witness.diarize.embedding import CamPlusPlusEmbedder
    from witness.models.campplus_onnx import campplus_onnx_path

    embedder = CamPlusPlusEmbedder(campplus_onnx_path(None), threads=1)
    files = corpus_librispeech.source_files(source)
    by_reader: dict[str, list[Path]] = {}
    for f in files:
        by_reader.setdefault(corpus_librispeech._speaker(f), []).append(f)

    def centroid(group: list[Path], speed: float) -> np.ndarray:
        rows = [embedder.embed(played_at(load_audio(f).samples[: 8 * SAMPLE_RATE], speed)[None, : 6 * SAMPLE_RATE])[0]
                for f in group]
        c = np.mean(rows, axis=0)
        return c / np.linalg.norm(c)

    a, b = {}, {}
    for reader, mine in sorted(by_reader.items()):
        mine = sorted(mine)
        a[reader] = {s: centroid(mine[0:2 * per_side:2], s) for s in SPEEDS}
        b[reader] = {s: centroid(mine[1:2 * per_side:2], s) for s in SPEEDS}
    readers = sorted(a)
    print("one reader, other recordings:")
    for lo, hi in [(1.0, s) for s in SPEEDS] + [(0.95, 1.05), (0.9, 1.1)]:
        c = [float(a[r][lo] @ b[r][hi]) for r in readers]
        print(f"  x{lo:.2f} against x{hi:.2f}: mean {np.mean(c):.3f} ({min(c):.3f}-{max(c):.3f})")
    info = json.loads(next(_sources().glob("speakers-v2-*.json")).read_text())
    parts = json.loads((default_out("v3") / "index.json").read_text())["parts"]
    print("two readers of one sex, at x1.00:")
    for part, members in parts.items():
        for sex in "MF":
            group = [r for r in members if info[r]["sex"] == sex]
            c = [float(a[x][1.0] @ b[y][1.0]) for x, y in itertools.permutations(group, 2)]
            print(f"  {part} {sex} ({len(group)}): mean {np.mean(c):.3f}, closest {max(c):.3f}")


def calls_table(part: str, dumps: list[Path]) -> None:
    prints = reader_prints()
    rows = []
    for dump in dumps:
        for line in dump.read_text().splitlines():
            r = json.loads(line)
            if r.get("set") != part:
                continue
            speakers = json.loads(Path(r["wav"]).with_suffix(".json").read_text())["speakers"]
            closest = max(float(prints[x] @ prints[y]) for x, y in itertools.combinations(speakers, 2))
            rows.append((r["speakers"], closest, r["found"] == r["speakers"], r["error"] / r["total"]))
    for name, keep in (("2 speakers", lambda n: n == 2), ("3-4 speakers", lambda n: 3 <= n <= 4)):
        for lo, hi in BANDS:
            sel = [r for r in rows if keep(r[0]) and lo <= r[1] < hi]
            if sel:
                print(f"  {name:12s} closest pair {lo:5.2f}-{hi:.2f}: counted right {sum(r[2] for r in sel):3d}/{len(sel):3d}"
                      f"  mean strict DER {np.mean([r[3] for r in sel]):.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeds", action="store_true")
    parser.add_argument("--source", type=Path, help="with --speeds: the corpus source (make_corpus --source)")
    parser.add_argument("--calls", nargs="+", metavar=("SET", "DUMP"))
    args = parser.parse_args()
    if args.speeds:
        speeds_table(args.source)
    if args.calls:
        calls_table(args.calls[0], [Path(p) for p in args.calls[1:]])


if __name__ == "__main__":
    main()
