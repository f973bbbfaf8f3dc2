"""WitnessError → one line on stderr and a non-zero exit (2 for bad input), for commands."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import click

from witness.errors import InputError, WitnessError


class UserError(click.ClickException):
    """A WitnessError as click shows it: ``Error: <file>: <problem>``, one line."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a WitnessError into a UserError (exit 2 for InputError, 1 otherwise).

    With the group's ``--debug`` set, the error propagates untouched (full traceback).
    """
    try:
        yield
    except WitnessError as exc:
        context = click.get_current_context(silent=True)
        if context is not None and context.find_root().params.get("debug"):
            raise
        raise UserError(str(exc), 2 if isinstance(exc, InputError) else 1) from None
