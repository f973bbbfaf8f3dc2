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
