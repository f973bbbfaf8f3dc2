#!/usr/bin/env python3
"""A long call through a small shared-memory folder (a default Docker container's 64 MB
/dev/shm): does it finish, what does it cost, and is its transcript the one made with a
large /dev/shm?

    mount -t tmpfs -o size=64m tmpfs /mnt/shm64        # as root
    python scripts/measure_small_shm.py run large --minutes 20 [-- extra witness options]
    python scripts/measure_small_shm.py run small --shm /mnt/shm64 --minutes 20 [-- extra options]
    python scripts/measure_small_shm.py compare

``run``: the sample call tiled to ``--minutes`` (kept in ``FOLDER``), one `witness -v FILE -o
FOLDER/<label> --format json,txt` with ``$WITNESS_SHARED_AUDIO_DIR`` at ``--shm`` (unset for
``large``: /dev/shm), the whole process tree sampled with psutil (scripts/process_tree.py).
Prints the wall time, the peak RSS and PSS of the tree, and Witness's own line about where
the audio went. ``--merge-only``: no engines; the sample call's words (its STM) and turns
(its RTTM) tiled as the audio is, through ``--words``/``--turns``: decoding, the merge and
the writers on the whole length, in seconds instead of the engines' hour. ``compare``:
whether the two runs' txt transcripts are equal, and their json's utterances. Run the two
side by side (two shells) so that both see the same load on a shared machine.
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


def run(label: str, minutes: float, shm: str | None, merge_only: bool, extra: list[str]) -> None:
    call = FOLDER / f"call-{minutes:g}min.wav"
    if not call.exists():
        write_call(call, minutes * 60)
    if merge_only:
        extra = [*tiled_words_and_turns(minutes * 60), *extra]
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
    where = [line for line in log.read_text().splitlines() if "decoded audio" in line or "Error" in line]
    print(f"{label}: wall {wall:.1f} s (RTF {wall / (minutes * 60):.4f}); peak tree RSS {peak.rss / MIB:.0f} MiB, "
          f"peak PSS {max(s.pss for s in samples) / MIB:.0f} MiB; {load()}", flush=True)
    print("\n".join(f"  {line}" for line in where) or "  (no line about where the audio went)")
    subprocess.run(["df", "-h", shm or "/dev/shm"], check=False)


def tiled_words_and_turns(seconds: float) -> list[str]:
    """``--words FILE --turns FILE``: the sample call's STM words and RTTM turns repeated as
    ``write_call`` repeats its audio, up to ``seconds``."""
    from scripts import SAMPLE_CALL
    from tests.stm_transcript import spread_words
    from witness.audio import load_audio
    from witness.evaluate.stm import read_stm
    from witness.rttm import read_rttm

    words = spread_words(read_stm(SAMPLE_CALL / "sample.stm"))
    turns = [t for ts in read_rttm(SAMPLE_CALL / "sample.rttm").values() for t in ts]
    period = load_audio(SAMPLE_CALL / "sample.wav").duration  # s: write_call repeats it end to end
    reps = range(int(seconds // period) + 1)
    tiled = [{"start": w.start + k * period, "end": w.end + k * period, "text": w.text}
             for k in reps for w in words if w.end + k * period <= seconds]
    words_path, turns_path = FOLDER / f"words-{seconds:g}s.json", FOLDER / f"turns-{seconds:g}s.rttm"
    words_path.write_text(json.dumps(tiled))
    turns_path.write_text("".join(
        f"SPEAKER call 1 {t.start + k * period:.3f} {t.end - t.start:.3f} <NA> <NA> {t.speaker} <NA> <NA>\n"
        for k in reps for t in turns if t.end + k * period <= seconds))
    return ["--words", str(words_path), "--turns", str(turns_path)]


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
    r.add_argument("--minutes", type=float, default=180.0)
    r.add_argument("--shm", help="the shared-memory folder (a small tmpfs); unset: /dev/shm")
    r.add_argument("--merge-only", action="store_true", help="no engines: the sample's words and turns, tiled")
    sub.add_parser("compare")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.label, args.minutes, args.shm, args.merge_only, extra)
    else:
        compare()


if __name__ == "__main__":
    main()
