"""The callbacks long work reports through: ``progress(stage, done, total)``, e.g.
("transcribe", 45, 100) or ("download", bytes, size); and, where several files are in
flight, ``progress(key, stage, done, total)`` with the file the event belongs to."""

from __future__ import annotations

from typing import Any, Callable, Protocol

Progress = Callable[[str, int, int], None]
FileProgress = Callable[[str, str, int, int], None]


class Hook(Protocol):
    """The one progress callback of the Python API, as pyannote's pipelines call theirs:
    ``hook(step_name, step_artifact, file=None, total=None, completed=None)``. Steps:
    "download" and "convert" (a model: ``total`` bytes or steps), "transcribe",
    "segmentation", "embedding", "clustering", "reconstruction", "vad" (a file's engine
    work, ``file`` its path); ``step_artifact`` is None."""

    def __call__(self, step_name: str, step_artifact: Any = None, *, file: str | None = None,
                 total: int | None = None, completed: int | None = None) -> None: ...


def model_progress(hook: Hook | None) -> Progress | None:
    """``hook`` as the models' ``progress(stage, done, total)``."""
    if hook is None:
        return None
    return lambda stage, done, total: hook(stage, None, total=total, completed=done)


def file_progress(hook: Hook | None) -> FileProgress | None:
    """``hook`` as the engines' ``progress(file, stage, done, total)``."""
    if hook is None:
        return None
    return lambda key, stage, done, total: hook(stage, None, file=key, total=total, completed=done)
