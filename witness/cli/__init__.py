"""The ``witness`` command line (click). Thin: each module here parses options for one
command and calls the library; errors reach the user as one line (see ``errors.py``)."""

from __future__ import annotations

import click

from witness import __version__


@click.group()
@click.version_option(__version__, prog_name="witness")
def main() -> None:
    """Speaker-labelled transcripts of recorded calls."""


from witness.cli.evaluate import evaluate  # noqa: E402  (commands register after the group)
from witness.cli.quote import quote  # noqa: E402

main.add_command(evaluate)
main.add_command(quote)
