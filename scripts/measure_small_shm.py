#!/usr/bin/env python3
"""A long call through a small shared-memory folder (a default Docker container's 64 MB
/dev/shm): does it finish, what does it cost, and is its transcript the one made with a
large /dev/shm?

    python scripts/measure_small_shm.py run large --hours 3 [-- extra witness options]
    mount -t tmpfs -o size=64m tmpfs /mnt/shm64        # as root
    python scripts/measure_small_shm.py run small --shm /mnt/shm64 --hours 3 [-- extra options]
    python scripts/measure_small_shm.py compare

``run``: the sample call tiled to ``--hours`` (kept in ``FOLDER``), one `witness -v FILE -o
FOLDER/<label> --format json,txt` with ``$WITNESS_SHARED_AUDIO_DIR`` at ``--shm`` (unset for
``large``), the whole process tree sampled with psutil (scripts/process_tree.py). Prints the
wall time, the peak RSS and PSS of the tree, and Witness's own lines about where the audio
went. ``compare``: whether the two runs' txt transcripts are equal, and their json's
utterances. The runs are apart in time on a shared machine: compare their walls with care.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.process_tree import MIB, load, run_sampled, write_call  # noqa: E402

FOLDER = Path(tempfile.gettempdir()) / "witness-small-shm"


def run(label: str, hours: float, shm: str | None, extra: list[str]) -> None:
    call = FOLDER / f"call-{hours:g}h.wav"
    if not call.exists():
        write_call(call, hours * 3600)
    out = FOLDER / label
    out.mkdir(parents=True, exist_ok=True)
    if shm:
        os.environ["WITNESS_SHARED_AUDIO_DIR"] = shm
    else:
        os.environ.pop("WITNESS_SHARED_AUDIO_DIR", None)
    log = out / "stderr.log"
    cmd = [sys.executable, "-m", "witness", "-v", str(call), "-o", str(out), "--format", "json,txt", "--overwrite", *extra]
    print(f"{label}: {' '.join(cmd)} (WITNESS_SHARED_AUDIO_DIR={shm or 'unset'}); {load()}", flush=True)
    with open(log, "w") as err:
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)  # the tree's stderr (run_sampled passes it through) goes to the log
        try:
            wall, samples = run_sampled(cmd, every=1.0)
        finally:
            os.dup2(saved, 2)
    peak = max(samples, key=lambda s: s.rss)
    where = [line for line in log.read_text().splitlines() if "shared memory" in line or "decoded audio" in line]
    print(f"{label}: wall {wall:.0f} s (RTF {wall / (hours * 3600):.4f}); peak tree RSS {peak.rss / MIB:.0f} MiB, "
          f"peak PSS {max(s.pss for s in samples) / MIB:.0f} MiB; {load()}", flush=True)
    print("\n".join(f"  {line}" for line in where) or "  (no line about where the audio went)")
    subprocess.run(["df", "-h", shm or "/dev/shm"], check=False)


def compare() -> None:
    txt = [(FOLDER / label).glob("*.txt") for label in ("large", "small")]
    a, b = (next(iter(t)).read_text() for t in txt)
    print(f"txt: {'equal' if a == b else 'DIFFERENT'} ({len(a.splitlines())} lines)")
    ja, jb = (json.loads(next((FOLDER / label).glob("*.json")).read_text()) for label in ("large", "small"))
    same = ja["utterances"] == jb["utterances"]
    print(f"json utterances: {'equal' if same else 'DIFFERENT'} ({len(ja['utterances'])} utterances)")


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("label", choices=("large", "small"))
    r.add_argument("--hours", type=float, default=3.0)
    r.add_argument("--shm", help="the shared-memory folder (a small tmpfs); unset: /dev/shm")
    sub.add_parser("compare")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.label, args.hours, args.shm, extra)
    else:
        compare()


if __name__ == "__main__":
    main()
