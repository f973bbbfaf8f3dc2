"""STM (NIST segment time mark) reference transcripts: read.

A line: ``<file-id> <channel> <speaker> <start> <end> [<label>] text...`` with times in
seconds; ``;;`` starts a comment; an optional ``<...>`` label field after the end time is
skipped. Segments whose text is ``IGNORE_TIME_SEGMENT_IN_SCORING`` carry no words and are
dropped. sclite's alternations (``{a / b}``) and optional words (``(uh)``) are not
interpreted: their text is scored as written after normalisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from witness.errors import InputError
from witness.fileio import read_input_text, records

IGNORE = "ignore_time_segment_in_scoring"


@dataclass(frozen=True)
class StmSegment:
    """One STM line: ``speaker`` said ``text`` between ``start`` and ``end`` seconds."""

    file_id: str
    channel: str
    speaker: str
    start: float
    end: float
    text: str


def parse_stm(text: str, source: str | None = None) -> list[StmSegment]:
    """Segments in file order; InputError naming the line when one is malformed."""
    segments = []
    for number, fields in records(text):
        if len(fields) < 5:
            raise InputError(f"line {number}: an STM line needs at least 5 fields, found {len(fields)}", source)
        try:
            start, end = float(fields[3]), float(fields[4])
        except ValueError:
            raise InputError(f"line {number}: start and end must be numbers, found {fields[3]!r} {fields[4]!r}", source) from None
        if not (0 <= start <= end):
            raise InputError(f"line {number}: times must satisfy 0 <= start <= end, found {fields[3]} {fields[4]}", source)
        words = fields[5:]
        if words and words[0].startswith("<") and words[0].endswith(">"):
            words = words[1:]
        if len(words) == 1 and words[0].lower() == IGNORE:
            continue
        segments.append(StmSegment(fields[0], fields[1], fields[2], start, end, " ".join(words)))
    return segments


def read_stm(path: str | Path) -> list[StmSegment]:
    """Segments of an STM file (InputError when unreadable, malformed or empty)."""
    text = read_input_text(path, "STM")
    segments = parse_stm(text, str(path))
    if not segments:
        raise InputError("no STM segments found", path)
    return segments


def segments_of_file(segments: list[StmSegment], wanted: str, source: str | None = None) -> list[StmSegment]:
    """The segments of one recording, sorted by time.

    An STM holding a single file id is used whatever its id; otherwise ``wanted`` (e.g.
    the hypothesis audio's stem) must be one of its ids (InputError if not).
    """
    ids = list(dict.fromkeys(s.file_id for s in segments))
    chosen = ids[0] if len(ids) == 1 else wanted
    if chosen not in ids:
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise InputError(f"holds several recordings ({shown}) and none is named {wanted!r}", source)
    return sorted((s for s in segments if s.file_id == chosen), key=lambda s: (s.start, s.end))

