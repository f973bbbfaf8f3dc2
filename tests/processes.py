"""Process helpers for the tests that kill real runs."""

from __future__ import annotations

import os
import signal
import time


def group_alive(pgid: int, grace: float) -> bool:
    """Whether any process of group ``pgid`` is still there after up to ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.1)
    return True


def hear_ctrl_c():
    """A shell starts background jobs with SIGINT ignored, and the child would inherit that
    (pytest run as `.ci/run &`); a terminal's foreground job hears Ctrl-C. For ``preexec_fn``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
