"""``witness diarize FILE…``: who spoke when, as RTTM (or a JSON transcript without words)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import click

from witness.cli.options import check_models_dir, check_speaker_bounds, config_option, for_each_file
from witness.config import DiarizationSettings, load_settings

log = logging.getLogger(__name__)

FORMATS = ("rttm", "json")

EXAMPLES = """
\b
Examples:
  witness diarize call.wav                        RTTM on stdout (file id: call)
  witness diarize calls/*.wav -o out              out/<name>.rttm per file
  witness diarize call.wav --format json -o out   turns, speakers and timings as JSON
  witness diarize call.wav --num-speakers 2       exactly two speakers
  witness diarize call.wav --max-speakers 4       at most four (merged down, with a warning)
  witness diarize call.wav --step 2               windows every 2 s: about twice as fast
  witness diarize call.wav --embedding ge2e       force the GE2E encoder
  witness diarize call.wav --models-dir ~/models  look for model files there first
"""


def _positive(ctx: click.Context, param: click.Parameter, value):
    if value is not None and value <= 0:
        raise click.BadParameter(f"must be positive, got {value}")
    return value


@click.command(epilog=EXAMPLES)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write DIR/<input name>.<format> instead of printing, e.g. -o out.")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="rttm", show_default=True,
              help="rttm: one SPEAKER line per turn; json: a transcript with turns, exclusive "
                   "turns, speakers and timings (no words), e.g. --format json.")
@click.option("--num-speakers", type=int, callback=_positive, metavar="N",
              help="Exactly N speakers, e.g. --num-speakers 2.")
@click.option("--min-speakers", type=int, callback=_positive, metavar="N",
              help="At least N speakers, e.g. --min-speakers 2.")
@click.option("--max-speakers", type=int, callback=_positive, metavar="N",
              help="At most N speakers; more are merged and a warning says so, e.g. --max-speakers 4.")
@click.option("--step", type=float, callback=_positive, metavar="S",
              help="Seconds between 10 s segmentation windows (default 1, as pyannote); "
                   "e.g. --step 2 runs about twice as fast.")
@click.option("--embedding", type=click.Choice(("auto", "ge2e", "wespeaker", "campplus")),
              help="Speaker embeddings: auto = WeSpeaker if already downloaded, else GE2E; "
                   "wespeaker downloads it when missing; campplus: 3D-Speaker CAM++ (converted once, "
                   "provisional clustering settings). E.g. --embedding ge2e.")
@click.option("--models-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder searched first for model files, e.g. --models-dir ~/witness-models "
                   "(then $WITNESS_MODELS_DIR, then ~/.cache/witness/models).")
@click.option("--threads", type=int, callback=_positive, metavar="N",
              help="ONNX Runtime threads per model (default 1: segmentation and embeddings run "
                   "side by side on two cores), e.g. --threads 2.")
@click.option("--overwrite", is_flag=True, help="Replace outputs that already exist.")
@config_option("A TOML file of settings ([diarization] in config/default.toml).")
@click.pass_context
def diarize(ctx, files, output_dir, fmt, num_speakers, min_speakers, max_speakers, step, embedding,
            models_dir, threads, overwrite, config_file):
    """Find who speaks when in FILES (speaker diarization, no transcription).

    Prints RTTM to stdout by default. Each file is done on its own: a bad file is reported in
    one line and the others still run (exit 2 if any failed; 1 if a model is missing or damaged).
    """
    loaded = load_settings(config_file)
    settings = _settings(loaded.diarization, num_speakers=num_speakers,
                         min_speakers=min_speakers, max_speakers=max_speakers, step=step,
                         embedding=embedding, threads=threads)
    if output_dir is None and fmt == "json" and len(files) > 1:
        raise click.BadParameter("several files as JSON need -o DIR", param_hint="--format")
    from witness.engines import build_diarizer
    from witness.fileio import check_output_folder

    check_models_dir(models_dir or loaded.models.dir)
    if output_dir:
        check_output_folder(output_dir)
    diarizer, bounds = build_diarizer(settings, str(models_dir or loaded.models.dir) or None, loaded.models.offline)
    for_each_file(ctx, files, lambda path: _one_file(path, diarizer, bounds, fmt, output_dir, overwrite))


def _settings(base: DiarizationSettings, **options) -> DiarizationSettings:
    """``base`` with every option given on the command line."""
    given = {k: (str(v) if isinstance(v, Path) else v) for k, v in options.items() if v is not None}
    settings = replace(base, **given)
    check_speaker_bounds(settings.num_speakers, settings.min_speakers, settings.max_speakers)
    return settings


def _one_file(path: Path, diarizer, bounds, fmt: str, output_dir: Path | None, overwrite: bool) -> None:
    from witness import pipeline
    from witness.audio import load_audio
    from witness.engines import diarization_info
    from witness.writers import WRITERS, check_outputs_free, output_paths, write_outputs

    paths = output_paths(path.stem, output_dir, [fmt]) if output_dir else []
    check_outputs_free(paths, overwrite)
    audio = load_audio(path)
    out = diarizer.run(audio.samples, bounds)
    log.info("%s: %d speakers (%s path, %s embeddings) in %.1f s", path, out.num_speakers, out.path,
             out.embedding, out.timings.get("total", 0.0))
    engine = diarization_info(diarizer, out)
    transcript = pipeline.assemble(pipeline.audio_meta(audio.info, len(audio.samples)), [], out.turns, out.exclusive_turns,
                                   engines={"diarization": engine}, timings=dict(out.timings))
    if paths:
        write_outputs(transcript, paths)
    else:
        click.echo(WRITERS[fmt](transcript), nl=False)


