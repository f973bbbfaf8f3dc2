"""Files written so that nobody ever sees half of one, and files hashed in chunks.

Every output Witness writes (transcripts, converted models, manifests) goes through
``atomic_write``/``publish``: a temp file in the same folder, flushed, then renamed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

CHUNK = 1 << 20


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
