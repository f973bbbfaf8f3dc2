"""Does each process run the threads the plan gives it? Runs a witness command with its
process tree sampled (``process_tree.run_sampled``) and prints per process: the most OS
threads seen, and how many burned CPU (over 0.2 s: the ones doing the work), beside the
plan's counts.

    python scripts/measure_threads.py ../shared/data/dev-set/sim/devcall_01.wav --models-dir ../shared/models
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.process_tree import processes, run_sampled, witness  # noqa: E402

BUSY_SECONDS = 0.2  # a thread with more CPU time than this did work


def main(args: list[str]) -> None:
    with tempfile.TemporaryDirectory() as out:
        _, samples = run_sampled(witness(*args, "-o", out, "--format", "json", "--overwrite"), every=0.1)
        plan = json.loads(next(Path(out).glob("*.json")).read_text())["plan"]
    print(f"plan: whisper.cpp {plan['whisper_threads']}, ONNX Runtime {plan['onnx_threads']} in all")
    for proc in processes(samples):
        busy = sum(seconds > BUSY_SECONDS for seconds in proc.cpu.values())
        print(f"{proc.label:<20} at most {proc.most_threads} threads, {busy} busy (> {BUSY_SECONDS} s CPU)")


if __name__ == "__main__":
    main(sys.argv[1:])
