"""Progress on a terminal, silence in a pipe: a status line for the file being worked on.

The library reports ``(stage, completed, total)``; this turns it into one line on stderr
that is redrawn in place, e.g. ``call.wav  transcribe 45% · embedding 120/600``. Nothing is
drawn when stderr is not a terminal or with ``--quiet``.
"""

from __future__ import annotations

import sys
import time

import click

STAGE_NAMES = {"transcribe": "transcribe", "segmentation": "segment", "embedding": "embed",
               "clustering": "cluster", "reconstruction": "turns", "vad": "voice activity"}


def enabled(ctx: click.Context) -> bool:
    return not ctx.find_root().params.get("quiet") and sys.stderr.isatty()


class StatusLine:
    """A callable progress sink that redraws one stderr line (at most 10 times a second)."""

    def __init__(self, label: str, on: bool):
        self.label = label
        self.on = on
        self.stages: dict[str, tuple[int, int]] = {}
        self._last = 0.0
        self._width = 0

    def __call__(self, stage: str, completed: int, total: int) -> None:
        if not self.on:
            return
        self.stages[stage] = (completed, total)
        now = time.monotonic()
        if now - self._last >= 0.1 or completed >= total:
            self._last = now
            self._draw()

    def _draw(self) -> None:
        parts = [f"{STAGE_NAMES.get(s, s)} {_amount(c, t)}" for s, (c, t) in self.stages.items()]
        text = f"{self.label}  " + " · ".join(parts)
        pad = max(0, self._width - len(text))
        self._width = len(text)
        click.echo("\r" + text + " " * pad, nl=False, err=True)

    def close(self) -> None:
        if self.on and self._width:
            click.echo("\r" + " " * self._width + "\r", nl=False, err=True)
            self._width = 0

    def __enter__(self) -> "StatusLine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _amount(completed: int, total: int) -> str:
    if total == 100:
        return f"{completed}%"
    return f"{completed}/{total}" if total else str(completed)
