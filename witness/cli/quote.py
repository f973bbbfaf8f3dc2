"""``witness quote``: what was said at a moment, in a range, by a speaker, or where."""

from __future__ import annotations

from pathlib import Path

import click

from witness.errors import InputError
from witness.document import Transcript
from witness.quote import QuoteQuery, format_quotes, quotes_to_json
from witness.timecode import parse_timestamp


@click.command("quote")
@click.argument("transcript", type=click.Path(path_type=Path))
@click.argument("at", required=False, metavar="[AT]")
@click.option("--from", "start", metavar="TIME", help="Only utterances overlapping the range from TIME on, e.g. --from 1:30.")
@click.option("--to", "end", metavar="TIME", help="Only utterances overlapping the range before TIME, e.g. --to 2:00.")
@click.option("--speaker", metavar="LABEL", help="Only this speaker's utterances (any case), e.g. --speaker SPEAKER_01.")
@click.option("--grep", "phrase", metavar="TEXT", help='Every place TEXT is said (case and punctuation ignored), e.g. --grep "from Chicago".')
@click.option("--context", "-C", default=0, show_default=True, metavar="N", type=int, help="Also show N utterances before and after each hit, e.g. -C 2.")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON (fields: see witness/quote.py), e.g. --json | jq.")
@click.option(
    "--output-dir", "-o", type=click.Path(path_type=Path), metavar="DIR",
    help="Look for AUDIO's transcript <stem>.json in DIR first, e.g. -o transcripts/.",
)
def quote(
    transcript: Path, at: str | None, start: str | None, end: str | None, speaker: str | None,
    phrase: str | None, context: int, as_json: bool, output_dir: Path | None,
) -> None:
    """Quote a transcript: what was said at AT, in a range, by a speaker, or where.

    TRANSCRIPT is a witness JSON, or the audio it was made from: then <stem>.json is
    looked for in --output-dir, then beside the audio. AT and TIME are ss, mm:ss or
    hh:mm:ss(.f). Criteria combine: --speaker Sheila --grep chicago finds what Sheila
    said about Chicago.

    \b
    Examples:
      witness quote call.json 9:32.4             At 09:32.4 SPEAKER_01 says "..."
      witness quote call.wav -o out/ 75          (reads out/call.json)
      witness quote call.json --from 1:00 --to 1:30
      witness quote call.json --speaker SPEAKER_00 -C 1
      witness quote call.json --grep "originally from Chicago" --json

    \b
    Exit status: 0 when something matches, 1 when nothing does, 2 on bad input
    (missing or malformed transcript, other schema version, a time past the end).
    """
    path = _locate(transcript, output_dir)
    query = QuoteQuery(
        at=_seconds(at, "AT"), start=_seconds(start, "--from"), end=_seconds(end, "--to"),
        speaker=speaker, phrase=phrase, context=context,
    )
    transcript = Transcript.read(path)
    quotes = transcript.quote(query.at, query.start, query.end, query.speaker, query.phrase, query.context)
    if as_json:
        click.echo(quotes_to_json(quotes, query, str(path)), nl=False)
    else:
        click.echo(format_quotes(quotes), nl=False)
    if not quotes:
        click.echo(f"witness: {path}: nothing matches{_unknown_speaker(speaker, transcript.speakers)}", err=True)
        click.get_current_context().exit(1)


def _unknown_speaker(speaker: str | None, speakers: tuple[str, ...]) -> str:
    """Why nothing matched when --speaker names nobody in the transcript: its speakers."""
    if speaker is None or speaker.casefold() in (s.casefold() for s in speakers):
        return ""
    return f": no speaker {speaker!r} (speakers: {', '.join(speakers) or 'none'})"


def _seconds(text: str | None, name: str) -> float | None:
    if text is None:
        return None
    try:
        return parse_timestamp(text)
    except ValueError as exc:
        raise InputError(f"{name}: {exc}") from None


def _locate(path: Path, output_dir: Path | None) -> Path:
    """The transcript JSON for TRANSCRIPT: itself when it is a .json, else <stem>.json
    in ``output_dir`` or beside the audio."""
    if path.suffix.lower() == ".json":
        return path
    candidates = [*([output_dir / f"{path.stem}.json"] if output_dir else []), path.with_suffix(".json")]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = " or ".join(str(c) for c in candidates)
    folder = output_dir or path.parent
    raise InputError(f"no transcript found (looked for {looked}); make it with "
                     f"`witness {path} -o {folder} --format json`", path)
