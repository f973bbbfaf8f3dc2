#!/usr/bin/env python3
"""The figures behind the VRAM estimate (``witness/accel/vram_need.py``), measured on the CPU.

* Whisper: the buffer sizes whisper.cpp logs when it loads each ggml model found (weights,
  KV caches, compute buffers), next to what the estimate says for that file.
* Diarization: each ONNX model's activations per batch row, as the peak RSS above a loaded
  session (ONNX Runtime's CPU allocator) while one call of that batch runs; each case in a
  fresh process. Rows: a 10 s window (segmentation), 10 s of fbank frames (CAM++), a 1.6 s
  partial (GE2E).

    PYTHONPATH=. python scripts/measure_model_memory.py [--batches 1 4 16 64]

On a GPU machine the whole-run peak VRAM per engine is ``scripts/bench_plan.py``'s job (NVML).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

ROWS = {"segmentation": ("x", (1, 160000)), "campplus": ("feats", (998, 80)), "ge2e": ("mels", (160, 40))}
LOGGED = ("model size", "kv self size", "kv cross size", "kv pad  size", "compute buffer (conv)",
          "compute buffer (encode)", "compute buffer (cross)", "compute buffer (decode)")


def whisper_rows() -> list[dict]:
    from witness.accel.vram_need import MB, whisper_need
    from witness.asr.whisper import WhisperEngine
    from witness.models.store import cache_dir

    rows = []
    for path in sorted(cache_dir().glob("ggml-*.bin")):
        engine = WhisperEngine(path)
        engine._load()
        logged = {k: float(m.group(1)) for k in LOGGED
                  if (m := re.search(re.escape(k) + r"\s*=\s*([\d.]+) MB", engine.init_log))}
        engine.close()
        estimate, _ = whisper_need(str(path))
        rows.append({"model": path.name, "logged_mb": logged, "logged_total_mb": round(sum(logged.values()), 2),
                     "estimate_mb": round(estimate / MB, 2)})
    return rows


def child(path: str, name: str, shape: tuple[int, ...]) -> dict:
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    loaded = peak_rss()
    session.run(None, {name: x})
    return {"activations_mb": round((peak_rss() - loaded) / 1e6, 1)}


def peak_rss() -> int:
    """This process's peak RSS in bytes (VmHWM: unlike ru_maxrss, not inherited across exec
    from a parent that held more)."""
    with open("/proc/self/status") as status:
        kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    return int(kib) * 1024


def onnx_rows(batches: list[int]) -> list[dict]:
    from witness.models.diarization_choice import CAMPPLUS_CONVERTED, GE2E_CONVERTED, SEGMENTATION_CONVERTED
    from witness.models.store import cache_dir

    files = {"segmentation": SEGMENTATION_CONVERTED, "campplus": CAMPPLUS_CONVERTED, "ge2e": GE2E_CONVERTED}
    rows = []
    for model, file_name in files.items():
        path = cache_dir() / file_name
        if not path.is_file():
            print(f"{model}: {path} not here (a run of witness converts it)", file=sys.stderr)
            continue
        name, row = ROWS[model]
        for batch in batches:
            out = subprocess.run([sys.executable, __file__, "--child", str(path), name, *map(str, (batch, *row))],
                                 capture_output=True, text=True, check=True)
            measured = json.loads(out.stdout)
            rows.append({"model": model, "weights_mb": round(path.stat().st_size / 1e6, 1), "batch": batch,
                         **measured, "per_row_mb": round(measured["activations_mb"] / batch, 1)})
    return rows


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        path, name, *shape = sys.argv[2:]
        print(json.dumps(child(path, name, tuple(int(s) for s in shape))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parser.parse_args()
    print(json.dumps({"whisper": whisper_rows(), "onnx": onnx_rows(args.batches)}, indent=1))


if __name__ == "__main__":
    main()
