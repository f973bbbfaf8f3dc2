"""Peak memory of a diarization run on the sample call tiled to N minutes, each length in a
fresh Python process.

Per length: RSS with the models loaded, the audio's own size, and the peak RSS during the run
(the kernel's high-water mark is reset just before ``Diarizer.run`` through
/proc/self/clear_refs, so the peak is the run's, on top of audio that the caller holds anyway),
plus the whole process's peak (ru_maxrss).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/measure_diarize_memory.py --minutes 10,60
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def child(minutes: float, variant: str, embedding: str = "auto", segmentation: str = "auto") -> dict:
    from scripts.diarization_cases import MODELS, sample_call, tiled
    from witness.diarize.pipeline import Diarizer
    from witness.models.diarization_choice import choose_models

    diarizer = Diarizer(choose_models(embedding, MODELS, segmentation=segmentation), ge2e_variant=variant)
    case = tiled(sample_call(), minutes)
    diarizer.run(case.samples[:11 * 16000])  # sessions loaded
    models_loaded = _status_mb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    out = diarizer.run(case.samples)
    return {"minutes": minutes, "audio_mb": case.samples.nbytes / 2**20, "rss_before_run_mb": models_loaded,
            "peak_during_run_mb": _status_mb("VmHWM"),
            "process_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "speakers": out.num_speakers, "seconds": out.timings["total"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", default="10,60")
    parser.add_argument("--variant", default="pooled")
    parser.add_argument("--embedding", default="auto", help="auto (CAM++), ge2e, ...")
    parser.add_argument("--segmentation", default="auto", help="auto (fp32), int8")
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.variant, args.embedding, args.segmentation)))
        return
    print("load average before: %.1f %.1f %.1f" % os.getloadavg())
    rows = []
    for minutes in map(float, args.minutes.split(",")):
        done = subprocess.run([sys.executable, __file__, "--child", str(minutes), "--variant", args.variant,
                               "--embedding", args.embedding, "--segmentation", args.segmentation],
                              capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    for r in rows:
        print(f"{r['minutes']:5.0f} min: audio {r['audio_mb']:6.1f} MB, RSS before run {r['rss_before_run_mb']:6.1f} MB, "
              f"peak during run {r['peak_during_run_mb']:6.1f} MB (+{r['peak_during_run_mb'] - r['rss_before_run_mb']:.1f}), "
              f"process peak {r['process_peak_mb']:6.1f} MB; {r['speakers']} speakers in {r['seconds']:.1f} s")
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        growth = lambda r: r["peak_during_run_mb"] - r["rss_before_run_mb"]  # noqa: E731
        print(f"ratio {b['minutes']:.0f}/{a['minutes']:.0f} min: peak during run "
              f"{b['peak_during_run_mb'] / a['peak_during_run_mb']:.2f}x, process peak "
              f"{b['process_peak_mb'] / a['process_peak_mb']:.2f}x, the run's own growth "
              f"{growth(b):.1f} / {growth(a):.1f} MB, peak minus the audio "
              f"{(b['peak_during_run_mb'] - b['audio_mb']) / (a['peak_during_run_mb'] - a['audio_mb']):.2f}x")


if __name__ == "__main__":
    main()
