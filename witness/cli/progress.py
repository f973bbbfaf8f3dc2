"""Progress on a terminal, silence in a pipe: a status line for the file being worked on,
and a bar for a batch.

The library reports ``(stage, completed, total)``; this turns it into one line on stderr
that is redrawn in place, e.g. ``call.wav  transcribe 45% · embedding 120/600``. Nothing is
drawn when stderr is not a terminal or with ``--quiet``.
"""

from __future__ import annotations

import sys
import time

import click

from witness.timecode import format_clock

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


class BatchBar:
    """The batch's progress bar (tqdm): files done of all, audio minutes transcribed, speed
    as a multiple of real time, and an ETA from the bytes still to do; the stage of the
    file being worked on after it. ``on`` False: nothing is drawn."""

    def __init__(self, sizes: list[int], on: bool):
        self.on = on
        self.bytes_left = sum(sizes)
        self.done_bytes = 0  # of files transcribed: the speed the ETA assumes for the rest
        self.audio_seconds = 0.0
        self.started = time.monotonic()
        self._stage = ""
        self._last = 0.0
        self._bar = None
        if on:
            from tqdm import tqdm

            self._bar = tqdm(total=len(sizes), unit="file", file=sys.stderr, dynamic_ncols=True,
                             bar_format="{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} files [{elapsed}]{postfix}")

    def file_done(self, size: int, transcribed: bool, audio_seconds: float) -> None:
        """One more file finished: ``transcribed`` (ok) or skipped or failed."""
        self.bytes_left -= size
        if transcribed:
            self.done_bytes += size
            self.audio_seconds += audio_seconds
        self._stage = ""
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(self._postfix())

    def stage(self, stage: str, completed: int, total: int) -> None:
        now = time.monotonic()
        if self._bar is None or now - self._last < 0.2:
            return
        self._last = now
        self._stage = f"{STAGE_NAMES.get(stage, stage)} {_amount(completed, total)}"
        self._bar.set_postfix_str(self._postfix())

    def _postfix(self) -> str:
        elapsed = time.monotonic() - self.started
        parts = [f"{self.audio_seconds / 60:.1f} audio min"]
        if self.audio_seconds and elapsed:
            parts.append(f"{self.audio_seconds / elapsed:.1f}x real time")
        if self.done_bytes and self.bytes_left > 0:
            parts.append(f"ETA {format_clock(elapsed * self.bytes_left / self.done_bytes, decimals=0)}")
        if self._stage:
            parts.append(self._stage)
        return " · ".join(parts)

    def write(self, line: str) -> None:
        """A line on stderr above the bar (or plainly, without one)."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            click.echo(line, err=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

