"""``witness transcribe FILE…`` (also plain ``witness FILE…``)."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from witness.cli.options import (
    config_option, engine_options, engine_settings, html_audio_option, output_files, parse_formats,
    parse_speaker_names, transcripts, voices_option)
from witness.cli.stdin import STDIN
from witness.writers import FORMATS, PageSource, render, write_outputs

log = logging.getLogger(__name__)

EXAMPLES = """
\b
Examples:
  witness call.wav                              transcript (txt) on stdout
  witness call.wav --format srt > call.srt      one format on stdout
  witness calls/*.m4a -o out --format json,vtt  out/<name>.json, out/<name>.vtt
  witness call.wav --speaker-names SPEAKER_00=Diane,SPEAKER_01=Sheila
  witness call.wav -o out --format html         out/call.html: click a word to hear it
  witness enroll Diane diane.wav; witness call.wav   Diane's voice named (see witness voices)
  witness call.wav --model base.en --num-speakers 2
  witness call.wav --no-diarize                 timestamped text, no speakers
  witness -v call.wav --serial                  engines one after the other; -v says why/how
  witness call.wav --words words.json --turns call.rttm   merge only (no engines)
  witness call.wav --turns call.rttm            Whisper's words, these speaker turns
  some-recorder | witness - -o out              audio from standard input: out/stdin.txt
"""


@click.command(epilog=EXAMPLES)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write DIR/<input name>.<ext> per format instead of printing.")
@click.option("-f", "--format", "formats", callback=parse_formats, metavar="FMT[,FMT]",
              help=f"Output formats: {', '.join(FORMATS)}. Default: txt on stdout; "
                   "with -o the [output] formats of the config (txt,json).")
@click.option("--overwrite", is_flag=True, help="Replace outputs that already exist (never done silently).")
@click.option("--speaker-names", callback=parse_speaker_names, metavar="LABEL=NAME,…",
              help="Rename speakers in every output, e.g. SPEAKER_00=Diane,SPEAKER_01=Sheila.")
@html_audio_option
@engine_options
@voices_option
@click.option("--words", "words_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Take words from this JSON (a witness transcript or a list of {start,end,text}) "
                   "instead of running Whisper. Debugs the merge.")
@click.option("--turns", "turns_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Take speaker turns from this RTTM instead of running diarization.")
@config_option()
@click.pass_context
def transcribe(ctx, files, output_dir, formats, overwrite, speaker_names, html_audio, words_file, turns_file,
               config_file, no_diarize, voices, **engine):
    """Transcribe FILES and say who spoke each word.

    Audio can be wav, flac, mp3, ogg/opus, m4a/aac, webm or anything FFmpeg reads; `-` is
    standard input. Each file gets its own outputs (two inputs with the same name but
    another extension keep it: call.mp3.txt, call.m4a.txt); a bad file is reported in one
    line and the others still run (exit 2 if any failed).
    """
    settings = engine_settings(config_file, voices, **engine)
    formats = formats or (settings.output.formats if output_dir else ("txt",))
    if output_dir is None and len(formats) > 1:
        raise click.BadParameter("several formats need -o DIR (stdout takes one)", param_hint="--format")
    if "html" in formats and html_audio == "link" and any(str(f) == STDIN for f in files):
        raise click.BadParameter("standard input (-) has no file a page could link to; use embed",
                                 param_hint="--html-audio")
    outputs = output_files(files, output_dir, formats, (words_file, turns_file))
    labels = {name: label for label, name in speaker_names.items()}
    for path, transcript in transcripts(ctx, files, settings, outputs, overwrite, no_diarize=no_diarize,
                                        words=words_file, turns=turns_file):
        page = PageSource(Path(transcript.audio.path), html_audio, labels)  # the file decoded (for -, its copy)
        _emit(_named(transcript, path, speaker_names), path, files, outputs.get(path), formats, page)


def _named(transcript, path: Path, names: dict[str, str]):
    """``transcript`` with the speakers renamed (a warning for names of speakers it does
    not have) and the input named as the user gave it (``-`` for standard input, a pipe's path)."""
    from dataclasses import replace

    missing = [label for label in names if label not in transcript.speakers]
    if missing:
        log.warning("%s: --speaker-names: no speaker %s here (speakers: %s)", path, ", ".join(missing),
                    ", ".join(transcript.speakers) or "none")
    if transcript.audio.path != str(path):  # a stream's temp copy was decoded
        transcript = replace(transcript, audio=replace(transcript.audio, path=str(path)))
    return transcript.rename_speakers(names)


def _emit(transcript, path: Path, files, paths: list[Path] | None, formats, page: PageSource) -> None:
    if transcript.empty_warning:
        click.echo(f"witness: {path}: {transcript.empty_warning}", err=True)
    if paths:
        write_outputs(transcript, paths, page)
        return
    if len(files) > 1:
        click.echo(f"==> {path} <==")
    click.echo(render(formats[0], transcript, page), nl=False)
