#!/usr/bin/env python3
"""Which Whisper model should be the default? WER, time and memory of each candidate, as a
user runs it: one ``witness FILE`` process per file and model, on the dev calls and the
sample call, ``--no-diarize`` and the full job.

Runs are interleaved (for each file and mode, every model in turn, the order rotated from
file to file), so load from other work on a shared machine hits all models alike: compare
the models within one run, not with another run's figures. Per run: wall seconds, CPU
seconds of the process tree (``os.wait4``: the process and the workers it waited for), and
the peak RSS of its largest process (with ``--no-diarize`` the ASR worker, model loaded) and
of the whole tree, sampled every 0.5 s. WER twice: each spoken digit one word (the issue's
measure) and as ``witness eval wer`` scores (a digit run one word). Models are resolved (converted) before
timing. Results go to OUT/runs.jsonl; a second call with the same OUT only runs what is
missing, then prints the table.

    python scripts/model_table.py [--models tiny.en tiny.en-q8_0 base base-q8_0]
        [--modes asr full] [--threads 2] [--out /tmp/witness-model-table] [-- extra witness options]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.end_to_end import CALLS  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wder import score_words  # noqa: E402
from witness.evaluate.words import words_from_stm, words_from_transcript  # noqa: E402
from witness.transcript import read_transcript  # noqa: E402

MIB = 2**20
MODES = {"asr": ["--no-diarize"], "full": []}


def run_one(call: Path, model: str, mode: str, args: argparse.Namespace) -> dict:
    """One ``witness`` process: its transcript in OUT/<model>/<mode>/, and what it cost."""
    out = args.out / model / mode
    cmd = [sys.executable, "-m", "witness", "-q", str(call), "-o", str(out), "--format", "json", "--overwrite",
           "--model", model, "--threads", str(args.threads), *MODES[mode], *args.extra]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL)
    largest = tree = 0
    while True:  # RSS sampled: ru_maxrss would report this script's own, inherited across fork and exec
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        rss = _rss(psutil.Process(proc.pid))
        largest, tree = max([largest, *rss]), max(tree, sum(rss))
        time.sleep(0.5)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)} failed (exit {os.waitstatus_to_exitcode(status)})")
    return {"file": call.stem, "model": model, "mode": mode, "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime, "peak_rss_mib": largest / MIB, "peak_tree_rss_mib": tree / MIB,
            **score(call, out / f"{call.stem}.json")}


def _rss(proc: psutil.Process) -> list[int]:
    """RSS of each process of the tree (those that exit meanwhile left out)."""
    out = []
    try:
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return out
    for p in tree:
        try:
            out.append(p.memory_info().rss)
        except psutil.Error:
            continue
    return out


def score(call: Path, transcript: Path) -> dict:
    """Word errors and reference words, digits each and joined."""
    ref = words_from_stm(read_stm(call.with_suffix(".stm")))
    hyp = words_from_transcript(read_transcript(transcript))
    out = {}
    for digits in ("each", "joined"):
        wer, _ = score_words(ref, hyp, digits=digits)
        out[f"errors_{digits}"] = wer.substitutions + wer.deletions + wer.insertions
        out[f"words_{digits}"] = wer.reference_words
    return out


def audio_seconds(call: Path) -> float:
    from witness.audio import SAMPLE_RATE, load_audio

    return len(load_audio(call).samples) / SAMPLE_RATE


def table(rows: list[dict], models: list[str], modes: list[str], seconds: float) -> str:
    lines = [f"{len({r['file'] for r in rows})} files, {seconds:.0f} s of audio; sums over the files",
             "| model | mode | WER (digits each) | WER (witness eval wer) | wall s | CPU s | RTF (wall) | CPU s per audio s "
             "| peak RSS MiB: largest process / tree |", "|---|---|---|---|---|---|---|---|---|"]
    for mode in modes:
        for model in models:
            mine = [r for r in rows if r["model"] == model and r["mode"] == mode]
            if not mine:
                continue
            total = {k: sum(r[k] for r in mine) for k in ("wall", "cpu", "errors_each", "words_each",
                                                           "errors_joined", "words_joined")}
            lines.append(f"| {model} | {mode} | {total['errors_each'] / total['words_each']:.1%} | "
                         f"{total['errors_joined'] / total['words_joined']:.1%} | {total['wall']:.0f} | "
                         f"{total['cpu']:.0f} | {total['wall'] / seconds:.3f} | {total['cpu'] / seconds:.3f} | "
                         f"{max(r['peak_rss_mib'] for r in mine):.0f} / "
                         f"{max(r.get('peak_tree_rss_mib', 0) for r in mine):.0f} |")
    lines.append("\nper file, WER digits each (wall s):")
    for mode in modes:
        for model in models:
            cells = [f"{r['file']} {r['errors_each'] / r['words_each']:.1%} ({r['wall']:.0f})"
                     for r in rows if r["model"] == model and r["mode"] == mode]
            lines.append(f"  {model:14s} {mode:5s} " + ", ".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["tiny.en", "tiny.en-q8_0", "base", "base-q8_0"])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", help="file stems to keep (comma-separated)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/witness-model-table"))
    parser.add_argument("extra", nargs="*", help="witness options (after --)")
    args = parser.parse_args()
    from witness.models.whisper_models import resolve_model

    for model in args.models:
        print(f"{model}: {resolve_model(model).path}", flush=True)  # converted now, not inside a timed run
    calls = [c for c in CALLS if not args.only or c.stem in args.only.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "runs.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    done = {(r["file"], r["model"], r["mode"]) for r in rows}
    for i, call in enumerate(calls):
        for mode in args.modes:
            k = i % len(args.models)
            for model in args.models[k:] + args.models[:k]:
                if (call.stem, model, mode) not in done:
                    rows.append(run_one(call, model, mode, args))
                    with log.open("a") as f:
                        f.write(json.dumps(rows[-1]) + "\n")
                    r = rows[-1]
                    print(f"{call.stem} {model} {mode}: {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, "
                          f"WER {r['errors_each'] / r['words_each']:.1%}", flush=True)
    keep = {c.stem for c in calls}
    rows = [r for r in rows if r["file"] in keep and r["model"] in args.models and r["mode"] in args.modes]
    print(table(rows, args.models, args.modes, sum(audio_seconds(c) for c in calls)))


if __name__ == "__main__":
    main()
