#!/usr/bin/env python3
"""Side by side vs one after the other: the GPU table of the README in one command.

For each Whisper model and call length (the sample call tiled), runs ``witness FILE --serial``
and ``--parallel`` on the same audio, alternating, ``--rounds`` times each, and prints per run
the wall time, each engine's time (alone when serial, side by side when parallel), the
devices every model really ran on (the workers record ``session.get_providers()``), and, where
NVML or pyamdgpuinfo sees a GPU, the peak VRAM above what was in use before the run (sampled
every 0.25 s). Each model is warmed up first (``witness warmup``: downloads, conversions and
the GPU's first-use shader compilation stay out of the timings). Ends with a Markdown table
(medians) and the issue's targets: a 60-minute call with large-v3-turbo in <= 60 s; side by
side >= 1.5x faster than serial from 10 minutes on; every model on the intended device;
serial and parallel transcripts identical.

    python scripts/bench_plan.py                              # the README's GPU table
    python scripts/bench_plan.py --models tiny.en --minutes 3 --rounds 1 [-- extra witness options]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.process_tree import write_call  # noqa: E402
from witness.accel.vram import GIB, probe_gpus  # noqa: E402

MODES = ("serial", "parallel")


def vram_used() -> int | None:
    gpus = probe_gpus()
    return sum(g.total - g.free for g in gpus) if gpus else None


def once(path: Path, model: str, mode: str, extra: list[str]) -> dict:
    """One run: wall time, the transcript JSON and peak VRAM above the baseline (None: no GPU)."""
    out = Path(tempfile.mkdtemp(prefix="witness-plan-"))
    baseline, peak, done = vram_used(), [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], (vram_used() or 0) - baseline)

    sampler = threading.Thread(target=sample, daemon=True)
    if baseline is not None:
        sampler.start()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "witness", "-q", str(path), "-o", str(out), "--format", "json",
                    "--model", model, f"--{mode}", *extra], cwd=REPO, check=True)
    wall = time.perf_counter() - start
    done.set()
    transcript = json.loads((out / (path.stem + ".json")).read_text())
    return {"wall": wall, "transcript": transcript, "vram": None if baseline is None else peak[0]}


def devices(transcript: dict) -> dict[str, str]:
    """Where each model ran: whisper.cpp's device and each ONNX model's provider."""
    engines = transcript["engines"]
    return {"whisper": engines["asr"]["device"], **engines["diarization"].get("providers", {})}


def intended(extra: list[str]) -> dict[str, str]:
    """The providers the diarization models should get here (what ``witness doctor`` shows)."""
    from witness.options import settings_for
    from witness.run.placement import find_devices

    device = extra[extra.index("--device") + 1] if "--device" in extra else None
    found = find_devices(settings_for({"device": device}))
    return {"segmentation": found.segmentation.short, "embedding": found.embedding.short}


def content(transcript: dict) -> list:
    """What must not change between serial and parallel: the utterances."""
    return [(u["start"], u["end"], u["speaker"], u["text"]) for u in transcript["utterances"]]


def gib(values: list[int | None]) -> str:
    known = [v for v in values if v is not None]
    return f"{max(known) / GIB:.2f}" if known else "n/a"


def row(model: str, minutes: int, runs: dict[str, list[dict]]) -> dict:
    med = {m: statistics.median(r["wall"] for r in runs[m]) for m in MODES}
    timing = {m: {k: statistics.median(r["transcript"]["timings"][k] for r in runs[m]) for k in ("asr", "diarization")}
              for m in MODES}
    return {"model": model, "minutes": minutes, "serial": med["serial"], "parallel": med["parallel"],
            "speedup": med["serial"] / med["parallel"], "rtf": med["parallel"] / (60 * minutes), "timing": timing,
            "vram": {m: gib([r["vram"] for r in runs[m]]) for m in MODES},
            "devices": devices(runs["parallel"][0]["transcript"]),
            "identical": all(content(r["transcript"]) == content(runs["serial"][0]["transcript"])
                             for m in MODES for r in runs[m])}


def table(rows: list[dict]) -> str:
    lines = ["| model | audio | serial s | side by side s | speed-up | RTF | ASR alone / side by side s "
             "| diarization alone / side by side s | peak VRAM serial / side by side GiB | devices |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t, d = r["timing"], ", ".join(f"{k} {v}" for k, v in r["devices"].items())
        lines.append(f"| {r['model']} | {r['minutes']} min | {r['serial']:.1f} | {r['parallel']:.1f} | "
                     f"{r['speedup']:.2f}x | {r['rtf']:.3f} | {t['serial']['asr']:.1f} / {t['parallel']['asr']:.1f} | "
                     f"{t['serial']['diarization']:.1f} / {t['parallel']['diarization']:.1f} | "
                     f"{r['vram']['serial']} / {r['vram']['parallel']} | {d} |")
    return "\n".join(lines)


def targets(rows: list[dict], wanted: dict[str, str]) -> list[str]:
    verdict = lambda ok: "met" if ok else "MISSED"  # noqa: E731
    out = []
    for r in rows:
        if r["model"].startswith("large-v3-turbo") and r["minutes"] == 60:
            out.append(f"60 min with {r['model']} in {r['parallel']:.1f} s (<= 60 s): {verdict(r['parallel'] <= 60)}")
        if r["minutes"] >= 10:
            out.append(f"{r['model']} {r['minutes']} min side by side {r['speedup']:.2f}x serial (>= 1.5x): "
                       f"{verdict(r['speedup'] >= 1.5)}")
        on = {k: v for k, v in r["devices"].items() if k in wanted}
        gpu_whisper = r["devices"]["whisper"] != "cpu"
        out.append(f"{r['model']} {r['minutes']} min devices {r['devices']} (intended {wanted}, whisper on a "
                   f"GPU): {verdict(on == wanted and gpu_whisper)}")
        out.append(f"{r['model']} {r['minutes']} min serial and parallel transcripts identical: "
                   f"{verdict(r['identical'])}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["tiny.en", "large-v3-turbo"])
    parser.add_argument("--minutes", type=int, nargs="+", default=[3, 10, 30, 60])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="options passed to witness (after --)")
    args = parser.parse_args()
    folder = Path(tempfile.gettempdir()) / "witness-long"
    folder.mkdir(exist_ok=True)
    print(f"load average {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} cores; GPUs: "
          f"{[g.name for g in probe_gpus()] or 'none seen'}")
    rows = []
    for model in args.models:
        subprocess.run([sys.executable, "-m", "witness", "-q", "warmup", "--model", model, *args.extra],
                       cwd=REPO, check=True)
        for minutes in args.minutes:
            path = folder / f"call-{minutes}min.wav"
            if not path.exists():
                write_call(path, minutes * 60)
            runs: dict[str, list[dict]] = {m: [] for m in MODES}
            for _ in range(args.rounds):
                for mode in MODES:
                    run = once(path, model, mode, args.extra)
                    runs[mode].append(run)
                    t = run["transcript"]
                    peak = "no GPU seen" if run["vram"] is None else f"peak VRAM +{run['vram'] / GIB:.2f} GiB"
                    print(f"{model} {minutes} min {mode:8s} {run['wall']:6.1f} s  asr {t['timings']['asr']:.1f} s, "
                          f"diarization {t['timings']['diarization']:.1f} s; {devices(t)}; {peak}", flush=True)
            rows.append(row(model, minutes, runs))
    print()
    print(table(rows))
    print()
    print("\n".join(targets(rows, intended(args.extra))))


if __name__ == "__main__":
    main()
