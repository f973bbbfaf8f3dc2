"""``witness diarize FILE…``: who spoke when, as RTTM (or a JSON transcript without words),
through the orchestrator with diarization alone (in its worker, on the planned device)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import click

from witness.cli.options import (
    channels_option, config_option, device_option, embedding_option, engine_settings, models_dir_option,
    output_files, segmentation_option, speaker_options, transcripts, voices_option)

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
  witness diarize call.wav --device cpu           keep the models off the GPU
  witness diarize stereo-call.wav --channels split  one speaker per channel
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
@speaker_options
@click.option("--step", type=float, callback=_positive, metavar="S",
              help="Seconds between 10 s segmentation windows (default 1, as pyannote); "
                   "e.g. --step 2 runs about twice as fast.")
@segmentation_option()
@embedding_option()
@channels_option()
@models_dir_option()
@click.option("--model-threads", "--threads", "threads", type=int, callback=_positive, metavar="N",
              help="ONNX Runtime threads per diarization model ([diarization] threads; default: the "
                   "plan's, one each: segmentation and embeddings run side by side), e.g. --threads 2. "
                   "Not transcribe's --threads (CPU threads in all).")
@device_option("Where the diarization models run: auto (default) takes the best provider the installed "
               "ONNX Runtime offers; [diarization] segmentation_device and embedding_device set each "
               "model. E.g. --device cpu.")
@voices_option
@click.option("--overwrite", is_flag=True, help="Replace outputs that already exist.")
@config_option("A TOML file of settings ([diarization] in config/default.toml).")
@click.pass_context
def diarize(ctx, files, output_dir, fmt, num_speakers, min_speakers, max_speakers, step, segmentation,
            embedding, channels, models_dir, threads, device, voices, overwrite, config_file):
    """Find who speaks when in FILES (speaker diarization, no transcription).

    Prints RTTM to stdout by default. Each file is done on its own: a bad file is reported in
    one line and the others still run (exit 2 if any failed; 1 if a model is missing or damaged).
    """
    settings = engine_settings(config_file, voices, num_speakers=num_speakers, min_speakers=min_speakers,
                               max_speakers=max_speakers, segmentation=segmentation, embedding=embedding,
                               channels=channels, device=device, models_dir=models_dir)
    own = {k: v for k, v in (("step", step), ("threads", threads)) if v is not None}  # diarize's alone
    if own:
        settings = replace(settings, diarization=replace(settings.diarization, **own))
    if output_dir is None and fmt == "json" and len(files) > 1:
        raise click.BadParameter("several files as JSON need -o DIR", param_hint="--format")
    _run(ctx, files, settings, fmt, output_dir, overwrite)


def _run(ctx, files, settings, fmt: str, output_dir: Path | None, overwrite: bool) -> None:
    """Every file through the orchestrator with diarization alone; outputs as they finish."""
    from witness.writers import WRITERS, write_outputs

    outputs = output_files(files, output_dir, [fmt])
    for path, t in transcripts(ctx, files, settings, outputs, overwrite, turns_only=True):
        info = t.engines["diarization"]
        if info.get("method") == "channels":
            log.info("%s: %d speakers, one per channel", path, len(t.speakers))
        else:
            log.info("%s: %d speakers (%s path, %s embeddings, on %s)", path, len(t.speakers), info["path"],
                     info["embedding"], info.get("providers"))
        if not t.turns:
            click.echo(f"witness: {path}: no speech found: no speaker was heard (silence, music, or speech "
                       "too quiet for the segmentation model)", err=True)
        if output_dir:
            write_outputs(t, outputs[path])
        else:
            click.echo(WRITERS[fmt](t), nl=False)
