"""Does each process run the threads the plan gives it? Runs a witness command, samples its
process tree with psutil, and prints per process: the most OS threads seen, and how many
threads burned CPU (over 0.2 s: the ones doing the work), beside the plan's counts.

    python scripts/measure_threads.py -- ../shared/data/dev-set/sim/devcall_01.wav --models-dir ../shared/models
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

BUSY_SECONDS = 0.2  # a thread with more CPU time than this did work


def sample(proc: subprocess.Popen) -> dict[int, dict]:
    """Per pid of the tree: its name, the most threads seen, CPU seconds per thread (last look)."""
    seen: dict[int, dict] = {}
    root = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for p in tree:
            try:
                threads = p.threads()
                entry = seen.setdefault(p.pid, {"name": _name(p), "max": 0, "cpu": {}})
            except psutil.Error:
                continue
            if entry["name"] == "worker":
                entry["name"] = _engine(p)
            entry["max"] = max(entry["max"], len(threads))
            entry["cpu"].update({t.id: t.user_time + t.system_time for t in threads})
        time.sleep(0.1)
    return seen


def _name(p: psutil.Process) -> str:
    cmd = " ".join(p.cmdline())
    if "resource_tracker" in cmd:
        return "tracker"
    return "parent" if "-m witness" in cmd else "worker" if "multiprocessing" in cmd else p.name()


def _engine(p: psutil.Process) -> str:
    """Which engine a worker runs, from the native libraries it has loaded so far."""
    try:
        paths = " ".join(m.path for m in p.memory_maps())
    except psutil.Error:
        return "worker"
    return "asr" if "whisper" in paths else "diarization" if "onnxruntime" in paths else "worker"


def main(args: list[str]) -> None:
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "witness", "-q", *args, "-o", out, "--format", "json", "--overwrite"]
        proc = subprocess.Popen(command)
        seen = sample(proc)
        proc.wait()
        plan = json.loads(next(Path(out).glob("*.json")).read_text())["plan"]
    print(f"plan: whisper.cpp {plan['whisper_threads']}, ONNX Runtime {plan['onnx_threads']} in all")
    for pid, entry in seen.items():
        busy = sum(cpu > BUSY_SECONDS for cpu in entry["cpu"].values())
        print(f"{entry['name']:<8} pid {pid}: at most {entry['max']} threads, {busy} busy (> {BUSY_SECONDS} s CPU)")


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:])
