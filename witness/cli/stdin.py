"""``-`` as an audio input, or a FIFO (``<(cat call.wav)``): the stream copied to a temp file
the decoder can seek in."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from witness.errors import WitnessError
from witness.fileio import CHUNK

STDIN = "-"
STDIN_NAME = "stdin"  # what the outputs of standard input are named after (out/stdin.txt)


def is_stream(path: Path) -> bool:
    """Whether ``path`` is standard input or a pipe (a FIFO, ``/dev/fd/63`` from ``<(…)``):
    read once, from start to end, with no size to go by."""
    try:
        return str(path) == STDIN or stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def readable(path: Path) -> Iterator[Path]:
    """``path`` itself; for a stream (``is_stream``) a temp copy of it, removed afterwards,
    and errors about that copy name ``path``."""
    if not is_stream(path):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="witness-stdin-") as folder:
        copy = Path(folder) / STDIN_NAME
        with open(copy, "wb") as out, contextlib.ExitStack() as stack:
            source = sys.stdin.buffer if str(path) == STDIN else stack.enter_context(open(path, "rb"))
            shutil.copyfileobj(source, out, CHUNK)
        try:
            yield copy
        except WitnessError as exc:
            if exc.path != str(copy):
                raise
            raise exc.named(path) from None
