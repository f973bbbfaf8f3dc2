"""RTTM (NIST Rich Transcription Time Marked) speaker turns: read and write.

A line: ``SPEAKER <file-id> <channel> <start> <duration> <NA> <NA> <speaker> <NA> <NA>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from witness.errors import InputError
from witness.fileio import read_input_text, records
from witness.transcript import Turn


def parse_rttm(text: str, source: str | None = None) -> dict[str, list[Turn]]:
    """Turns per file id, sorted by start. Blank lines and ``;;`` comments are skipped;
    any other malformed line raises InputError naming the line."""
    files: dict[str, list[Turn]] = {}
    for number, fields in records(text):
        if fields[0] != "SPEAKER":
            continue  # other RTTM record types (LEXEME, SPKR-INFO...) carry no turns
        if len(fields) < 8:
            raise InputError(f"line {number}: a SPEAKER line needs at least 8 fields, found {len(fields)}", source)
        try:
            start, duration = float(fields[3]), float(fields[4])
        except ValueError:
            raise InputError(f"line {number}: start and duration must be numbers, found {fields[3]!r} {fields[4]!r}", source) from None
        if start < 0 or duration < 0 or start != start or duration != duration:
            raise InputError(f"line {number}: negative or NaN time ({fields[3]} {fields[4]})", source)
        files.setdefault(fields[1], []).append(Turn(start, start + duration, fields[7]))
    for turns in files.values():
        turns.sort(key=lambda t: (t.start, t.end, t.speaker))
    return files


def read_rttm(path: str | Path) -> dict[str, list[Turn]]:
    """Turns per file id from an RTTM file (InputError when unreadable or malformed)."""
    return parse_rttm(read_input_text(path, "RTTM"), str(path))


def format_rttm(turns: Iterable[Turn], file_id: str) -> str:
    """RTTM text for ``turns`` (times to the millisecond). RTTM fields are separated by
    spaces, so spaces in the file id or a speaker's name ("Diane Smith") become ``_``."""
    file_id = _field(file_id) or "audio"
    lines = [
        f"SPEAKER {file_id} 1 {t.start:.3f} {t.end - t.start:.3f} <NA> <NA> {_field(t.speaker) or '<NA>'} <NA> <NA>\n"
        for t in turns
    ]
    return "".join(lines)


def _field(text: str) -> str:
    return "_".join(text.split())
