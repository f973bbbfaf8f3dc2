"""Files written so that nobody ever sees half of one, files hashed in chunks, and text
inputs read with one clear error.

Every output Witness writes (transcripts, converted models, manifests) goes through
``atomic_write``/``write_together``/``publish``: a temp file in the same folder, flushed,
then renamed. ``check_output_folder`` tries an output folder before any work.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Iterator, Sequence

from witness.errors import InputError, UsageError

CHUNK = 1 << 20


def read_input_text(path: str | Path, kind: str) -> str:
    """A user-given text file (``kind`` names it in errors: "RTTM", "STM"...); InputError
    naming the file when it is missing, unreadable or not UTF-8."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {kind} ({exc.__class__.__name__}: {exc})", path) from None


def records(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, whitespace-separated fields) of each line of a NIST-style text file
    (RTTM, STM, UEM), blank lines and ``;;`` comments left out."""
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields and not fields[0].startswith(";;"):
            yield number, fields


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def name_max(folder: str | Path) -> int:
    """The longest file name (bytes) the file system under ``folder`` allows."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def temp_beside(final_path: str | Path) -> Path:
    """A fresh, empty temp path in the same folder as ``final_path`` (for ``publish``),
    named within the file system's name limit however long the final name is."""
    final = Path(final_path)
    final.parent.mkdir(parents=True, exist_ok=True)
    room = name_max(final.parent) - len(".." + "x" * 8 + ".tmp")  # mkstemp adds 8 random characters
    stem = final.name.encode()[: max(1, room)].decode(errors="ignore")
    fd, name = tempfile.mkstemp(prefix=f".{stem}.", suffix=".tmp", dir=final.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(name, 0o666 & ~umask)  # mkstemp makes 0600; outputs get the usual mode
    return Path(name)


def publish(tmp_path: str | Path, final_path: str | Path) -> Path:
    """Move a finished file into place atomically (same folder; readers never see half)."""
    tmp, final = Path(tmp_path), Path(final_path)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    return final


def atomic_write(final_path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``final_path`` atomically; on any error the old file is untouched."""
    write_together([(Path(final_path), data)])
    return Path(final_path)


def write_together(files: Sequence[tuple[Path, str | bytes]]) -> None:
    """Write every (path, data) or none: each goes to a temp file beside its path, and
    only once all are on disk are they renamed into place. On any error (a full disk) the
    temp files are removed and the old files are untouched."""
    temps: list[Path] = []
    try:
        for final, data in files:
            temps.append(temp_beside(final))
            if isinstance(data, str):
                temps[-1].write_text(data, encoding="utf-8")
            else:
                temps[-1].write_bytes(data)
        for tmp, (final, _) in zip(temps, files):
            publish(tmp, final)
    except BaseException:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        raise


def probe_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) and write a probe file there; OSError when either fails."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(prefix=".witness-probe-", dir=folder)
    os.close(fd)
    os.unlink(probe)


def check_output_folder(folder: str | Path) -> Path:
    """Create ``folder`` (and its parents) and write a probe file there, before any work:
    UsageError naming it when outputs could not be written there."""
    folder = Path(folder)
    try:
        probe_folder(folder)
    except (FileExistsError, NotADirectoryError):
        raise UsageError("cannot be an output folder: it, or a folder above it, is a file", folder) from None
    except OSError as exc:
        raise UsageError(f"cannot write outputs here ({exc.strerror or exc})", folder) from None
    return folder
