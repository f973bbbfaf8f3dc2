"""The callbacks long work reports through: ``progress(stage, done, total)``, e.g.
("transcribe", 45, 100) or ("download", bytes, size); and, where several files are in
flight, ``progress(key, stage, done, total)`` with the file the event belongs to."""

from __future__ import annotations

from typing import Callable

Progress = Callable[[str, int, int], None]
FileProgress = Callable[[str, str, int, int], None]
