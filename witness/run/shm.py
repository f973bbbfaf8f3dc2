"""The files that hold decoded audio while workers read it, and their clean-up.

Each file is ``<folder>/<prefix><pid>-<random>.f32``: the folder is /dev/shm where it can
be written (memory), else the temp folder; ``$WITNESS_SHARED_AUDIO_DIR`` and
``$WITNESS_SHARED_AUDIO_PREFIX`` choose others (tests use a private folder). Shared memory
can be small (64 MB in a default Docker container, an hour of audio is 230 MB), so a file's
folder is chosen for its size (``folder_for``): the shared one when it has room, else the
disk-backed temp folder (the page cache keeps it in memory all the same), else NoRoom.

The process that makes a file holds a shared ``flock`` on it until it removes it. A
process killed outright (SIGKILL, out of memory) cannot remove its files, so every new
file first reaps the stale ones: those whose owner process is gone and whose lock nobody
holds.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import tempfile
from pathlib import Path

from witness.errors import WitnessError

log = logging.getLogger(__name__)

FOLDER_ENV = "WITNESS_SHARED_AUDIO_DIR"
PREFIX_ENV = "WITNESS_SHARED_AUDIO_PREFIX"
DEFAULT_PREFIX = "witness-audio-"
SUFFIX = ".f32"
FULL = (errno.ENOSPC, errno.EDQUOT)  # a write's errno when its folder has no room
MB = 10**6

_held: dict[str, int] = {}  # path -> the open, locked descriptor of a file this process made


def place() -> tuple[Path, str]:
    """(folder, file name prefix) for decoded audio in this run."""
    folder = os.environ.get(FOLDER_ENV)
    if not folder:
        folder = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
    return Path(folder), os.environ.get(PREFIX_ENV) or DEFAULT_PREFIX


class NoRoom(WitnessError):
    """No folder can hold a file's decoded audio (the input is not to blame)."""

    def __init__(self, path: str | Path, size: int, folders: list[Path]):
        room = ", ".join(f"{f} has {free_bytes(f) / MB:.1f} MB free" for f in folders)
        needed = f" ({size / MB:.1f} MB needed)" if size else ""
        super().__init__(f"no room for its decoded audio{needed}: {room}; free some, or set {FOLDER_ENV} "
                         "to a folder with room", path)


def disk_folder() -> Path:
    """The disk-backed folder decoded audio goes to when shared memory has no room."""
    return Path(tempfile.gettempdir())


def folders() -> list[Path]:
    """The folders decoded audio may go to, in order: the shared one, then the disk's."""
    shared = place()[0]
    return [shared] if shared.resolve() == disk_folder().resolve() else [shared, disk_folder()]


def folder_for(size: int, path: str | Path, after: Path | None = None) -> Path:
    """The first of ``folders()`` (after ``after``, one that filled up) with room for ``size``
    bytes of ``path``'s decoded audio (0: unknown, the first); a move off shared memory is
    said with -v; NoRoom when none has room."""
    order = folders()
    for folder in order[order.index(after) + 1:] if after is not None else order:
        if free_bytes(folder) >= size:
            if folder != order[0]:
                log.info("%s: %s has no room for its decoded audio (%.1f MB needed, %.1f MB free): using %s",
                         path, order[0], size / MB, free_bytes(order[0]) / MB, folder)
            return folder
    raise NoRoom(path, size, order)


def free_bytes(folder: Path) -> int:
    """Bytes this process may still write in ``folder`` (or the nearest folder above it
    that exists: it is made on first use)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    stat = os.statvfs(folder)
    return stat.f_bavail * stat.f_frsize


def new_file(folder: Path | None = None) -> str:
    """A new, empty file for decoded samples in ``folder`` (default: the shared one),
    locked by this process (stale files of killed runs are reaped first)."""
    shared, prefix = place()
    folder = folder or shared
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
