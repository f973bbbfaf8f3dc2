"""Transcript writers: txt (default), md, json, srt, vtt, rttm, tsv; and atomic output files.

Each writer is a function ``Transcript -> str``. ``write_outputs`` names files after the
input (``DIR/<stem>.<ext>``), refuses to replace existing files unless told to, and writes
each one atomically, so an interrupted run leaves only complete files.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from witness.errors import WitnessError
from witness.fileio import atomic_write
from witness.merge import exclusive_turns
from witness.rttm import format_rttm
from witness.timecode import format_clock, format_subtitle
from witness.transcript import Transcript, Turn, Utterance

UNKNOWN = "UNKNOWN"  # label printed for unattributed words
CUE_MAX_CHARS = 84  # two subtitle lines of 42 characters
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


def subtitle_cues(t: Transcript, max_chars: int = CUE_MAX_CHARS, max_seconds: float = CUE_MAX_SECONDS) -> list[Cue]:
    """Utterances cut at word boundaries into cues of at most ``max_chars`` / ``max_seconds``."""
    cues: list[Cue] = []
    for u in t.utterances:
        cues.extend(_split_utterance(u, max_chars, max_seconds))
    return cues


def _split_utterance(u: Utterance, max_chars: int, max_seconds: float) -> Iterable[Cue]:
    if not u.words:
        yield Cue(u.start, u.end, u.speaker, u.text)
        return
    group: list = []
    for w in u.words:
        text = " ".join(x.text for x in group + [w])
        if group and (len(text) > max_chars or w.end - group[0].start > max_seconds):
            yield Cue(group[0].start, group[-1].end, u.speaker, " ".join(x.text for x in group))
            group = []
        group.append(w)
    yield Cue(group[0].start, max(group[-1].end, group[0].start + 0.001), u.speaker, " ".join(x.text for x in group))


def _lines(text: str) -> str:
    return "\n".join(textwrap.wrap(text, width=CUE_MAX_CHARS // 2)) or text


def to_srt(t: Transcript) -> str:
    blocks = [
        f"{i}\n{format_subtitle(c.start)} --> {format_subtitle(c.end)}\n{_lines(f'{label(c.speaker)}: {c.text}')}\n"
        for i, c in enumerate(subtitle_cues(t), start=1)
    ]
    return "\n".join(blocks)


def to_vtt(t: Transcript) -> str:
    blocks = [
        f"{format_subtitle(c.start, '.')} --> {format_subtitle(c.end, '.')}\n<v {label(c.speaker)}>{_escape_vtt(c.text)}\n"
        for c in subtitle_cues(t)
    ]
    return "WEBVTT\n\n" + "\n".join(blocks)


def _escape_vtt(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("-->", "--&gt;")


def to_rttm(t: Transcript) -> str:
    """The diarization's turns; without diarization, the utterances' spans per speaker."""
    turns: Sequence[Turn] = t.turns or exclusive_turns(
        [Turn(u.start, u.end, u.speaker) for u in t.utterances if u.speaker is not None]
    )
    return format_rttm(turns, Path(t.audio.path).stem)


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


def output_paths(input_path: str | Path, out_dir: str | Path, formats: Sequence[str]) -> list[Path]:
    stem = Path(input_path).stem
    return [Path(out_dir) / f"{stem}.{fmt}" for fmt in formats]


def check_outputs_free(paths: Sequence[Path], overwrite: bool) -> None:
    """Refuse, before any work, to replace files the user already has."""
    if overwrite:
        return
    taken = [p for p in paths if p.exists()]
    if taken:
        raise WitnessError("already exists (pass --overwrite to replace it)", taken[0])


def write_outputs(transcript: Transcript, paths: Sequence[Path]) -> list[Path]:
    """Write each path (its extension picks the writer) atomically; everything is rendered
    first, so a writer error leaves no output behind."""
    texts = [WRITERS[p.suffix[1:]](transcript) for p in paths]
    for path, text in zip(paths, texts):
        atomic_write(path, text)
    return list(paths)
