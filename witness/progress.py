"""The callback long work reports through: ``progress(stage, done, total)``, e.g.
("transcribing", 90, 600) for seconds of audio, or ("downloading", bytes, size)."""

from __future__ import annotations

from typing import Callable

Progress = Callable[[str, int, int], None]
