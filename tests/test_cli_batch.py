"""`witness batch` on real calls with the real models: a folder of good and bad files, a
worker killed mid-batch, a re-run, --force, Ctrl-C, and outputs equal to `witness FILE`'s.

One batch run (module fixture) serves most tests: two copies of the sample call with the
same stem (one in a subfolder), a truncated wav, an empty file, text named .mp3, and a
readme the folder search leaves out; the ASR worker is killed on its second job.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.processes import stop_batch_after_first_file
from tests.worker_engines import crash_in
from witness.run import shm as shm_module
from witness.cli import main
from witness.run.manifest import MANIFEST_NAME, Manifest
from witness.transcript import read_transcript

REPO = Path(__file__).resolve().parents[1]


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def make_calls(folder: Path, sample: Path) -> Path:
    (folder / "sub").mkdir(parents=True)
    shutil.copy(sample, folder / "a.wav")
    shutil.copy(sample, folder / "sub" / "a.wav")
    (folder / "truncated.wav").write_bytes(sample.read_bytes()[:300_000])
    (folder / "empty.wav").write_bytes(b"")
    (folder / "notes.mp3").write_text("meeting notes, not audio\n" * 40)
    (folder / "readme.txt").write_text("left out: not an audio extension\n")
    return folder


@pytest.fixture(scope="module")
def batch(tmp_path_factory, sample_call, default_models):
    root = tmp_path_factory.mktemp("batch")
    calls = make_calls(root / "calls", sample_call / "sample.wav")
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:
        crash_in(patch, "asr", on_job=2)
        result = run("batch", calls, "-o", out, "--format", "json,txt")
    with Manifest(out / MANIFEST_NAME) as manifest:
        rows = manifest.rows()
    return root, calls, out, result, rows


def by_name(rows, calls: Path):
    return {Path(r.input).relative_to(calls).as_posix(): r for r in rows}


def test_good_files_are_done_and_bad_ones_reported_with_reasons(batch):
    root, calls, out, result, rows = batch
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    rows = by_name(rows, calls)
    assert set(rows) == {"a.wav", "sub/a.wav", "truncated.wav", "empty.wav", "notes.mp3"}
    assert {name: r.status for name, r in rows.items()} == {
        "a.wav": "ok", "sub/a.wav": "ok", "truncated.wav": "failed", "empty.wav": "failed", "notes.mp3": "failed"}
    assert rows["empty.wav"].error == "is empty (0 bytes)"
    assert rows["truncated.wav"].error == "is truncated: the header says 30.0 s but only 9.4 s decode"
    assert rows["notes.mp3"].error.startswith("not an audio file")
    for name in ("truncated.wav", "empty.wav", "notes.mp3"):
        assert f"witness: {calls / name}: {rows[name].error}\n" in result.stderr
    assert "  files ok          2\n  files failed      3\n  files skipped     0\n" in result.stderr
    assert f"    {calls / 'empty.wav'}: is empty (0 bytes)\n" in result.stderr


def test_outputs_mirror_the_folders_and_rows_say_what_was_done(batch):
    root, calls, out, result, rows = batch
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert written == ["a.json", "a.txt", "sub/a.json", "sub/a.txt", MANIFEST_NAME]
    ok = by_name(rows, calls)["sub/a.wav"]
    assert ok.outputs == ("sub/a.json", "sub/a.txt") and ok.duration == pytest.approx(30.0, abs=0.01)
    assert ok.size == (calls / "sub" / "a.wav").stat().st_size and len(ok.sha256) == 64 and len(ok.settings_hash) == 16
    assert ok.wall_time > 0 and ok.rtf == pytest.approx(ok.wall_time / ok.duration, rel=1e-3)
    assert read_transcript(out / "sub" / "a.json").audio.path == str(calls / "sub" / "a.wav")


def test_a_worker_killed_mid_batch_is_retried_and_the_batch_completes(batch):
    root, calls, out, result, rows = batch
    rows = by_name(rows, calls)
    assert rows["a.wav"].attempts == 1 and rows["sub/a.wav"].attempts == 2  # the ASR worker's 2nd job died
    assert read_transcript(out / "sub" / "a.json").utterances == read_transcript(out / "a.json").utterances


def test_batch_outputs_equal_single_file_outputs(batch):
    """Only ``timings`` may differ (seconds per stage); plan and engines are the same."""
    root, calls, out, result, rows = batch
    single = root / "single"
    one = run(calls / "a.wav", "-o", single, "--format", "json,txt")
    assert one.exit_code == 0, one.stderr
    assert (single / "a.txt").read_text() == (out / "a.txt").read_text()
    ours, theirs = (json.loads((d / "a.json").read_text()) for d in (out, single))
    assert ours.pop("timings").keys() == theirs.pop("timings").keys()
    assert ours == theirs


def test_a_rerun_skips_what_is_done_and_force_redoes_it(batch):
    root, calls, out, result, rows = batch
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.json")}
    again = run("batch", calls, "-o", out, "--format", "json,txt")
    assert again.exit_code == 2  # the bad files fail again
    with Manifest(out / MANIFEST_NAME) as manifest:
        latest = {Path(k).relative_to(calls).as_posix(): r for k, r in manifest.latest().items()}
    assert latest["a.wav"].status == latest["sub/a.wav"].status == "skipped"
    done = by_name(rows, calls)["sub/a.wav"]
    assert (latest["sub/a.wav"].sha256, latest["sub/a.wav"].outputs) == (done.sha256, done.outputs)
    assert "  files ok          0\n  files failed      3\n  files skipped     2\n" in again.stderr
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.json")} == before

    forced = run("batch", calls / "a.wav", "-o", out, "--format", "json,txt,html", "--html-audio", "link", "--force")
    assert forced.exit_code == 0, forced.stderr
    assert '"href":"../calls/a.wav"' in (out / "a.html").read_text()
    with Manifest(out / MANIFEST_NAME) as manifest:
        redone = manifest.rows()[-1]
    assert redone.input == str(calls / "a.wav") and redone.status == "ok" and redone.attempts == 1
    assert (out / "a.json").stat().st_mtime_ns > before[out / "a.json"]


def test_outputs_the_batch_did_not_write_are_not_replaced(sample_call, default_models, tmp_path):
    shutil.copy(sample_call / "sample.wav", tmp_path / "call.wav")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "call.json").write_text("precious")
    result = run("batch", tmp_path / "call.wav", "-o", tmp_path / "out", "--format", "json")
    assert result.exit_code == 2
    assert (f"witness: {tmp_path / 'call.wav'}: {tmp_path / 'out' / 'call.json'} already exists and was not "
            "written by witness batch (pass --force to replace it)\n") in result.stderr
    assert (tmp_path / "out" / "call.json").read_text() == "precious"


def test_a_second_death_fails_the_file_and_the_batch_goes_on(sample_call, default_models, tmp_path, monkeypatch):
    crash_in(monkeypatch, "asr")
    shutil.copy(sample_call / "sample.wav", tmp_path / "call.wav")
    (tmp_path / "empty.wav").write_bytes(b"")
    result = run("batch", tmp_path / "call.wav", tmp_path / "empty.wav", "-o", tmp_path / "out", "-q")
    assert result.exit_code == 2
    with Manifest(tmp_path / "out" / MANIFEST_NAME) as manifest:
        rows = by_name(manifest.rows(), tmp_path)
    died, empty = rows["call.wav"], rows["empty.wav"]  # rows come as files finish: the empty one first
    assert died.status == "failed" and died.attempts == 2
    assert died.error == "the asr worker died (signal SIGKILL) while working on it"
    assert empty.status == "failed" and empty.error == "is empty (0 bytes)" and empty.attempts == 0
    assert result.stderr == (  # the empty file fails before any engine work; -q keeps warnings
        f"witness: {tmp_path / 'empty.wav'}: is empty (0 bytes)\n"
        f"witness: {tmp_path / 'call.wav'}: the asr worker died (signal SIGKILL); trying again in a fresh worker\n"
        f"witness: {tmp_path / 'call.wav'}: {died.error}\n")


@pytest.mark.parametrize("stop, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_stops_cleanly_and_keeps_finished_files(stop, code, sample_call, default_models, tmp_path):
    """The signal goes to the whole process group (as a terminal's Ctrl-C, or a service
    manager's stop) once the first file is done."""
    shm = tmp_path / "shm"  # a private folder for the decoded audio: other runs may share /dev/shm
    env = {**os.environ, "PYTHONPATH": str(REPO), shm_module.FOLDER_ENV: str(shm)}
    stop_batch_after_first_file(sample_call / "sample.wav", tmp_path, [], env,
                                stop, code, wait=300)
    assert list(shm.iterdir()) == []  # no decoded audio left behind

