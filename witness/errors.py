"""The one error type users see: a single line naming the file and the problem."""

from __future__ import annotations

from pathlib import Path


class WitnessError(Exception):
    """A problem the user can fix; the CLI prints it as one line and exits non-zero."""

    def __init__(self, message: str, path: str | Path | None = None):
        self.path = None if path is None else str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}" if self.path else message)


class InputError(WitnessError):
    """Bad input file (audio, transcript, RTTM, STM): exit code 2."""


class ModelError(WitnessError):
    """A model that is missing, corrupt or fails its checksum."""
