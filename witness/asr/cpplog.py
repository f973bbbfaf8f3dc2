"""whisper.cpp's log, captured instead of printed.

whisper.cpp has one log hook per process. While any ``capture()`` is open, ``CPP_LOG``'s hook
takes every line and hands it to the captures opened on the thread that logged it (whisper_full
logs on the thread that called it, so decoders running at once keep their lines apart), or to
all open captures when it comes from another thread. A failed WHISPER_ASSERT goes to stderr at
once, since whisper.cpp aborts the process right after. With no capture open, no Python hook is
installed: one left installed can fire during interpreter teardown and abort.
"""

from __future__ import annotations

import logging
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

log = logging.getLogger(__name__)

LOG_ERROR = 4  # ggml_log_level GGML_LOG_LEVEL_ERROR

Lines = list[tuple[int, str]]  # (ggml log level, text) as whisper.cpp logged them


class CppLog:
    """The process's whisper.cpp log hook (use the one ``CPP_LOG``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, list[Lines]] = {}  # thread id -> its open captures

    @contextmanager
    def capture(self) -> Iterator[Lines]:
        """Yields the list that the lines logged until the block ends are appended to."""
        import _pywhispercpp as pw

        lines: Lines = []
        me = threading.get_ident()
        with self._lock:
            if not self._open:
                pw.whisper_log_set(self._hook)
            self._open.setdefault(me, []).append(lines)
        try:
            yield lines
        finally:
            with self._lock:
                mine = self._open[me]
                del mine[next(i for i, open_ in enumerate(mine) if open_ is lines)]
                if not mine:
                    del self._open[me]
                if not self._open:
                    pw.whisper_log_set(None)
            if lines:
                log.debug("whisper.cpp: %s", "".join(t for _, t in lines).strip())

    def _hook(self, level: int, text: str) -> None:
        if level == LOG_ERROR and "ASSERT" in text:
            sys.stderr.write(f"whisper.cpp: {text.rstrip()}\n")
            sys.stderr.flush()
        targets = self._open.get(threading.get_ident()) or [c for cs in list(self._open.values()) for c in cs]
        for lines in targets:
            lines.append((level, text))


CPP_LOG = CppLog()
