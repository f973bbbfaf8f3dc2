#!/usr/bin/env python3
"""How alike the corpus's readers are (CAM++ voice prints), and what that does to the counting.

``--speeds``: each reader against itself played faster or slower (``corpus_derived.played_at``):
CAM++ centroids (``corpus_sources.speaker_prints``) of the first 6 s of 12 of its recordings, against
12 other recordings of it at each speed; and two readers of one sex, per part. This chose ``corpus_derived.SPEEDS``.

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
import tempfile
from pathlib import Path

import numpy as np

from scripts import corpus_librispeech
from scripts.corpus_derived import played_at
from scripts.corpus_sources import speaker_prints
from scripts.make_corpus import default_out
from witness.audio import SAMPLE_RATE, load_audio

SPEEDS = (0.9, 0.95, 1.0, 1.05, 1.1)
BANDS = ((-1.0, 0.3), (0.3, 0.45), (0.45, 0.55), (0.55, 1.0))


def _sources() -> Path:
    return default_out("v3").parent / "sources"


def reader_prints() -> dict[str, np.ndarray]:
    """Every reader's voice print (``corpus_librispeech.voice_prints``' cache) and every derived
    reader's (``corpus_derived.derived_prints``' caches)."""
    prints = {}
    for meta in [*_sources().glob("speakers-v2-*.json"), *_sources().glob("prints-derived-*.json")]:
        prints.update(zip(sorted(json.loads(meta.read_text())), np.load(meta.with_suffix(".npy"))))
    return prints


def speeds_table(source: Path, per_side: int = 12) -> None:
    by_reader: dict[str, list[Path]] = {}
    for f in corpus_librispeech.source_files(source):
        by_reader.setdefault(corpus_librispeech._speaker(f), []).append(f)
    clips = [(f, speed, (reader, side, speed)) for reader, mine in by_reader.items()
             for side, group in (("a", sorted(mine)[0:2 * per_side:2]), ("b", sorted(mine)[1:2 * per_side:2]))
             for f in group for speed in SPEEDS]  # each side's centroid is one "speaker" of speaker_prints
    with tempfile.TemporaryDirectory() as tmp:
        described, rows = speaker_prints(clips, Path(tmp), "speeds", lambda c: "|".join(map(str, c[2])),
                                         lambda name, found: {},
                                         samples_of=lambda c: played_at(load_audio(c[0]).samples[: 8 * SAMPLE_RATE], c[1]))
    centroids = dict(zip(sorted(described), rows))
    a = {r: {s: centroids[f"{r}|a|{s}"] for s in SPEEDS} for r in by_reader}
    b = {r: {s: centroids[f"{r}|b|{s}"] for s in SPEEDS} for r in by_reader}
    readers = sorted(by_reader)
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
