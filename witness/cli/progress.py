"""Progress on a terminal, silence in a pipe: one renderer (tqdm) for every command.

``ProgressView`` draws what the library reports: models being downloaded or converted
(``model(stage, completed, total)``, a bar each) and the files on their way through the
engines (``file(key, stage, completed, total)``). One file gets a bar of its work with the
elapsed time and an ETA; several files get a bar of files done, audio minutes, speed and an
ETA. Speed is audio seconds done over wall time, as the batch summary's real-time factor
(``finish`` gives the summary its wall time, so the two agree); the ETA is the audio still to
do (the files' sizes at the seconds per byte of those done) at that speed, estimated as each
file finishes and counting down in between. Beside it: the stages of the oldest file in
flight, which changes only when that file is done, so with ``--jobs 3`` the line never
jumps between files. Nothing is drawn when stderr is not a terminal or with ``--quiet``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

import click

from witness.timecode import format_clock

STAGE_NAMES = {"transcribe": "transcribe", "segmentation": "segment", "embedding": "embed",
               "clustering": "cluster", "reconstruction": "turns", "splitting": "voices",
               "vad": "voice activity"}
# Share of its engine's work each stage is, for one file's bar (roughly as measured on the CPU).
STAGE_WEIGHTS = {"transcribe": 1.0, "segmentation": 0.3, "vad": 0.3, "embedding": 0.6, "clustering": 0.05,
                 "reconstruction": 0.05, "splitting": 0.05}
ENGINE_OF = {"transcribe": "asr"}  # every other stage is diarization's
REDRAW_SECONDS = 0.2


def enabled(ctx: click.Context) -> bool:
    return not ctx.find_root().params.get("quiet") and sys.stderr.isatty()


class ProgressView:
    """What the user sees on stderr while a command runs (see the module docstring).
    ``files``: the inputs in order (their sizes make a batch's ETA); ``on`` False: nothing
    is drawn, lines from ``write`` go to stderr plainly."""

    def __init__(self, files: list[str], on: bool, engines: int = 2, clock: Callable[[], float] = time.monotonic):
        self.on = on
        self.count = len(files)
        self.single = self.count == 1
        self.engines = max(1, engines)
        self._sizes = {f: _size(f) for f in files}  # of the files not done yet
        self.done_bytes = 0  # of files transcribed: the seconds per byte the ETA assumes for the rest
        self.audio_seconds = 0.0  # of files transcribed
        self._clock = clock
        self.started = clock()
        self._ended: float | None = None
        self._estimate: tuple[float, float, float] | None = None  # (when, speed, seconds left) at the last file done
        self._stages: dict[str, dict[str, tuple[int, int]]] = {}  # by file key, in order of first event
        self._models: dict[str, object] = {}
        self._bar = None
        self._last = 0.0
        self._done = 0  # a single file's bar: percent of its work, never backwards

    @property
    def elapsed(self) -> float:
        """Wall seconds since the view was made (until ``finish``)."""
        return (self._ended if self._ended is not None else self._clock()) - self.started

    def _files_bar(self):
        if self._bar is None and self.on:
            from tqdm import tqdm

            if self.single:
                fmt = "{percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]{postfix}"
                self._bar = tqdm(total=100, file=sys.stderr, dynamic_ncols=True, bar_format=fmt, leave=False)
            else:
                fmt = "{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} files [{elapsed}]{postfix}"
                self._bar = tqdm(total=self.count, unit="file", file=sys.stderr, dynamic_ncols=True, bar_format=fmt)
        return self._bar

    def hook(self, step_name: str, step_artifact: object = None, *, file: str | None = None,
             total: int | None = None, completed: int | None = None) -> None:
        """The library's progress hook (``witness.progress.Hook``): a file's stage, or a model's."""
        if file is None:
            self.model(step_name, completed or 0, total or 0)
        else:
            self.file(file, step_name, completed or 0, total or 0)

    def model(self, stage: str, completed: int, total: int) -> None:
        """A model download or conversion: a bar of its own (bytes for downloads)."""
        if not self.on:
            return
        from tqdm import tqdm

        bar = self._models.get(stage)
        if bar is None:
            unit = "B" if stage.startswith("download") else "it"
            bar = self._models[stage] = tqdm(total=total or None, desc=stage, unit=unit, unit_scale=unit == "B",
                                             file=sys.stderr, leave=False)
        bar.update(completed - bar.n)  # type: ignore[attr-defined]

    def file(self, key: str, stage: str, completed: int, total: int) -> None:
        """A stage of the file ``key`` moved on."""
        self._stages.setdefault(key, {})[stage] = (completed, total)
        now = self._clock()
        if not self.on or (now - self._last < REDRAW_SECONDS and completed < total):
            return
        self._last = now
        bar = self._files_bar()
        if self.single:
            done = max(self._done, int(100 * self._fraction(self._stages[key])))
            bar.update(done - self._done)
            self._done = done
        bar.set_postfix_str(self._postfix(), refresh=True)

    def _fraction(self, stages: dict[str, tuple[int, int]]) -> float:
        """How much of a file's work is done, from its stages (each engine an equal share)."""
        per_engine: dict[str, float] = {}
        for stage, (completed, total) in stages.items():
            share = STAGE_WEIGHTS.get(stage, 0.0) * (min(completed / total, 1.0) if total else 0.0)
            engine = ENGINE_OF.get(stage, "diarization")
            per_engine[engine] = per_engine.get(engine, 0.0) + share
        return min(1.0, sum(per_engine.values()) / self.engines)

    def file_done(self, key: str, transcribed: bool, audio_seconds: float) -> None:
        """The file ``key`` finished: ``transcribed`` (ok, ``audio_seconds`` long), or skipped or failed."""
        self._stages.pop(key, None)
        size = self._sizes.pop(key, 0)
        if transcribed:
            self.done_bytes += size
            self.audio_seconds += audio_seconds
        if self.audio_seconds and self.elapsed > 0:
            speed = self.audio_seconds / self.elapsed  # audio seconds per wall second
            left = sum(self._sizes.values()) * self.audio_seconds / self.done_bytes if self.done_bytes else 0.0
            self._estimate = (self._clock(), speed, left / speed)
        bar = self._files_bar()
        if bar is not None:
            bar.set_postfix_str(self._postfix(), refresh=False)  # drawn with the count (never 6/6 with an ETA)
            bar.update(100 - self._done if self.single else 1)
            self._done = 100

    def finish(self) -> float:
        """Stop the clock, show the final speed and return the wall seconds it is over."""
        self._ended = self._clock()
        if self.audio_seconds and self.elapsed > 0:
            self._estimate = (self._ended, self.audio_seconds / self.elapsed, 0.0)
        if self._bar is not None and not self.single:
            self._bar.set_postfix_str(self._postfix())
        return self.elapsed

    def _postfix(self) -> str:
        parts = []
        if not self.single:
            parts.append(f"{self.audio_seconds / 60:.1f} audio min")
            if self._estimate is not None:
                when, speed, eta = self._estimate
                parts.append(f"{speed:.1f}x real time")
                if self._sizes and self.done_bytes:
                    parts.append(f"ETA {format_clock(max(0.0, eta - (self._clock() - when)), decimals=0)}")
        oldest = next(iter(self._stages.items()), None)
        if oldest is not None:
            key, stages = oldest
            shown = " · ".join(f"{STAGE_NAMES.get(s, s)} {_amount(c, t)}" for s, (c, t) in stages.items())
            parts.append(f"{Path(key).name}: {shown}")
        return " · ".join(parts)

    def write(self, line: str) -> None:
        """A line on stderr above the bar (or plainly, without one)."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            click.echo(line, err=True)

    def close(self) -> None:
        for bar in [*self._models.values(), self._bar]:
            if bar is not None:
                bar.close()  # type: ignore[attr-defined]
        self._models.clear()
        self._bar = None

    def __enter__(self) -> "ProgressView":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _amount(completed: int, total: int) -> str:
    if total == 100:
        return f"{completed}%"
    return f"{completed}/{total}" if total else str(completed)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
