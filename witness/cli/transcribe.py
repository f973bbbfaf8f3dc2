"""``witness transcribe FILE…`` (also plain ``witness FILE…``)."""

from __future__ import annotations

from pathlib import Path

import click

from witness.cli.options import parse_formats, parse_speaker_names
from witness.config import load_settings
from witness.errors import WitnessError
from witness.rttm import read_rttm
from witness.writers import WRITERS, check_outputs_free, output_paths, write_outputs

EXAMPLES = """
\b
Examples:
  witness call.wav                              transcript (txt) on stdout
  witness call.wav --format srt > call.srt      one format on stdout
  witness calls/*.m4a -o out --format json,vtt  out/<name>.json, out/<name>.vtt
  witness call.wav --speaker-names SPEAKER_00=Diane,SPEAKER_01=Sheila
  witness call.wav --words words.json --turns call.rttm   merge only (no engines)
"""


@click.command(epilog=EXAMPLES)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write DIR/<input name>.<ext> per format instead of printing.")
@click.option("-f", "--format", "formats", callback=parse_formats, metavar="FMT[,FMT]",
              help=f"Output formats: {', '.join(WRITERS)}. Default: txt on stdout; "
                   "with -o the [output] formats of the config (txt,json).")
@click.option("--overwrite", is_flag=True, help="Replace outputs that already exist (never done silently).")
@click.option("--speaker-names", callback=parse_speaker_names, metavar="LABEL=NAME,…",
              help="Rename speakers in every output, e.g. SPEAKER_00=Diane,SPEAKER_01=Sheila.")
@click.option("--words", "words_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Take words from this JSON (a witness transcript or a list of {start,end,text}) "
                   "instead of running Whisper. Debugs the merge.")
@click.option("--turns", "turns_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Take speaker turns from this RTTM instead of running diarization.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A TOML file of settings (see config/default.toml).")
@click.pass_context
def transcribe(ctx, files, output_dir, formats, overwrite, speaker_names, words_file, turns_file, config_file):
    """Transcribe FILES and say who spoke each word.

    Audio can be wav, flac, mp3, ogg/opus, m4a/aac, webm or anything FFmpeg reads.
    Each file gets its own outputs; a bad file is reported in one line and the others
    still run (exit 2 if any failed).
    """
    settings = load_settings(config_file)
    formats = formats or (settings.output.formats if output_dir else ("txt",))
    if output_dir is None and len(formats) > 1:
        raise click.BadParameter("several formats need -o DIR (stdout takes one)", param_hint="--format")
    failed = 0
    for path in files:
        try:
            _one_file(path, files, output_dir, formats, overwrite, speaker_names, words_file, turns_file, settings)
        except WitnessError as exc:
            if len(files) == 1 or ctx.find_root().params.get("debug"):
                raise
            click.echo(f"witness: {exc}", err=True)
            failed += 1
    if failed:
        ctx.exit(2)


def _one_file(path, files, output_dir, formats, overwrite, names, words_file, turns_file, settings) -> None:
    from witness import pipeline
    from witness.audio import load_audio

    paths = output_paths(path, output_dir, formats) if output_dir else []
    check_outputs_free(paths, overwrite)
    audio = load_audio(path)
    meta = pipeline.audio_meta(audio)
    if words_file is None:
        raise WitnessError("the Whisper engine is not wired in yet: pass --words", path)
    words = pipeline.read_words(words_file)
    turns = None
    if turns_file is not None:
        by_file = read_rttm(turns_file)
        turns = by_file.get(Path(path).stem) or [t for ts in by_file.values() for t in ts]
    transcript = pipeline.assemble(meta, words, turns, options=settings.merge).rename_speakers(names)
    if paths:
        write_outputs(transcript, paths)
    else:
        if len(files) > 1:
            click.echo(f"==> {path} <==")
        click.echo(WRITERS[formats[0]](transcript), nl=False)
