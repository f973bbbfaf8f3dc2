#!/usr/bin/env python3
"""Where a whole job's wall time goes on the cores: runs ``witness FILE`` and samples its process
tree every ``--every`` s (CPU seconds per process and per thread, and the whole machine's busy
cores: the other load), writes a CSV of cores used per interval, and prints each stretch of the
run (which processes worked, on how many cores) with the idle core-seconds in it.

    python scripts/timeline.py ~/.cache/witness/corpus/v1/check/check_long.wav --csv /tmp/tl.csv
    python scripts/timeline.py CALL.wav -- --serial       # extra witness options after --

The CSV has one row per interval: its end (s since the start), the job's cores used in all and
per process (parent, asr, diarization, …), its busiest threads, and the machine's busy cores
(the job's included). The summary groups intervals into stretches by which processes worked.

``--stages`` instead runs each stage of the default plan in this process, one after the other,
and says where the time goes inside it (``stages``): imports, plan and models, audio decoding;
the ASR engine's load, its own clock per stage (VAD, packing, first pass, each fallback
temperature, words) and whisper.cpp's counters (mel, encode, decode, batchd, prompt; runs);
diarization's load (ONNX sessions) and stages (segmentation and embedding streamed side by
side, clustering, reconstruction, unmixing, splitting); the merge; and per thread the CPU
seconds of every ONNX model run and filterbank call:

    python scripts/timeline.py ~/.cache/witness/corpus/v1/check/check_long.wav --stages
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from scripts.process_tree import engine, load, witness  # noqa: E402

WORKING = 0.15  # a process using more than this share of a core in an interval was working


@dataclass
class Tick:
    at: float  # end of the interval, s since the start
    seconds: float  # the interval's length
    job: dict[str, float] = field(default_factory=dict)  # process label -> cores used in the interval
    threads: dict[str, int] = field(default_factory=dict)  # process label -> threads over WORKING
    demand: float = 0.0  # cores the job's threads ran or waited to run on (its use on an idle machine)
    machine: float = 0.0  # busy cores of the whole machine


def _label(p: psutil.Process, root: int, labels: dict[int, str]) -> str:
    """Which engine a process runs, from the native libraries it has mapped (asked until it says)."""
    if p.pid == root:
        return "parent"
    if labels.get(p.pid, "worker") != "worker":
        return labels[p.pid]
    try:
        label = engine(p)
    except psutil.Error:
        label = "worker"
    labels[p.pid] = label
    return label


def _runnable(pid: int, tid: int) -> float:
    """Seconds the thread has run plus waited on a run queue (``/proc/.../schedstat``)."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            ran, waited, _ = f.read().split()
    except (OSError, ValueError):
        return 0.0
    return (int(ran) + int(waited)) / 1e9


def sample(cmd: list[str], every: float) -> tuple[float, list[Tick], int]:
    """(wall s, ticks, exit code) of ``cmd`` sampled every ``every`` s."""
    start = last = time.perf_counter()
    proc = psutil.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL)
    labels: dict[int, str] = {}
    before: dict[tuple[int, int], float] = {}  # (pid, tid) -> CPU s at the last sample
    runnable: dict[tuple[int, int], float] = {}  # (pid, tid) -> s run or waited to run, at the last sample
    machine_before = psutil.cpu_times()
    ticks: list[Tick] = []
    while True:
        done = proc.poll() is not None
        now = time.perf_counter()
        tick = Tick(now - start, now - last)
        try:
            tree = [proc] + proc.children(recursive=True)
        except psutil.Error:
            tree = []
        for p in tree:
            try:
                label = _label(p, proc.pid, labels)
                threads = p.threads()
            except psutil.Error:
                continue
            for t in threads:
                cpu = t.user_time + t.system_time
                used = cpu - before.get((p.pid, t.id), 0.0)
                before[(p.pid, t.id)] = cpu
                tick.job[label] = tick.job.get(label, 0.0) + used
                tick.threads[label] = tick.threads.get(label, 0) + (used > WORKING * tick.seconds)
                ready = _runnable(p.pid, t.id)
                tick.demand += ready - runnable.get((p.pid, t.id), 0.0)  # every thread began with the job
                runnable[(p.pid, t.id)] = ready
        machine = psutil.cpu_times()
        idle = lambda t: t.idle + t.iowait  # noqa: E731
        total = sum(machine) - sum(machine_before)
        tick.machine = psutil.cpu_count() * (1 - (idle(machine) - idle(machine_before)) / total) if total else 0.0
        machine_before, last = machine, now
        tick.job = {k: v / tick.seconds for k, v in tick.job.items()}
        tick.demand /= tick.seconds
        ticks.append(tick)
        if done:
            break
        time.sleep(every)
    return time.perf_counter() - start, ticks, proc.returncode


