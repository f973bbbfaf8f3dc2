"""``witness.Transcript``: the transcript the Python API gives, with its look-ups and formats.

It is the data model (``witness.transcript.Transcript``: utterances, words, speakers, turns,
JSON) with what a user does with one: ``quote``/``at`` (``witness.quote``, the look-ups of
``witness quote``), ``write`` in any output format (``witness.writers``, atomic, never
replacing a file unless told to) and ``read`` from a witness JSON. It lives above the model,
the look-ups and the writers so that none of them imports another back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from witness import transcript as model
from witness.errors import UsageError

if TYPE_CHECKING:
    from witness.quote import Quote


@dataclass(frozen=True)
class Transcript(model.Transcript):
    """A speaker-labelled transcript (see ``witness.transcript.Transcript`` for its fields):
    ``utterances``, ``words`` (each with ``start``, ``end``, ``text``, ``speaker``),
    ``speakers``, ``turns``; ``engines``, ``plan`` and ``timings`` say how it was made.
    ``source``: the JSON file it was read from (errors of its look-ups name it), if any."""

    source: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, transcript: model.Transcript) -> "Transcript":
        """``transcript`` as this class (the same fields)."""
        if isinstance(transcript, cls):
            return transcript
        return cls(**{f.name: getattr(transcript, f.name) for f in fields(model.Transcript)})

    @classmethod
    def read(cls, path: str | Path) -> "Transcript":
        """The transcript in a witness JSON file; InputError naming the file when it is
        missing, unreadable, malformed or of another schema version."""
        return replace(cls.of(model.read_transcript(path)), source=str(path))

    def quote(self, at: float | None = None, start: float | None = None, end: float | None = None,
              speaker: str | None = None, phrase: str | None = None, context: int = 0) -> tuple[Quote, ...]:
        """What ``witness quote`` finds: the utterances said at ``at`` seconds, overlapping
        [``start``, ``end``), by ``speaker`` (any case), and every place ``phrase`` is said
        (case and punctuation ignored); criteria combine. Each hit (``Quote``: its
        ``utterance``, ``match``, ``context`` utterances ``before``/``after``) prints as
        ``witness quote`` does. InputError for a time past the end, an empty range, a phrase
        without words."""
        from witness.quote import QuoteQuery, find_quotes

        return find_quotes(self, QuoteQuery(at, start, end, speaker, phrase, context),
                           self.source or self.audio.path or None)

    def at(self, seconds: float, context: int = 0) -> tuple[Quote, ...]:
        """What was being said at ``seconds`` (``quote(at=seconds)``): usually one hit, none
        in a pause, two where a stereo call's parties overlap."""
        return self.quote(at=seconds, context=context)

    def write(self, path: str | Path, format: str | None = None, *, overwrite: bool = False,
              audio: str | Path | None = None, html_audio: str = "embed") -> Path:
        """Write the transcript to ``path`` as ``format`` (txt, md, json, srt, vtt, rttm,
        tsv, html; default: ``path``'s extension), atomically. An existing file is replaced
        only with ``overwrite``. An html page plays ``audio`` (default: the file that was
        transcribed), embedded or linked (``html_audio``)."""
        from witness.writers import FORMATS, PageSource, check_outputs_free, write_outputs

        path = Path(path)
        fmt = (format or path.suffix[1:]).lower()
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}", path)
        check_outputs_free([path], overwrite)
        page = PageSource(Path(audio or self.audio.path), html_audio) if fmt == "html" else None
        if fmt == "html" and not page.file.is_file():
            raise UsageError(f"an html page needs the audio: {page.file} is not a file (give audio=)", path)
        return write_outputs(self, [path], page, [fmt])[0]

    def to_text(self, format: str = "txt") -> str:
        """The transcript in a text format (txt, md, json, srt, vtt, rttm, tsv)."""
        from witness.writers import WRITERS

        if format not in WRITERS:
            raise UsageError(f"unknown text format {format!r}; choose from {', '.join(WRITERS)}")
        return WRITERS[format](self)

