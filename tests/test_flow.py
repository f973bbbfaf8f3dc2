"""The flow's scheduling on real worker processes with engines that only sleep: files are
pipelined across the two workers in a parallel plan and never overlap in a serial one, at
most ``jobs`` files are in flight, a worker killed mid-batch is replaced and its files are
retried or resubmitted, and a bad file is reported without stopping the others."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from tests.worker_engines import crashing_engine, sleeping_engine
from witness.errors import InputError
from witness.run.flow import FileJob, Flow
from witness.transcript import AudioMeta, Transcript
from witness.run.workers import SharedAudio, Worker, WorkerDied

ASR_SECONDS, DIARIZATION_SECONDS = 0.05, 0.6  # diarization the slow one: Whisper can run ahead


class SleepingEngines:
    """The orchestrator's side of the flow, with sleeping engines; records what it saw."""

    names = ("asr", "diarization")

    def __init__(self, mode: str, crash: dict[str, int] | None = None, follow: tuple[str, int] | None = None):
        self.mode = mode
        self.crash = crash or {}  # engine name -> the job its workers die on (0: every job)
        self.follow = follow  # (a folder, jobs): diarization job n ends after ASR job n + 1 starts
        self.workers: dict[str, Worker] = {}
        self.decoded: dict[str, float] = {}  # path -> when it was decoded
        self.shared: list[str] = []  # the decoded audio files it made
        self.log: list[tuple[str, str]] = []  # workers started and closed, files decoded, in order

    def decode(self, path: str, sha256: str = ""):
        if path.endswith(".bad"):
            raise InputError("not an audio file", path)
        self.decoded[path] = time.time()
        self.log.append(("decode", path))
        audio = SharedAudio.create(np.zeros(16000, dtype=np.float32))
        self.shared.append(audio.path)
        return AudioMeta(path, 1.0), audio

    def given(self, path: str):
        return {}

    def worker(self, name: str) -> Worker:
        if name not in self.workers or not self.workers[name].alive:
            seconds = ASR_SECONDS if name == "asr" else DIARIZATION_SECONDS
            if name in self.crash:
                self.workers[name] = Worker(name, crashing_engine, (sleeping_engine, self.crash[name], seconds))
            elif self.follow:
                marks = (self.follow[0], None) if name == "asr" else (None, self.follow)
                self.workers[name] = Worker(name, sleeping_engine, (seconds, *marks))
            else:
                self.workers[name] = Worker(name, sleeping_engine, (seconds,))
            self.log.append(("start", name))
        return self.workers[name]

    def release(self, name: str, timeout: float = 10.0) -> None:
        worker = self.workers.pop(name, None)
        if worker is not None:
            worker.close(timeout)
            self.log.append(("close", name))

    def transcript(self, meta, results, timings, audio=None):
        return Transcript(audio=meta, engines=dict(results), timings={**timings, "total": 0.0})

    def close(self):
        for name in list(self.workers):
            self.release(name)


def run(mode: str, paths: list[str], jobs: int, retries: int = 1, keep_workers: bool = True,
        crash: dict[str, int] | None = None, follow: str | None = None):
    """[(result, when it came)] for ``paths`` through a flow; ``follow``: a folder through which
    each diarization job but the last waits for the next ASR job to start."""
    engines = SleepingEngines(mode, crash, (follow, len(paths)) if follow else None)
    try:
        flow = Flow(engines, jobs, retries, keep_workers)
        out = [(r, time.time()) for r in flow.run(FileJob(p) for p in paths)]
    finally:
        engines.close()
    return engines, out


def intervals(results) -> dict[tuple[str, str], tuple[float, float]]:
    return {(r.path, name): span for r, _ in results if r.transcript for name, span in r.transcript.engines.items()}


def test_parallel_whisper_runs_ahead_while_earlier_files_are_diarized(tmp_path):
    """Each diarization job waits (a minute at most) for the next ASR job to start: a flow that
    pipelines passes at once whatever the workers' start-up times; one that does not cannot."""
    engines, results = run("parallel", ["a", "b", "c"], jobs=3, follow=str(tmp_path))
    assert [r.path for r, _ in results] == ["a", "b", "c"] and all(r.error is None for r, _ in results)
    spans = intervals(results)
    # pipelined: b (and c) are transcribed before a's diarization is over
    assert spans[("b", "asr")][0] < spans[("a", "diarization")][1]
    assert spans[("c", "asr")][0] < spans[("b", "diarization")][1]
    assert all(r.attempts == 1 for r, _ in results)


def test_serial_never_runs_two_jobs_at_once():
    engines, results = run("serial", ["a", "b", "c"], jobs=2)
    spans = sorted(intervals(results).items(), key=lambda kv: kv[1][0])
    assert [key for key, _ in spans] == [("a", "asr"), ("a", "diarization"), ("b", "asr"), ("b", "diarization"),
                                         ("c", "asr"), ("c", "diarization")]
    assert all(earlier[1][1] <= later[1][0] for earlier, later in zip(spans, spans[1:]))


def test_without_kept_workers_serial_starts_every_worker_before_decoding_and_closes_each_once_done():
    """Every engine's worker starts (loading its models) before the file is decoded, so the next
    engine's start-up runs beside the work before it; each closes as soon as no file needs it."""
    engines, results = run("serial", ["a"], jobs=1, keep_workers=False)
    assert results[0][0].error is None
    assert engines.log == [("start", "asr"), ("start", "diarization"), ("decode", "a"), ("close", "asr"),
                           ("close", "diarization")]


def test_at_most_jobs_files_are_in_flight():
    engines, results = run("parallel", ["a", "b", "c", "d"], jobs=2)
    finished = {r.path: when for r, when in results}
    assert engines.decoded["c"] >= finished["a"] and engines.decoded["d"] >= finished["b"]


def test_a_killed_worker_is_replaced_its_file_retried_and_the_queue_resubmitted():
    # every ASR worker dies on its 2nd job: b dies in the first, c (queued behind b, then
    # 2nd in the fresh worker) in the second; each is retried once and done
    engines, results = run("parallel", ["a", "b", "c"], jobs=3, crash={"asr": 2})
    assert {r.path: (r.error, r.attempts) for r, _ in results} == {"a": (None, 1), "b": (None, 2), "c": (None, 2)}


def test_a_second_death_and_a_bad_file_end_only_their_files():
    engines, results = run("serial", ["x.bad", "a"], jobs=2, crash={"diarization": 1})  # each fresh one dies at once
    bad, died = (r for r, _ in results)
    assert isinstance(bad.error, InputError) and bad.attempts == 0
    assert isinstance(died.error, WorkerDied) and died.attempts == 2 and died.seconds >= 0
    assert str(died.error) == "a: the diarization worker died (signal SIGKILL) while working on it"


@pytest.mark.parametrize("mode", ["parallel", "serial"])
def test_stopping_early_releases_the_audio_of_files_in_flight(mode):
    engines = SleepingEngines(mode)
    flow = Flow(engines, jobs=3).run(FileJob(p) for p in ["a", "b", "c", "d"])
    try:
        next(flow)
        assert len(engines.shared) >= 2  # the first is done, more are in flight
        flow.close()
    finally:
        engines.close()
    assert not any(os.path.exists(p) for p in engines.shared)
