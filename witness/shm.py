"""The files that hold decoded audio while workers read it, and their clean-up.

Each file is ``<folder>/<prefix><pid>-<random>.f32``: the folder is /dev/shm where it can
be written (memory), else the temp folder; ``$WITNESS_SHARED_AUDIO_DIR`` and
``$WITNESS_SHARED_AUDIO_PREFIX`` choose others (tests use a private folder). The process
that makes a file holds a shared ``flock`` on it until it removes it. A process killed
outright (SIGKILL, out of memory) cannot remove its files, so every new file first reaps
the stale ones: those whose owner process is gone and whose lock nobody holds.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

FOLDER_ENV = "WITNESS_SHARED_AUDIO_DIR"
PREFIX_ENV = "WITNESS_SHARED_AUDIO_PREFIX"
DEFAULT_PREFIX = "witness-audio-"
SUFFIX = ".f32"

_held: dict[str, int] = {}  # path -> the open, locked descriptor of a file this process made


def place() -> tuple[Path, str]:
    """(folder, file name prefix) for decoded audio in this run."""
    folder = os.environ.get(FOLDER_ENV)
    if not folder:
        folder = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
    return Path(folder), os.environ.get(PREFIX_ENV) or DEFAULT_PREFIX


def new_file() -> str:
    """A new, empty file for decoded samples, locked by this process (stale files of
    killed runs are reaped first)."""
    folder, prefix = place()
    folder.mkdir(parents=True, exist_ok=True)
    reap(folder, prefix)
    fd, path = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", suffix=SUFFIX, dir=folder)
    fcntl.flock(fd, fcntl.LOCK_SH)
    _held[path] = fd
    return path


def remove(path: str) -> None:
    """Remove a file made by ``new_file`` (no error when it is gone already)."""
    Path(path).unlink(missing_ok=True)
    fd = _held.pop(path, None)
    if fd is not None:
        os.close(fd)


def reap(folder: Path, prefix: str) -> list[Path]:
    """Remove the decoded-audio files in ``folder`` left by processes that are gone; the
    files removed."""
    reaped = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return reaped
    for entry in entries:
        owner = entry.name[len(prefix):].partition("-")[0]
        if entry.name.startswith(prefix) and entry.name.endswith(SUFFIX) and owner.isdigit():
            if not _alive(int(owner)) and _unlocked(entry.path):
                Path(entry.path).unlink(missing_ok=True)
                reaped.append(Path(entry.path))
    return reaped


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _unlocked(path: str) -> bool:
    """Whether no process holds ``path``'s lock (an owner in another PID namespace does)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
