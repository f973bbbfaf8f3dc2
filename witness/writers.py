"""Transcript writers: txt (default), md, json, srt, vtt, rttm, tsv, html; and atomic output files.

Each text writer is a function ``Transcript -> str``; html (``witness.page``) also needs the
audio, which ``PageSource`` names, and ``render`` gives any format. ``output_stems`` names files after the
inputs (``DIR/<stem>.<ext>``, the extension kept where two inputs share a stem),
``check_outputs_free`` refuses, before any work, to replace existing files unless told to
or to use names the file system cannot hold, and ``write_outputs`` writes all of a file's
outputs or none, each atomically, so an interrupted run leaves only complete files.
"""

from __future__ import annotations

import os
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from witness.errors import InputError, UsageError, WitnessError
from witness.fileio import name_max, write_together
from witness.merge import exclusive_turns
from witness.rttm import format_rttm
from witness.timecode import format_clock, format_subtitle
from witness.transcript import Transcript, Turn, Utterance

UNKNOWN = "UNKNOWN"  # label printed for unattributed words
CUE_LINE_CHARS = 42  # subtitle convention: at most 2 lines of 42 characters, 7 s
CUE_MAX_LINES = 2
CUE_MAX_SECONDS = 7.0


def label(speaker: str | None) -> str:
    return UNKNOWN if speaker is None else speaker


def _clock(seconds: float, transcript: Transcript) -> str:
    return format_clock(seconds, hours=transcript.audio.duration >= 3600)


def to_txt(t: Transcript) -> str:
    """``[00:06.7] SPEAKER_00: Hello?`` per utterance; without diarization (no speakers at
    all, e.g. ``--no-diarize``) just ``[00:06.7] Hello?``."""
    if not t.speakers:
        return "".join(f"[{_clock(u.start, t)}] {u.text}\n" for u in t.utterances)
    return "".join(f"[{_clock(u.start, t)}] {label(u.speaker)}: {u.text}\n" for u in t.utterances)


def to_md(t: Transcript) -> str:
    name = Path(t.audio.path).name
    head = f"# {name}\n\n{_clock(t.audio.duration, t)} · {len(t.speakers)} speakers"
    if t.speakers:
        head += ": " + ", ".join(t.speakers)
    body = "".join(f"**{label(u.speaker)}** [{_clock(u.start, t)}]: {u.text}\n\n" for u in t.utterances)
    return f"{head}\n\n{body}".rstrip("\n") + "\n"


def to_json(t: Transcript) -> str:
    return t.to_json()


@dataclass(frozen=True)
class Cue:
    start: float
    end: float
    speaker: str | None
    text: str


def subtitle_cues(t: Transcript, speaker_prefix: bool = False, max_seconds: float = CUE_MAX_SECONDS) -> list[Cue]:
    """Utterances cut at word boundaries into cues that wrap (``cue_lines``) to at most
    two lines and last at most ``max_seconds``; with ``speaker_prefix`` the lines also hold
    ``SPEAKER: `` before the text (as SRT shows it)."""
    cues: list[Cue] = []
    for u in t.utterances:
        prefix = f"{label(u.speaker)}: " if speaker_prefix else ""
        cues.extend(_split_utterance(u, lambda text, prefix=prefix: len(cue_lines(prefix + text)) <= CUE_MAX_LINES, max_seconds))
    return cues


def _split_utterance(u: Utterance, fits: Callable[[str], bool], max_seconds: float) -> Iterable[Cue]:
    if not u.words:
        yield Cue(u.start, u.end, u.speaker, u.text)
        return
    group: list = []
    for w in u.words:
        text = " ".join(x.text for x in group + [w])
        if group and (not fits(text) or w.end - group[0].start > max_seconds):
            yield Cue(group[0].start, group[-1].end, u.speaker, " ".join(x.text for x in group))
            group = []
        group.append(w)
    yield Cue(group[0].start, max(group[-1].end, group[0].start + 0.001), u.speaker, " ".join(x.text for x in group))


def cue_lines(text: str) -> list[str]:
    """``text`` wrapped to subtitle lines of at most CUE_LINE_CHARS characters."""
    return textwrap.wrap(text, width=CUE_LINE_CHARS) or [text]


def to_srt(t: Transcript) -> str:
    blocks = [
        f"{i}\n{format_subtitle(c.start)} --> {format_subtitle(c.end)}\n"
        + "\n".join(cue_lines(f"{label(c.speaker)}: {c.text}")) + "\n"
        for i, c in enumerate(subtitle_cues(t, speaker_prefix=True), start=1)
    ]
    return "\n".join(blocks)


def to_vtt(t: Transcript) -> str:
    blocks = [
        f"{format_subtitle(c.start, '.')} --> {format_subtitle(c.end, '.')}\n"
        f"<v {_escape_vtt(label(c.speaker))}>" + "\n".join(_escape_vtt(line) for line in cue_lines(c.text)) + "\n"
        for c in subtitle_cues(t)
    ]
    return "WEBVTT\n\n" + "\n".join(blocks)


