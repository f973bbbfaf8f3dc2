"""Decoded-audio files: made in the folder the environment names, reaped once their owner
is gone (a run killed outright), never while it lives or while another process holds one."""

from __future__ import annotations

import fcntl
import os
import subprocess

from witness.run import shm


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_files_of_gone_processes_are_reaped_and_the_rest_kept(tmp_path, monkeypatch):
    monkeypatch.setenv(shm.FOLDER_ENV, str(tmp_path / "audio"))
    monkeypatch.setenv(shm.PREFIX_ENV, "test-audio-")
    mine = shm.new_file()
    folder = tmp_path / "audio"
    dead = _dead_pid()
    stale = folder / f"test-audio-{dead}-abc.f32"
    held = folder / f"test-audio-{dead}-def.f32"  # its owner lives in another PID namespace
    other = folder / f"other-{dead}-abc.f32"
    for path in (stale, held, other):
        path.write_bytes(b"\0" * 16)
    fd = os.open(held, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    try:
        again = shm.new_file()
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            [os.path.basename(mine), os.path.basename(again), held.name, other.name])
    finally:
        os.close(fd)
    assert shm.reap(folder, "test-audio-") == [held]
    for path in (mine, again):
        assert os.path.basename(path).startswith(f"test-audio-{os.getpid()}-")
        shm.remove(path)
    assert sorted(p.name for p in folder.iterdir()) == [other.name]
