"""Files written so that nobody ever sees half of one, files hashed in chunks, and text
inputs read with one clear error.

Every output Witness writes (transcripts, converted models, manifests) goes through
``atomic_write``/``publish``: a temp file in the same folder, flushed, then renamed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from witness.errors import InputError

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


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def temp_beside(final_path: str | Path) -> Path:
    """A fresh, empty temp path in the same folder as ``final_path`` (for ``publish``)."""
    final = Path(final_path)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
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
    tmp = temp_beside(final_path)
    try:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
        return publish(tmp, final_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