def idle_machine(t: Tick, cores: int) -> tuple[float, float]:
    """(s, idle core-s) the tick's work would take on an idle machine: its CPU seconds at the
    job's runnable threads (``demand``, at most ``cores``) at full speed."""
    cpu = sum(t.job.values()) * t.seconds
    parallel = min(max(t.demand, 1e-9), cores)
    wall = cpu / parallel if cpu > 0.01 * t.seconds else 0.0
    return wall, wall * (cores - parallel)


def stretches(ticks: list[Tick], cores: int) -> list[tuple[float, float, str, float, float, float, float]]:
    """(start, end, who worked, CPU s, runnable threads, idle-machine s, idle-machine idle
    core-s) per run of ticks in which the same processes worked."""
    out: list[list] = []
    for t in ticks[1:]:
        who = "+".join(sorted(k for k, v in t.job.items() if v > WORKING / 4)) or "-"
        cpu, (wall, idle) = sum(t.job.values()) * t.seconds, idle_machine(t, cores)
        if out and out[-1][2] == who:
            s = out[-1]
            s[1], s[3], s[4], s[5], s[6] = t.at, s[3] + cpu, s[4] + t.demand * t.seconds, s[5] + wall, s[6] + idle
        else:
            out.append([t.at - t.seconds, t.at, who, cpu, t.demand * t.seconds, wall, idle])
    return [(a, b, who, cpu, demand / (b - a), wall, idle) for a, b, who, cpu, demand, wall, idle in out]


