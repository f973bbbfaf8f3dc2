"""What a real `python -m witness` process does at the edges a user meets: a cache it cannot
write, a pipe closed early, Ctrl-C, a FIFO as input, a bad model, too many threads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, PR_CAPBSET_DROP = 1, 2, 24


def witness(*args, env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "witness", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600, **kwargs)


def fresh_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a user whose HOME is ``home`` and whose caches and configs are its own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "WITNESS_MODELS_DIR", "WITNESS_OFFLINE"))}
    return {**env, "HOME": str(home), **extra}


def without_permission_override() -> None:
    """For ``preexec_fn`` when root runs the tests: root ignores file permissions through
    two capabilities; with them dropped from the bounding set, the command (still uid 0,
    so it can run the interpreter under /root) meets a read-only folder as any user does."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            os._exit(77)


def test_a_read_only_home_names_the_cache_and_what_to_set(sample_call, tmp_path):
    """A fresh user (no model in the cache) with a read-only HOME: the converted Whisper model
    has nowhere to go. Root runs the command without the capabilities that let it write anyway."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o555)
    root = os.geteuid() == 0
    result = witness(sample_call / "sample.wav", env=fresh_env(home),
                     preexec_fn=without_permission_override if root else None)
    home.chmod(0o755)
    if result.returncode == 77 and root:
        pytest.skip("cannot drop root's permission override (no CAP_SETPCAP) to meet a read-only folder")
    assert result.returncode == 2, result.stderr
    cache = home / ".cache" / "witness" / "models"
    assert result.stderr == (
        f"witness: {cache}: cannot write the model cache (Permission denied: {home / '.cache'}); set XDG_CACHE_HOME "
        "to a writable folder, or pass --models-dir DIR (or WITNESS_MODELS_DIR) with the models in it "
        "(`witness models pull` on a machine that can write puts them in its cache)\n")
    assert result.stdout == "" and list(home.iterdir()) == []


def test_a_cache_under_a_file_is_one_line_with_exit_2(sample_call, tmp_path):
    """XDG_CACHE_HOME under a regular file: no user, root included, can make the cache there."""
    (tmp_path / "file").write_text("not a folder")
    cache = tmp_path / "file" / "cache"
    result = witness(sample_call / "sample.wav", env=fresh_env(tmp_path, XDG_CACHE_HOME=str(cache)))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"witness: {cache / 'witness' / 'models'}: cannot write the model cache (Not a directory")
    assert "set XDG_CACHE_HOME to a writable folder, or pass --models-dir DIR" in result.stderr
    assert result.stderr.count("\n") == 1 and "onnxruntime" not in result.stderr


class Clock:
    """Wall time the test moves on by hand (the bar's arithmetic, not the machine's speed)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_batch_eta_counts_down_and_its_speed_is_the_summarys(monkeypatch, tmp_path):
    """Six files of 1000 bytes = 100 s of audio each, one done every 10 s: between two files
    the ETA falls with the clock (it grew with it), at each file it is the audio left at the
    speed so far, and the last speed shown is the summary's (audio over the same wall time)."""
    import io

    from witness.cli.progress import ProgressView

    files = [str(tmp_path / f"{name}.wav") for name in "abcdef"]
    for f in files:
        Path(f).write_bytes(bytes(1000))
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    clock = Clock()
    bar = ProgressView(files, on=True, clock=clock)

    def shown() -> str:
        bar.file(files[-1], "transcribe", 100, 100)  # a stage's end redraws (the last file is in flight)
        return err.getvalue().replace("\r", "\n").strip().splitlines()[-1]

    etas = []
    for n, f in enumerate(files[:3], start=1):
        clock.now = bar.started + 10 * n
        bar.file_done(f, transcribed=True, audio_seconds=100.0)
        etas.append(shown())
        clock.now += 5  # halfway to the next file
        etas.append(shown())
    assert "3/6 files" in etas[-1] and "5.0 audio min" in etas[-1] and "10.0x real time" in etas[-1]
    assert [line.split("ETA ")[1].split(" ")[0] for line in etas] == [
        "00:50", "00:45", "00:40", "00:35", "00:30", "00:25"]  # 10 s a file, 5 s after each
    for n, f in enumerate(files[3:], start=4):
        clock.now = bar.started + 10 * n
        bar.file_done(f, transcribed=True, audio_seconds=100.0)
    clock.now += 2  # the workers close
    wall = bar.finish()
    bar.close()
    last = err.getvalue().replace("\r", "\n").strip().splitlines()[-1]
    assert wall == pytest.approx(62.0) and "ETA" not in last
    assert f"{600 / wall:.1f}x real time" in last  # the summary's 1 / rtf
