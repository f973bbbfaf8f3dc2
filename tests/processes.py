"""Process helpers for the tests that kill real runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from witness.run.manifest import MANIFEST_NAME


def group_alive(pgid: int, grace: float) -> bool:
    """Whether any process of group ``pgid`` is still there after up to ``grace`` seconds: a
    limit, not a measurement (it returns as soon as the group is gone), so make it generous."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.1)
    return True


def hear_ctrl_c():
    """A shell starts background jobs with SIGINT ignored, and the child would inherit that
    (pytest run as `.ci/run &`); a terminal's foreground job hears Ctrl-C. For ``preexec_fn``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop_batch_after_first_file(sample_wav: Path, tmp_path: Path, options: list[str], env: dict[str, str],
                                stop: signal.Signals, code: int, wait: float) -> tuple[Path, str]:
    """Run `witness batch` on six copies of ``sample_wav`` (with ``options``) in a process group
    of its own, send ``stop`` to the group once the first file is done, and check what any
    interrupted batch must leave: exit ``code``, the interruption line, a manifest of whole
    lines whose rows match the outputs, and no process of it left. (outdir, stdout)."""
    calls = tmp_path / "calls"
    calls.mkdir()
    names = [f"{c}.wav" for c in "abcdef"]  # enough that the last ones cannot finish with the first
    for name in names:
        shutil.copy(sample_wav, calls / name)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "witness", "batch", str(calls), "-o", str(out), "--format", "json",
                             *options], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=hear_ctrl_c)
    manifest = out / MANIFEST_NAME
    deadline = time.monotonic() + 600
    while not (manifest.exists() and manifest.read_text().count("\n") >= 1) and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    os.killpg(proc.pid, stop)
    stdout, stderr = proc.communicate(timeout=wait)
    assert proc.returncode == code, stderr
    assert "witness: interrupted: finished files are kept; run the same command again to go on\n" in stderr
    lines = manifest.read_text().splitlines(keepends=True)
    rows = [json.loads(line) for line in lines]
    assert all(line.endswith("\n") for line in lines) and rows[0]["status"] == "ok" and len(rows) < len(names)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(
        [MANIFEST_NAME] + [Path(r["input"]).stem + ".json" for r in rows])
    assert not group_alive(proc.pid, 60.0), "a process of the batch outlived it"
    return out, stdout
