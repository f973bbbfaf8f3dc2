"""``witness batch INPUT… -o OUTDIR``: folders of calls, models loaded once, resumable."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import click

from witness.cli.options import (
    config_option, engine_options, engine_settings, html_audio_option, parse_formats, voices_option)
from witness.cli.progress import ProgressView, enabled
from witness.fileio import check_output_folder
from witness.writers import FORMATS, check_not_inputs

EXAMPLES = """
\b
Examples:
  witness batch calls/ -o transcripts/            every call below calls/, txt and json
  witness batch calls/ -o out --format json,srt   out/<same folders>/<name>.json, .srt
  witness batch 'calls/**/*.m4a' a.wav -o out     globs (quoted: witness expands them) and files
  witness batch calls/ -o out --force             redo files the manifest says are done
  witness batch calls/ -o out --jobs 4 --parallel
  witness batch /shared/calls -o out --ray auto   on the Ray cluster this machine is part of
\b
A re-run of the same command skips what is done (same input, same settings) and retries
the rest. OUTDIR/witness-manifest.jsonl records every file: see the README ("witness batch").
Exit codes: 0 every file done, 2 some failed (listed at the end), or bad usage (an OUTDIR
that cannot be written, or that another batch is writing to), 130 interrupted (Ctrl-C),
143 stopped by SIGTERM.
"""


@click.command(epilog=EXAMPLES)
@click.argument("inputs", nargs=-1, required=True)
@click.option("-o", "--output-dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Where outputs go, in the inputs' folder structure, with the manifest.")
@click.option("-f", "--format", "formats", callback=parse_formats, metavar="FMT[,FMT]",
              help=f"Output formats: {', '.join(FORMATS)}. Default: the [output] formats of the config (txt,json).")
@click.option("-j", "--jobs", type=click.IntRange(1), metavar="N",
              help="Files in flight at once (their decoded audio is held in memory, ~230 MB per "
                   "hour). Default: 2 when the engines take turns, 3 side by side. With --ray: one per actor.")
@click.option("--force", is_flag=True, help="Redo files already done, and replace outputs the batch did not write.")
@click.option("--ray", "ray_address", metavar="ADDRESS",
              help="Run the engines on a Ray cluster: 'auto' (the cluster RAY_ADDRESS names, or the one "
                   "running here), 'local' (start one in this process, to try it) or the head's address. "
                   "Inputs and models must be at the same paths on every node; outputs and the manifest "
                   "are written here. Needs pip install 'witness[ray]'.")
@click.option("--ray-actors", type=click.IntRange(1), metavar="N",
              help="Ray actors, each holding the models and working on one file at a time. "
                   "Default: as many as the cluster's CPUs (and GPUs) hold at the plan's threads each.")
@click.option("--ray-gpus-per-actor", type=click.FloatRange(0, 64), metavar="F",
              help="GPUs each Ray actor reserves; a fraction shares a card (0.25: four actors). "
                   "Default: a node's GPUs split between its actors when an engine runs on a GPU.")
@click.option("-q", "--quiet", is_flag=True, help="Nothing on stderr but errors: no bar, no summary.")
@html_audio_option
@engine_options
@voices_option
@config_option()
@click.pass_context
def batch(ctx, inputs, output_dir, formats, jobs, force, ray_address, ray_actors, ray_gpus_per_actor, quiet,
          html_audio, config_file, no_diarize, voices, **engine):
    """Transcribe every call in INPUTS (files, folders searched recursively for audio, globs)
    into OUTDIR, loading the models once.

    Files go through the engines as a pipeline (while one is diarized the next is
    transcribed, when the plan runs the engines side by side). Each file's outputs are
    written atomically as it finishes; a file whose engine worker dies is retried once in
    a fresh worker; a bad file is reported and the batch goes on. Ctrl-C (or SIGTERM)
    stops cleanly.
    """
    from witness.api import Witness
    from witness.run.batch import BatchOptions, StopSignals, find_items, run_batch, settings_hash, summarize
    from witness.run.ray_pool import RayOptions, import_ray

    ray = None
    if ray_address is not None:
        import_ray()  # says how to install it, before any work
        ray = RayOptions(ray_address, ray_actors or 0, ray_gpus_per_actor)
    elif ray_actors is not None or ray_gpus_per_actor is not None:
        raise click.UsageError("--ray-actors and --ray-gpus-per-actor go with --ray ADDRESS")
    settings = engine_settings(config_file, voices, **engine)
    items = find_items(inputs, formats or settings.output.formats, settings_hash(settings, not no_diarize))
    check_output_folder(output_dir)
    check_not_inputs([output_dir / out for item in items for out in item.outputs], [item.input for item in items])
    quiet = quiet or bool(ctx.find_root().params.get("quiet"))
    view = _View(items, enabled(ctx) and not quiet, 1 if no_diarize else 2)
    stopped_by = None
    stop = StopSignals()  # which signal stopped it (Ray's waits turn any KeyboardInterrupt into a plain one)
    try:
        with Witness.from_settings(settings, no_diarize=no_diarize, hook=view.bar.hook, jobs=jobs, ray=ray,
                                   keep_workers=False) as engine:
            run_batch(items, output_dir, engine, BatchOptions(force=force, html_audio=html_audio),
                      report=view.row, stop=stop)
    except KeyboardInterrupt:
        stopped_by = stop.received[0] if stop.received else signal.SIGINT
    finally:
        wall_time = view.bar.finish()  # the bar's last speed and the summary's are over the same time
        view.bar.close()
    summary = summarize(view.rows, wall_time)
    if stopped_by is not None:
        click.echo("witness: interrupted: finished files are kept; run the same command again to go on", err=True)
    if not quiet:
        click.echo(_summary_table(summary, view.found_as), err=True, nl=False)
    ctx.exit(128 + stopped_by if stopped_by is not None else 2 if summary.failed else 0)


class _View:
    """What the user sees while the batch runs: the bar, and one line per failed file or
    file with a warning (no speech found)."""

    def __init__(self, items, show_bar: bool, engines: int):
        self.found_as = {os.path.abspath(item.input): item.input for item in items}
        self.bar = ProgressView([item.input for item in items], show_bar, engines)
        self.rows = []

    def row(self, row) -> None:
        self.rows.append(row)
        found_as = self.found_as.get(row.input, row.input)
        if row.status == "failed" or row.warning:
            self.bar.write(f"witness: {found_as}: {row.error or row.warning}")
        self.bar.file_done(found_as, row.status == "ok", row.duration or 0.0)


def _summary_table(s, found_as: dict[str, str]) -> str:
    """The end-of-run summary (``witness.run.batch.BatchSummary``) as lines for stderr; files
    named as they were found (``found_as``: absolute path -> that)."""
    rtf = "—" if s.rtf is None else f"{s.rtf:.3f} ({1 / s.rtf:.1f}x real time)"
    lines = [
        "",
        f"  files ok          {s.ok}",
        f"  files failed      {s.failed}",
        f"  files skipped     {s.skipped}",
        f"  audio             {s.audio_seconds / 3600:.2f} h ({s.audio_seconds / 60:.1f} min)",
        f"  wall time         {_duration(s.wall_time)}",
        f"  real-time factor  {rtf}",
    ]
    if s.failures:
        lines.append("  failed:")
        lines.extend(f"    {found_as.get(path, path)}: {error}" for path, error in s.failures)
    return "\n".join(lines) + "\n"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}h {minutes:02d}m {secs:04.1f}s" if hours else f"{minutes}m {secs:04.1f}s" if minutes else f"{secs:.1f}s"
