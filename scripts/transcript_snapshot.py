#!/usr/bin/env python3
"""Do two versions of Witness give the same transcripts? Every entry point's outputs on the
sample call and the dev set, then a comparison (for refactors that must change nothing).

    python scripts/transcript_snapshot.py run OUT [--code CHECKOUT] [--quick]
    python scripts/transcript_snapshot.py compare OUT_A OUT_B

``run`` writes, with the Witness of CHECKOUT (default: this one; another checkout's code is
put first on PYTHONPATH and made the working folder): ``witness FILE`` in every format,
``--no-diarize``, ``--words/--turns`` merge only, ``witness diarize`` as RTTM and JSON, and
``witness batch`` over the sample call and the dev set (sim and ami) in every format;
``--quick``: the sample call in every format and its turns alone. ``compare`` lists the files
that differ: JSON without its "timings", html without timings and with an Opus re-encode
(WebM, whose track ids are random) compared by length; the batch manifest is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts import SAMPLE_CALL, SHARED  # noqa: E402

ALL = "txt,md,json,srt,vtt,rttm,tsv,html"


def run(out: Path, code: Path, quick: bool) -> None:
    sample, dev = SAMPLE_CALL / "sample.wav", SHARED / "data" / "dev-set"
    env = {**os.environ, "PYTHONPATH": str(code)}

    def witness(*args) -> None:
        target = Path(args[args.index("-o") + 1])
        if target.exists():  # done by an earlier, interrupted run
            return
        print("+ witness", *args, flush=True)
        subprocess.run([sys.executable, "-m", "witness", "-q", *map(str, args)], check=True, cwd=code, env=env)

    out.mkdir(parents=True, exist_ok=True)
    witness(sample, "-o", out / "transcribe", "--format", ALL)
    witness("diarize", sample, "-o", out / "diarize-json", "--format", "json")
    if quick:
        return
    witness(sample, "-o", out / "nodiar", "--format", "json,txt", "--no-diarize")
    witness(sample, "-o", out / "merge", "--format", "json,txt", "--words", out / "transcribe" / "sample.json",
            "--turns", SAMPLE_CALL / "sample.rttm")
    witness("diarize", sample, "-o", out / "diarize", "--format", "rttm")
    witness("batch", sample, dev / "sim", dev / "ami", "-o", out / "batch", "--format", ALL)


def comparable(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".json":
        document = json.loads(data)
        document.pop("timings", None)
        return json.dumps(document, sort_keys=True).encode()
    if path.suffix == ".html":
        data = re.sub(rb'"timings": ?\{[^}]*\}', b'"timings":{}', data)
        audio = re.search(rb'id="witness-audio">([^<]*)<', data)
        if audio and audio.group(1)[:4] == b"GkXf":  # WebM
            data = data[:audio.start(1)] + b"webm:%d" % len(audio.group(1)) + data[audio.end(1):]
    return data


def compare(a: Path, b: Path) -> int:
    def files(root: Path) -> set[Path]:
        return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.name != "witness-manifest.jsonl"}

    in_a, in_b = files(a), files(b)
    differ = sorted(in_a ^ in_b) + sorted(p for p in in_a & in_b if comparable(a / p) != comparable(b / p))
    for path in differ:
        print("differs or missing:", path)
    print(f"{len(in_a & in_b) - len(set(differ) & in_a & in_b)} identical, {len(differ)} differ or missing")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--code", type=Path, default=REPO)
    r.add_argument("--quick", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out, args.code.resolve(), args.quick)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
