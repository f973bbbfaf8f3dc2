"""The ``witness`` command line (click). Thin: each module here parses the options of one
command and calls the library.

Exit codes: 0 done; 1 nothing matched (``quote``) or the run failed (engine, model);
2 bad input or usage (a file that is not audio, a malformed transcript, a bad option);
130/143 stopped by Ctrl-C/SIGTERM; 141 the reader of stdout went away.
Errors are one line on stderr naming the file and the problem; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

import click

from witness import __version__
from witness.errors import WitnessError

DEFAULT_COMMAND = "transcribe"
GLOBAL_FLAGS = ("--debug", "-v", "--verbose", "-q", "--quiet")


class UserError(click.ClickException):
    """A WitnessError on its way to the terminal: ``witness: <file>: <problem>``."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file=None) -> None:
        click.echo(f"witness: {self.format_message()}", err=True)


class WitnessGroup(click.Group):
    """``witness FILE…`` means ``witness transcribe FILE…``; the global flags (``-q``,
    ``-v``, ``--debug``) work after the command too (``_global_flags``); library errors
    become one line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        i = 0
        while i < len(args) and args[i] in GLOBAL_FLAGS:
            i += 1
        if i < len(args) and args[i] not in self.commands and args[i] not in ("--help", "-h", "--version"):
            args = args[:i] + [DEFAULT_COMMAND] + args[i:]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        """The command, then its helper processes reaped. Ctrl-C or SIGTERM: one line and exit
        130 or 143, once the run has cleaned up on its way out. A reader of stdout that went
        away (``witness models list | head -1``): quiet exit 141, as a tool killed by SIGPIPE."""
        from witness.cli.options import STOP_KEY
        from witness.run.stop import StopSignals

        stop = ctx.meta[STOP_KEY] = StopSignals()
        try:
            with stop.listening():
                return self._invoke_with_one_line_errors(ctx)
        except KeyboardInterrupt:
            click.echo("witness: interrupted", err=True)
            ctx.exit(128 + (stop.received[0] if stop.received else signal.SIGINT))
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)  # nothing more reaches a closed pipe, not even at exit
            for stream in (sys.stdout, sys.stderr):
                os.dup2(devnull, stream.fileno())
            ctx.exit(128 + signal.SIGPIPE)
        finally:
            if "witness.run.workers" in sys.modules:
                from witness.run.workers import end_helpers

                end_helpers()

    def _invoke_with_one_line_errors(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except WitnessError as exc:
            if ctx.params.get("debug"):
                raise
            raise UserError(str(exc), exc.exit_code) from None
        except click.UsageError as exc:  # click's usage, hint and "Error:" lines made one line
            raise UserError(exc.format_message(), exc.exit_code) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:  # a bug or a native failure: one line, traceback with --debug
            if ctx.params.get("debug"):
                raise
            raise UserError(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)", 1) from None


@click.group(cls=WitnessGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="witness")
@click.option("--debug", is_flag=True, help="Show full tracebacks and debug logs.")
@click.option("-v", "--verbose", is_flag=True, help="Log what happens (plan, models, timings) to stderr.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr; no progress bars.")
@click.pass_context
def main(ctx: click.Context, debug: bool, verbose: bool, quiet: bool) -> None:
    """Speaker-labelled transcripts of recorded calls: who said what, and when.

    \b
    witness call.wav                      print the transcript (txt) to stdout
    witness call.m4a -o out --format json,srt
    witness quote out/call.json 09:32     what was said at 09:32
    witness eval der ref.rttm hyp.rttm    diarization error rate
    """
    _log_to_stderr(debug, verbose)
    from witness.accel.providers import quiet_runtime

    quiet_runtime()
    ctx.obj = {"debug": debug, "verbose": verbose, "quiet": quiet}


class _StderrHandler(logging.StreamHandler):
    """``witness: <message>`` lines on whatever ``sys.stderr`` is when a record comes (click's
    test runner swaps it for each invocation)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("witness: %(message)s"))

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def _log_to_stderr(debug: bool, verbose: bool) -> None:
    """Log records to stderr (warnings; with ``verbose`` what was decided; with ``debug``
    everything), one handler however often main runs."""
    root = logging.getLogger()
    if not any(isinstance(h, _StderrHandler) for h in root.handlers):
        root.addHandler(_StderrHandler())
    root.setLevel(logging.DEBUG if debug else logging.INFO if verbose else logging.WARNING)


def _global_flag(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """A global flag given after the command (``witness call.wav -q``): as if given before it."""
    if not value:
        return
    root = ctx.find_root()
    root.params[param.name] = True
    if isinstance(root.obj, dict):
        root.obj[param.name] = True
    _log_to_stderr(bool(root.params.get("debug")), bool(root.params.get("verbose")))


def _global_flags(command: click.Command) -> None:
    """``command`` and its subcommands also take the global flags they do not define themselves
    (``batch`` has its own ``-q``), hidden from their help."""
    own = {opt for param in command.params for opt in getattr(param, "opts", ())}
    for flags, name in ((("--debug",), "debug"), (("-v", "--verbose"), "verbose"), (("-q", "--quiet"), "quiet")):
        if not own.intersection(flags):
            command.params.append(click.Option(flags, name, is_flag=True, hidden=True, expose_value=False,
                                               callback=_global_flag))
    for sub in getattr(command, "commands", {}).values():
        _global_flags(sub)


def _register() -> None:
    from witness.cli.batch import batch
    from witness.cli.diarize import diarize
    from witness.cli.doctor import doctor, warmup
    from witness.cli.evaluate import evaluate
    from witness.cli.models import models
    from witness.cli.quote import quote
    from witness.cli.transcribe import transcribe
    from witness.cli.voices import enroll, voices

    for command in (transcribe, batch, diarize, quote, evaluate, models, doctor, warmup, enroll, voices):
        _global_flags(command)
        main.add_command(command)


_register()
