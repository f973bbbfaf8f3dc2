"""Process helpers for the tests that kill real runs."""

from __future__ import annotations

import os
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
