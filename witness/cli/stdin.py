"""``-`` as an audio input: standard input copied to a temp file the decoder can seek in."""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from witness.errors import WitnessError
from witness.fileio import CHUNK

STDIN = "-"
STDIN_NAME = "stdin"  # what the outputs of standard input are named after (out/stdin.txt)


@contextlib.contextmanager
def readable(path: Path) -> Iterator[Path]:
    """``path`` itself; for ``-`` a temp copy of standard input, removed afterwards, and
    errors about that copy name ``-``."""
    if str(path) != STDIN:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="witness-stdin-") as folder:
        copy = Path(folder) / STDIN_NAME
        with open(copy, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, CHUNK)
        try:
            yield copy
        except WitnessError as exc:
            if exc.path != str(copy):
                raise
            raise type(exc)(exc.message, STDIN) from None
