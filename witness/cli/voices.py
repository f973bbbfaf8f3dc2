"""``witness enroll NAME AUDIO…`` and ``witness voices list|remove``: known voices.

An enrolled voice names the speaker whose cluster matches it on later runs (transcribe,
batch, diarize; ``--voices none`` turns it off). Voices live in ``$WITNESS_VOICES_DIR`` or
``$XDG_DATA_HOME/witness/voices`` (~/.local/share/witness/voices), one JSON file each.
"""

from __future__ import annotations

from pathlib import Path

import click

from witness.cli.options import DEVICES, config_option, engine_settings, models_dir_option, offline_option
from witness.cli.progress import ProgressView, enabled

ENROLL_EXAMPLES = """
\b
Examples:
  witness enroll Diane diane-voicemail.wav      a recording of Diane alone
  witness enroll Diane more.m4a --add           another recording, same voice
  witness enroll Diane call.wav --speaker SPEAKER_01   her side of a call
                                   (labels: witness diarize --channels mix call.wav)
  witness enroll Diane new.wav --replace        start her voice over
  witness call.wav                              Diane named where her voice matches
"""


@click.command(epilog=ENROLL_EXAMPLES)
@click.argument("name")
@click.argument("audio", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--add", "mode", flag_value="add", help="Add these recordings to a voice enrolled already.")
@click.option("--replace", "mode", flag_value="replace", help="Replace a voice enrolled already.")
@click.option("--speaker", metavar="LABEL",
              help="Enroll this speaker of a recording with several voices (one AUDIO), e.g. --speaker SPEAKER_01.")
@models_dir_option()
@offline_option()
@click.option("--device", type=click.Choice(DEVICES), help="Where the diarization models run (default auto).")
@config_option()
@click.pass_context
def enroll(ctx, name, audio, mode, speaker, models_dir, offline, device, config_file):
    """Enroll NAME's voice from AUDIO (one or more recordings of NAME alone, 5 s of speech
    or more; 30 s or more is better).

    Each recording is diarized with the CAM++ speaker model and gives one print: the centroid
    of its speaker's cluster (speech only). A recording with another voice holding 15% of the
    speech or more is refused unless --speaker picks one. An enrolled NAME is never replaced
    silently: --add or --replace.
    """
    from witness.api import enroll_with

    settings = engine_settings(config_file, models_dir=models_dir, offline=offline, device=device)
    with ProgressView([str(a) for a in audio], enabled(ctx), 1) as view:
        voice = enroll_with(name, [str(a) for a in audio], settings, None, speaker, mode or "new", view.hook)
    seconds = sum(p.speech_seconds for p in voice.prints[len(voice.prints) - len(audio):])
    click.echo(f"witness: enrolled {name}: {len(audio)} print{'s' * (len(audio) != 1)} "
               f"({seconds:.1f} s of speech), {len(voice.prints)} in all, in {voice.path}", err=True)


@click.group("voices")
def voices() -> None:
    """Enrolled voices: list them, remove one (enroll with `witness enroll NAME AUDIO`).

    \b
    Examples:
      witness voices list
      witness voices remove Diane
    """


@voices.command("list", epilog="""
\b
Examples:
  witness voices list                 NAME, MODEL, PRINTS, SPEECH, FIRST, LAST per voice
  witness voices list 2>/dev/null     the table alone (where the voices live goes to stderr)
""")
def list_cmd() -> None:
    """Each enrolled voice: name, model, prints, speech, first and last enrolled (UTC)."""
    from witness.voices.store import load_voices, voices_dir

    click.echo(f"witness: voices in {voices_dir()}", err=True)
    rows = [(v.name, v.model, str(len(v.prints)), f"{sum(p.speech_seconds for p in v.prints):.1f} s",
             min(p.added for p in v.prints), max(p.added for p in v.prints)) for v in load_voices()]
    if not rows:
        click.echo("witness: no voice enrolled (witness enroll NAME AUDIO)", err=True)
        return
    header = ("NAME", "MODEL", "PRINTS", "SPEECH", "FIRST", "LAST")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in (header, *rows):
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


@voices.command("remove", epilog="""
\b
Examples:
  witness voices remove Diane         Diane's speakers are SPEAKER_NN again
  witness enroll Diane new.wav --replace   start her voice over instead
""")
@click.argument("name")
def remove_cmd(name: str) -> None:
    """Forget the voice NAME (its file is deleted)."""
    from witness.voices.store import remove_voice

    click.echo(f"witness: removed {name} ({remove_voice(name)})", err=True)
