"""`witness batch --ray` on a real local Ray cluster (`ray start --head`, started and stopped
here) with the real models: good and bad calls through `--ray auto` give the local batch's
outputs, an actor killed mid-file is retried, a re-run skips everything.

The cluster offers 4 logical CPUs and the runs are planned for 2 cores (`--threads 2`, as on
the 2-core CI machine), so two actors of 2 CPUs each serve the files, and the local run
they are compared with has the same plan.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil
import pytest

from tests.processes import stop_batch_after_first_file
from tests.test_cli_batch import by_name, make_calls, run
from tests.worker_engines import crash_once_in
from witness.errors import UsageError
from witness.run.manifest import MANIFEST_NAME, Manifest
from witness.run.ray_pool import INSTALL_HINT, EngineActor, RayOptions, actor_shape

REPO = Path(__file__).resolve().parents[1]
PLAN = ("--threads", "2")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_env():
    """Token authentication with a token of this test's own (not ~/.ray's), for the head and
    for the batch that joins it."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": uuid.uuid4().hex}


@pytest.fixture(scope="module")
def ray_address(ray_env):
    """A Ray head of its own (private temp folder and port), stopped afterwards whatever
    happened: its `ray start --block` is asked to stop, then whatever of its processes is
    left (they name its temp folder) is killed by pid."""
    temp = tempfile.mkdtemp(prefix="wr-", dir="/tmp")  # short: Ray's socket paths must be
    port = _free_port()
    env = {**os.environ, **ray_env, "PYTHONPATH": str(REPO)}  # actors import this checkout
    ray = Path(sys.executable).with_name("ray")
    log = Path(temp) / "ray-start.log"  # a file, not a pipe: a pipe nobody reads could fill and block it
    with open(log, "w") as out:
        head = subprocess.Popen([str(ray), "start", "--head", "--block", f"--port={port}", "--num-cpus=4",
                                 f"--temp-dir={temp}", "--include-dashboard=false", "--disable-usage-stats"],
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while "Ray runtime started" not in log.read_text():
            assert head.poll() is None and time.monotonic() < deadline, f"ray start --head failed:\n{log.read_text()}"
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            head.kill()
        _kill_leftovers(temp)
        shutil.rmtree(temp, ignore_errors=True)


def _kill_leftovers(temp: str) -> None:
    for proc in psutil.process_iter(["cmdline"]):
        if any(temp in part for part in proc.info["cmdline"] or ()):
            proc.kill()


@pytest.fixture(scope="module")
def ray_batch(ray_address, ray_env, tmp_path_factory, sample_call, default_models):
    """A folder of good and bad calls through `--ray auto` with the first Whisper job of the
    cluster killed, then through the local batch, then `--ray auto` again."""
    root = tmp_path_factory.mktemp("ray-batch")
    calls = make_calls(root / "calls", sample_call / "sample.wav")
    args = ("--format", "json,txt", *PLAN)
    env = {**ray_env, "RAY_ADDRESS": ray_address}
    with pytest.MonkeyPatch.context() as patch:
        crash_once_in(patch, "asr", root / "crashed")
        result = run("batch", calls, "-o", root / "ray", *args, "--ray", "auto", env=env)
    local = run("batch", calls, "-o", root / "local", *args)
    again = run("batch", calls, "-o", root / "ray", *args, "--ray", "auto", env=env)
    with Manifest(root / "ray" / MANIFEST_NAME) as manifest:
        rows = manifest.rows()
    return root, calls, result, local, again, rows


def test_good_and_bad_calls_through_ray_as_through_the_local_batch(ray_batch):
    root, calls, result, local, again, rows = ray_batch
    assert result.exit_code == local.exit_code == 2, result.stderr
    assert result.stdout == ""
    first = by_name(rows[:5], calls)
    assert {name: r.status for name, r in first.items()} == {
        "a.wav": "ok", "sub/a.wav": "ok", "truncated.wav": "failed", "empty.wav": "failed", "notes.mp3": "failed"}
    assert first["empty.wav"].error == "is empty (0 bytes)"
    assert first["truncated.wav"].error == "is truncated: the header says 30.0 s but only 9.4 s decode"
    assert first["notes.mp3"].error.startswith("not an audio file")
    assert "  files ok          2\n  files failed      3\n  files skipped     0\n" in result.stderr
    ray_out, local_out = root / "ray", root / "local"
    names = sorted(p.relative_to(ray_out).as_posix() for p in ray_out.rglob("*.*") if not p.name.startswith("."))
    assert names == ["a.json", "a.txt", "sub/a.json", "sub/a.txt", MANIFEST_NAME]
    for name in ("a.txt", "sub/a.txt"):
        assert (ray_out / name).read_bytes() == (local_out / name).read_bytes()
    for name in ("a.json", "sub/a.json"):  # only the seconds each stage took may differ
        ours, theirs = (json.loads((d / name).read_text()) for d in (ray_out, local_out))
        assert ours.pop("timings").keys() == theirs.pop("timings").keys()
        assert ours == theirs


def test_an_actor_killed_mid_file_is_retried_on_a_fresh_one(ray_batch):
    root, calls, result, local, again, rows = ray_batch
    first = by_name(rows[:5], calls)
    assert (root / "crashed").exists()  # an actor did die
    assert sorted(first[name].attempts for name in ("a.wav", "sub/a.wav")) == [1, 2]
    died = next(name for name in ("a.wav", "sub/a.wav") if first[name].attempts == 2)
    assert (f"witness: {calls / died}: the Ray actor working on it died; trying again on a fresh actor\n"
            in result.stderr)


def test_a_rerun_skips_everything(ray_batch):
    root, calls, result, local, again, rows = ray_batch
    assert again.exit_code == 2  # the bad files fail again
    latest = by_name(rows[5:], calls)
    assert latest["a.wav"].status == latest["sub/a.wav"].status == "skipped"
    assert "  files ok          0\n  files failed      3\n  files skipped     2\n" in again.stderr


def test_without_ray_installed_ray_says_how_to_install_it(monkeypatch, sample_call, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is not installed
    result = run("batch", sample_call / "sample.wav", "-o", tmp_path / "out", "--ray", "auto")
    assert result.exit_code == 2
    assert result.stderr == f"witness: {INSTALL_HINT}\n"
    assert not (tmp_path / "out").exists()


def test_an_input_or_model_a_node_cannot_see_is_a_clear_error_not_a_hang(tmp_path):
    """The actor's own code, in this process: the checks it makes before any engine work."""
    actor = EngineActor({}, {}, False, False, (str(tmp_path / "models" / "campplus.onnx"),))
    answer = actor.transcribe(str(tmp_path / "calls" / "a.wav"), "")
    assert answer.error.path == str(tmp_path / "calls" / "a.wav") and not answer.engines_ran
    assert answer.error.message.startswith("not found on Ray node ")
    assert answer.error.message.endswith("(inputs must be on a filesystem every node mounts at the same path)")
    assert actor.ready().startswith(f"model file {tmp_path / 'models' / 'campplus.onnx'} is not on Ray node ")


def test_the_pool_fills_the_nodes_and_shares_gpus():
    gpu_node, cpu_node = {"CPU": 16.0, "GPU": 1.0}, {"CPU": 8.0}
    shape = actor_shape([gpu_node, cpu_node], 4, True, RayOptions("auto"))
    assert (shape.actors, shape.cpus, shape.gpus) == (4, 4, 0.25)  # no GPU on the CPU node: no actor there
    shape = actor_shape([gpu_node, gpu_node], 4, True, RayOptions("auto"))
    assert (shape.actors, shape.cpus, shape.gpus) == (8, 4, 0.25)  # 4 actors a node, a quarter card each
    shape = actor_shape([gpu_node], 4, True, RayOptions("auto", gpus_per_actor=0.5))
    assert (shape.actors, shape.gpus) == (2, 0.5)  # the GPU is the limit
    shape = actor_shape([cpu_node, cpu_node], 4, False, RayOptions("auto", actors=3))
    assert (shape.actors, shape.gpus) == (3, 0.0)


def test_a_pool_the_cluster_cannot_hold_is_refused():
    with pytest.raises(UsageError, match=r"--ray-actors 5: the Ray cluster has room for 4 actors of 4 CPUs"):
        actor_shape([{"CPU": 16.0}], 4, False, RayOptions("auto", actors=5))
    with pytest.raises(UsageError, match=r"no node of the Ray cluster has room for an actor of 2 CPUs and 1 GPU "):
        actor_shape([{"CPU": 16.0}], 2, True, RayOptions("auto", gpus_per_actor=1.0))


def test_sigterm_keeps_finished_files_and_a_consistent_manifest(ray_address, ray_env, sample_call, default_models,
                                                               tmp_path):
    """The batch (a process of its own) is stopped once its first file is done. SIGTERM, not
    Ctrl-C: ray.init takes SIGTERM over, and Ray's waits turn the batch's stop into a plain
    KeyboardInterrupt; Ctrl-C takes the same way out (tests/test_cli_batch.py)."""
    env = {**os.environ, **ray_env, "RAY_ADDRESS": ray_address, "PYTHONPATH": str(REPO)}
    _, stdout = stop_batch_after_first_file(sample_call / "sample.wav", tmp_path,
                                            [*PLAN, "--ray", "auto"], env,
                                            signal.SIGTERM, 143, wait=120)
    assert stdout == ""
