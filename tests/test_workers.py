"""Worker processes on real processes: shared audio, progress, errors, and a worker killed by a signal."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tests.worker_engines import (crashing_engine, logging_engine, marking_engine, refusing_engine, summing_engine,
                                  unbuildable_engine)
from witness.errors import InputError
from witness.run.workers import Job, SharedAudio, Worker, WorkerDied


@pytest.fixture
def audio():
    shared = SharedAudio.create(np.full(16000, 0.5, dtype=np.float32))
    yield shared
    shared.unlink()


def run(worker: Worker, job: Job, progress=None):
    """Submit ``job`` and wait for its answer (progress to ``progress``); its error is raised."""
    worker.submit(job)
    while True:
        event = worker.next_event()
        if event is None or event.kind == "start":
            continue
        if event.kind == "progress":
            if progress:
                progress(*event.payload)
        elif event.kind == "error":
            raise event.payload
        else:
            return event.payload


def test_a_worker_builds_once_and_serves_jobs(audio):
    seen = []
    with Worker("asr", summing_engine, (2.0,)) as worker:
        assert run(worker, Job("a.wav", audio), progress=lambda *p: seen.append(p)) == 16000.0
        assert run(worker, Job("b.wav", audio)) == 16000.0
    assert seen == [("sum", 0, 1), ("sum", 1, 1)]
    assert not worker.alive


def test_an_eager_worker_builds_its_engine_before_its_first_job_and_only_then(audio, tmp_path):
    built = tmp_path / "built"
    with Worker("diarization", marking_engine, (str(tmp_path),), eager=True) as worker:
        deadline = time.monotonic() + 60  # the process's start; no job has been submitted
        while not built.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert built.exists()
        assert run(worker, Job("a.wav", audio)) == 1
        assert run(worker, Job("b.wav", audio)) == 1


def test_an_eager_worker_that_cannot_build_its_engine_says_so_on_the_first_job(audio):
    with Worker("asr", unbuildable_engine, eager=True) as worker:
        with pytest.raises(InputError) as err:
            run(worker, Job("call.wav", audio))
        assert str(err.value) == "call.wav: no model here"
        assert worker.alive


def test_shared_audio_maps_without_copying(audio):
    view = audio.open()
    assert isinstance(view, np.memmap) and not view.flags.writeable and view.shape == (16000,)


def test_engine_errors_keep_their_kind_and_name_the_file(audio):
    with Worker("diarization", refusing_engine) as worker:
        with pytest.raises(InputError) as err:
            run(worker, Job("call.wav", audio))
        assert str(err.value) == "call.wav: too quiet to transcribe"
        assert worker.alive  # an engine error does not kill the worker


def test_a_workers_log_lines_reach_this_process_logging_naming_the_file(audio, caplog):
    """Nothing is written to stderr by the worker: its records are logged here (the CLI
    prints them, the Python API stays silent unless its caller configures logging)."""
    with caplog.at_level("WARNING"), Worker("diarization", logging_engine) as worker:
        assert run(worker, Job("call.wav", audio)) == 1.0
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("witness.diarize.pipeline", "WARNING", "call.wav: found 3 speakers, more than the 2 allowed: kept 2")]


def test_a_worker_killed_by_a_signal_gives_a_clear_error(audio):
    with Worker("asr", crashing_engine, (summing_engine, 2, 1.0)) as worker:
        assert run(worker, Job("first.wav", audio)) == 8000.0
        with pytest.raises(WorkerDied) as err:
            run(worker, Job("second.wav", audio))
    assert str(err.value) == "second.wav: the asr worker died (signal SIGKILL) while working on it"
    assert err.value.signal_name == "SIGKILL"


def test_workers_do_not_outlive_a_parent_killed_outright(tmp_path):
    """SIGKILL gives the parent no chance to close its workers: they notice and exit."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import psutil

    code = ("from tests.worker_engines import summing_engine; from witness.run.workers import Worker; import time; "
            "w = Worker('asr', summing_engine, (1.0,)); print(w._process.pid, flush=True); time.sleep(60)")
    repo = Path(__file__).resolve().parents[1]
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=repo, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(repo)})
    worker = psutil.Process(int(parent.stdout.readline()))
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    try:
        while worker.is_running() and worker.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE
    finally:
        if worker.is_running():
            worker.kill()
