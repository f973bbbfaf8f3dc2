"""The one error type users see: a single line naming the file and the problem."""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)


class WitnessError(Exception):
    """A problem the user can fix; the CLI prints it as one line and exits with
    ``exit_code`` (1: the run failed; the README's "Exit codes")."""

    exit_code = 1

    def __init__(self, message: str, path: str | Path | None = None):
        self.path = None if path is None else str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}" if self.path else message)

    def named(self, path: str | Path) -> "WitnessError":
        """The same error about ``path`` (e.g. a temporary copy's error naming the input
        as the user gave it), whatever arguments its class takes."""
        other = _blank(type(self), self.__dict__)
        other.path = str(path)
        other.args = (f"{other.path}: {self.message}",)
        return other

    def __reduce__(self):
        """Pickled (a worker's error crossing to the parent) as its fields, not as its
        constructor's arguments, which differ between the subclasses."""
        return _blank, (type(self), self.__dict__, self.args)


class InputError(WitnessError):
    """Bad input file (audio, transcript, RTTM, STM): exit code 2."""

    exit_code = 2


class UsageError(WitnessError):
    """A choice on the command line that cannot work (an output folder that cannot be
    written, an output that would be replaced without --overwrite, a folder another batch
    holds): exit code 2."""

    exit_code = 2


class ModelError(WitnessError):
    """A model that is missing, corrupt or fails its checksum."""


class ModelNotHere(ModelError):
    """A model that is not on this machine and is not to be downloaded; ``hint`` says
    where to put it. ``offline``: whether that is because witness is offline (the message
    says so only then; ``witness models path`` never downloads either)."""

    def __init__(self, name: str, hint: str, offline: bool):
        self.name, self.hint, self.offline = name, hint, offline
        super().__init__(f"model {name} is not here{' and witness is offline' if offline else ''}: {hint}")


def _blank(cls: type[WitnessError], fields: dict, args: tuple = ()) -> WitnessError:
    """An error of ``cls`` with ``fields``, made without calling its constructor."""
    error = cls.__new__(cls)
    error.__dict__.update(fields)
    error.args = args
    return error


def file_error(exc: Exception, path: str | Path) -> WitnessError:
    """What ended the work on the file ``path`` (decoding it, reading it), as its one-line
    error: a WitnessError as it is (about ``path`` when it names no file), an OSError as
    "cannot read", anything else (a bug, a decoder's failure) as an internal error."""
    if isinstance(exc, WitnessError):
        return exc if exc.path else exc.named(path)
    if isinstance(exc, OSError):
        return InputError(f"cannot read ({exc.strerror or exc})", path)
    return internal_error(exc, path)


def engine_error(name: str, exc: Exception, path: str | Path) -> WitnessError:
    """What ended engine ``name``'s job on ``path``, as its one-line error: a WitnessError
    keeps its kind (its exit code), anything else is "<name> failed: …" (the traceback in
    the debug log); the worker or actor lives on."""
    if isinstance(exc, WitnessError):
        return exc if exc.path else exc.named(path)
    log.debug("%s failed", name, exc_info=exc)
    return WitnessError(f"{name} failed: {type(exc).__name__}: {exc}", path)


def internal_error(exc: BaseException, path: str | Path | None) -> WitnessError:
    """An unexpected exception (a bug, a library's failure) as one file's error: one line,
    its traceback in the debug log (``--debug``), so the other files of a run go on."""
    log.debug("%s: internal error", path, exc_info=exc)
    return WitnessError(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)", path)