def _escape_vtt(text: str) -> str:
    """Cue text or a voice name as WebVTT needs it (``&``, ``<``, ``>`` as entities)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_rttm(t: Transcript) -> str:
    """The diarization's turns; without diarization, the utterances' spans per speaker."""
    turns: Sequence[Turn] = t.turns or exclusive_turns(
        [Turn(u.start, u.end, u.speaker) for u in t.utterances if u.speaker is not None]
    )
    text = format_rttm(turns, Path(t.audio.path).stem)
    if t.engines.get("diarization", {}).get("method") == "channels":
        return ";; speakers from the stereo channels (one party per channel), not a diarization model\n" + text
    return text


def to_tsv(t: Transcript) -> str:
    rows = ["start\tend\tspeaker\ttext\n"]
    for u in t.utterances:
        text = " ".join(u.text.split())
        rows.append(f"{u.start:.3f}\t{u.end:.3f}\t{label(u.speaker)}\t{text}\n")
    return "".join(rows)


WRITERS: dict[str, Callable[[Transcript], str]] = {
    "txt": to_txt,
    "md": to_md,
    "json": to_json,
    "srt": to_srt,
    "vtt": to_vtt,
    "rttm": to_rttm,
    "tsv": to_tsv,
}
FORMATS = (*WRITERS, "html")
HTML_AUDIO = ("embed", "link")


@dataclass(frozen=True)
class PageSource:
    """Where an html output's audio comes from. ``file`` holds the audio's bytes (for
    standard input, its temp copy); ``mode`` is ``embed`` (in the page) or ``link`` (a path
    relative to the page); ``labels`` maps a shown speaker name back to the label the run
    gave it (the inverse of ``--speaker-names``)."""

    file: Path
    mode: str = "embed"
    labels: Mapping[str, str] = field(default_factory=dict)


def render(fmt: str, t: Transcript, page: PageSource | None = None, folder: Path | None = None) -> str:
    """``t`` in format ``fmt``. An html page written into ``folder`` (None: the current
    one) plays ``page``'s audio (default: the transcript's own file, embedded)."""
    if fmt != "html":
        return WRITERS[fmt](t)
    from witness.page import to_html
    from witness.page.audio import embedded, linked

    page = page or PageSource(Path(t.audio.path))
    audio = embedded(page.file) if page.mode == "embed" else linked(page.file, folder or Path.cwd())
    return to_html(t, audio, page.labels)


def output_stems(names: Sequence[str]) -> list[str]:
    """Output stems (posix) for input paths relative to where outputs go: the extension
    dropped, except where two inputs would then share a stem ("call.mp3" and "call.m4a"
    keep it); InputError when two would still write the same outputs."""
    plain = [Path(n).with_suffix("").as_posix() for n in names]
    clashes = Counter(plain)
    stems = [Path(n).as_posix() if clashes[s] > 1 else s for n, s in zip(names, plain)]
    dupes = [s for s, n in Counter(stems).items() if n > 1]
    if dupes:
        raise InputError(f"two inputs would write the same outputs ({dupes[0]}.*); rename one", dupes[0])
    return stems


def output_paths(stem: str, out_dir: str | Path, formats: Sequence[str]) -> list[Path]:
    """``out_dir/<stem>.<format>`` per format (``stem`` from ``output_stems``)."""
    return [Path(out_dir) / f"{stem}.{fmt}" for fmt in formats]


def check_outputs_free(paths: Sequence[Path], overwrite: bool) -> None:
    """Refuse, before any work, to replace files the user already has (unless
    ``overwrite``) or to use a name longer than the file system allows: UsageError."""
    for path in paths:
        limit = name_max(path.parent) if path.parent.is_dir() else 255
        if len(path.name.encode()) > limit:
            raise UsageError(f"file name too long ({len(path.name.encode())} bytes; this file system allows {limit})",
                             path)
    taken = [p for p in paths if p.exists()]
    if taken and not overwrite:
        raise UsageError("already exists (pass --overwrite to replace it)", taken[0])


def check_not_inputs(outputs: Iterable[str | Path], inputs: Iterable[str | Path]) -> None:
    """Refuse, before any work and whatever ``--overwrite`` or ``--force`` say, an output
    that is one of ``inputs`` (the same file, also through a link or a hard link):
    UsageError naming both."""
    ids: dict[tuple[int, int], str | Path] = {}
    for path in inputs:
        try:
            stat = os.stat(path)
        except OSError:  # not there (or standard input): nothing an output could replace
            continue
        ids.setdefault((stat.st_dev, stat.st_ino), path)
    for path in outputs:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        source = ids.get((stat.st_dev, stat.st_ino))
        if source is not None:
            raise UsageError(f"is an input ({source}): an output never replaces an input, whatever --overwrite "
                             "or --force say; choose another -o folder", path)


def write_outputs(transcript: Transcript, paths: Sequence[Path], page: PageSource | None = None,
                  formats: Sequence[str] | None = None) -> list[Path]:
    """Write each path (its extension picks the format, or ``formats`` does; an html page
    plays ``page``'s audio): all of them or none. Everything is rendered first, then written
    together (``fileio.write_together``); WitnessError naming the folder when the disk
    refuses (full, read-only), with nothing left behind."""
    formats = formats or [p.suffix[1:] for p in paths]
    texts = [render(fmt, transcript, page, p.parent) for p, fmt in zip(paths, formats)]
    try:
        write_together(list(zip(paths, texts)))
    except OSError as exc:
        folder = paths[0].parent if paths else None
        raise WitnessError(f"cannot write outputs ({exc.strerror or exc}); none were written", folder) from None
    return list(paths)