class ThreadClock:
    """Thread CPU and wall seconds per (thread, what) of wrapped calls: each ONNX Runtime
    ``LazySession.run`` by model file, and the numpy filterbank functions the embedders call.
    Nested wrapped calls count once (in the outermost), except model runs."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
        self._lock = threading.Lock()
        self._depth = threading.local()

    def wrap(self, owner: Any, name: str, label: Callable[[tuple], str] | None = None, nested: bool = False) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            depth = getattr(self._depth, "n", 0)
            self._depth.n = depth + 1
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self._depth.n = depth
                if depth == 0 or nested:
                    what = label(args) if label else name
                    with self._lock:
                        row = self.seconds[(threading.current_thread().name.split("_")[0][:16], what)]
                        row[0] += time.thread_time() - cpu
                        row[1] += time.perf_counter() - wall
                        row[2] += 1

        setattr(owner, name, timed)

    def report(self, title: str) -> None:
        for (thread, what), (cpu, wall, calls) in sorted(self.seconds.items(), key=lambda kv: -kv[1][0]):
            print(f"    {title:<12} {thread:<16} {what:<34} CPU {cpu:7.2f} s  wall {wall:7.2f} s  {calls:6d} calls")
        self.seconds.clear()


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@contextmanager
def _stage(name: str) -> Iterator[None]:
    wall, cpu = time.perf_counter(), _cpu()
    yield
    print(f"  {name:<28} wall {time.perf_counter() - wall:7.2f} s  CPU {_cpu() - cpu:7.2f} s", flush=True)


def stages(call: Path) -> None:
    """Each stage of the default serial plan run in this process, one after the other, as the
    workers and the parent run them (the same engine jobs, threads and models), with what
    happens inside it: the ASR engine's own clock and whisper.cpp's counters, diarization's
    stage timings, and per thread the CPU seconds of every ONNX model run and filterbank call
    (diarization's and the merge's second opinion)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the ASR worker sets it
    with _stage("imports"):
        from witness.accel.onnx_session import LazySession
        from witness.asr.whisper import WhisperEngine
        from witness.config import load_settings
        import witness.diarize.embedding as embedding
        from witness.run.engines import FACTORIES, WordsResult
        from witness.run.orchestrate import Orchestrator, decode_shared
    clock = ThreadClock()
    clock.wrap(LazySession, "run", lambda args: "model " + Path(str(args[0].path)).name[:24], nested=True)
    for name in ("fbank_frames", "kaldi_fbank_of_frames", "mean_normalise"):
        clock.wrap(embedding, name)
    with _stage("plan, models resolved"):
        host = Orchestrator(load_settings())
        jobs = host.engine_jobs()
    with _stage("audio decoded"):
        meta, audio = decode_shared(str(call))
    try:
        with _stage("asr: engine loaded"):
            a = jobs.asr
            engine = WhisperEngine(a.model.path, a.options, a.model.name, a.model.info, a.vad)
        began = time.perf_counter()
        with _stage("asr: transcribed"):
            result = engine.transcribe(audio.open())
        words = WordsResult(result.words, result.language, result.info.to_dict(), time.perf_counter() - began)
        clock_stages = {k: (round(v, 2), engine.clock.counts[k]) for k, v in engine.clock.seconds.items()}
        print(f"    asr stages (wall s, calls; decoders add up): {clock_stages}")
        print(f"    whisper.cpp counters (s, runs): {({k: round(v, 2) for k, v in engine.whisper_timings().items()})}")
        stats = result.info.stats
        print(f"    {stats.pieces} pieces, {stats.redecoded} decoded again, {stats.rests} rests, {stats.gaps} gaps; "
              f"{len(result.words)} words")
        clock.report("asr")
        engine.close()
        with _stage("diarization: engine loaded"):
            diarize = FACTORIES["diarization"](jobs.diarization)
        clock.report("loading")
        with _stage("diarization: diarized"):
            turns = diarize(audio, None)
        print(f"    diarization stages (wall s): {({k: round(v, 2) for k, v in turns.timings.items()})}")
        clock.report("diarization")
        with _stage("merge (second opinion)"):
            transcript = host.transcript(meta, {"asr": words, "diarization": turns}, {"decode": 0, "engines": 0},
                                         audio)
        clock.report("merge")
        print(f"    {len(transcript.words)} words, {len(transcript.speakers)} speakers")
    finally:
        audio.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("call", type=Path)
    parser.add_argument("--every", type=float, default=0.5, help="seconds between samples (default 0.5)")
    parser.add_argument("--csv", type=Path, help="write the intervals here")
    parser.add_argument("--min-stretch", type=float, default=2.0, help="merge stretches shorter than this into "
                        "the summary's 'short' line (default 2 s)")
    parser.add_argument("--stages", action="store_true", help="each stage in this process, and inside it (above)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:cut]), argv[cut + 1:]  # witness options after --
    print(load(), flush=True)
    if args.stages:
        stages(args.call)
        print(load())
        return
    with tempfile.TemporaryDirectory() as out:
        wall, ticks, code = sample(witness(str(args.call), "-o", out, "--format", "json", *extra), args.every)
        if code != 0:
            raise SystemExit(f"witness failed (exit {code})")
        timings = json.loads(next(Path(out).glob("*.json")).read_text()).get("timings", {})
    names = sorted({k for t in ticks for k in t.job})
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["at", "job_cores", *names, *(f"{n}_threads" for n in names), "demand_cores", "machine_cores"])
            for t in ticks:
                w.writerow([f"{t.at:.2f}", f"{sum(t.job.values()):.2f}", *(f"{t.job.get(n, 0):.2f}" for n in names),
                            *(t.threads.get(n, 0) for n in names), f"{t.demand:.2f}", f"{t.machine:.2f}"])
    cpu = {n: sum(t.job.get(n, 0) * t.seconds for t in ticks) for n in names}
    print(f"wall {wall:.1f} s, CPU {sum(cpu.values()):.1f} s ({', '.join(f'{n} {v:.1f}' for n, v in cpu.items())}); "
          f"timings {json.dumps(timings)}")
    cores = psutil.cpu_count()
    print(f"{'from':>7} {'to':>7} {'who worked':<32} {'CPU s':>7} {'runnable':>8} {'idle-machine s':>14} "
          f"{'idle core-s':>11}")
    short = [0.0, 0.0, 0.0]
    parts = stretches(ticks, cores)
    for a, b, who, cpu_s, runnable, wall_s, idle in parts:
        if b - a < args.min_stretch:
            short = [short[0] + b - a, short[1] + wall_s, short[2] + idle]
            continue
        print(f"{a:7.1f} {b:7.1f} {who:<32} {cpu_s:7.1f} {runnable:8.2f} {wall_s:14.1f} {idle:11.1f}")
    print(f"shorter stretches: {short[0]:.1f} s here, {short[1]:.1f} s idle-machine, {short[2]:.1f} idle core-s")
    print(f"on an idle machine (estimate): {sum(p[5] for p in parts):.1f} s, {sum(p[6] for p in parts):.1f} idle "
          f"core-s of {cores} cores")
    print(load())


if __name__ == "__main__":
    main()
