"""The ``witness`` command line (click). Thin: it parses options and calls the library."""

from __future__ import annotations

import click

from witness import __version__


@click.group()
@click.version_option(__version__, prog_name="witness")
def main() -> None:
    """Speaker-labelled transcripts of recorded calls."""
