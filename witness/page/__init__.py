"""``--format html``: one self-contained page to read and hear a transcript.

The page (``page.html`` with ``page.css`` and ``page.js`` inlined, nothing fetched: its
Content-Security-Policy allows no network at all) shows the utterances with speaker
colours and times, a speaker timeline, plays from a clicked word, line or timeline spot,
highlights the word being played, searches, takes the ``KEYS`` below, and renames speakers
into a ``--speaker-names`` option for the next run. Words go in as JSON and are rendered by
the page in one pass; the playing word is found by binary search, so hours stay responsive.
"""

from __future__ import annotations

import html
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from witness.timecode import format_clock

if TYPE_CHECKING:
    from witness.page.audio import PageAudio
    from witness.transcript import Transcript

COLOURS = 10  # distinct speaker colours in page.css (.k0 … .k9); more speakers reuse them

KEYS = (
    ("Space, k", "play / pause"),
    ("← →", "back / forward 5 s (with Shift: 30 s)"),
    ("↑ ↓", "previous / next utterance"),
    ("/", "search (Enter: next match, Shift+Enter: previous, Esc: back to the page)"),
    ("n, N", "next / previous match"),
    ("[ ]", "slower / faster"),
    ("f", "follow playback on / off"),
    ("?", "show these keys"),
)


def keys_help() -> str:
    """The page's keys in one line, for ``--help``."""
    return "; ".join(f"{keys}: {action}" for keys, action in KEYS)


def to_html(t: Transcript, audio: PageAudio, labels: Mapping[str, str] | None = None) -> str:
    """The page for ``t`` playing ``audio``. ``labels`` maps a speaker's shown name back
    to the label the run gave it (``--speaker-names`` applied before writing), so that
    renaming in the page yields an option the next run understands."""
    name = Path(t.audio.path).name
    summary = f"{format_clock(t.audio.duration, hours=t.audio.duration >= 3600)} · " + (
        f"{len(t.speakers)} speakers" if t.speakers else "no speakers")
    values = {
        "TITLE": html.escape(name),
        "SUMMARY": html.escape(summary),
        "MEDIA_SRC": "blob: data:" if audio.base64 else "* blob: data: file:",
        "CSS": _static("page.css"),
        "JS": _static("page.js"),
        "KEYS": "\n".join(f"      <tr><td><kbd>{html.escape(k)}</kbd></td><td>{html.escape(a)}</td></tr>" for k, a in KEYS),
        "AUDIO_HOW": html.escape(f"{audio.how} ({audio.mime})" if audio.base64 else f"linked: {audio.href}"),
        "DATA": _script_json(_page_data(t, audio, labels or {})),
        "AUDIO_BASE64": audio.base64,
    }
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m[1]], _static("page.html"))


def _page_data(t: Transcript, audio: PageAudio, labels: Mapping[str, str]) -> dict:
    """What page.js reads: speakers (label the run gave, name shown, colour), and per
    utterance [start, end, speaker index (-1: none), clock, [[start, end, word], …], text]."""
    index = {s: i for i, s in enumerate(t.speakers)}
    hours = t.audio.duration >= 3600
    return {
        "duration": round(t.audio.duration, 3),
        "audio": {"mime": audio.mime, "href": audio.href},
        "speakers": [{"label": labels.get(s, s), "name": s, "colour": i % COLOURS} for i, s in enumerate(t.speakers)],
        "u": [[round(u.start, 3), round(u.end, 3), index.get(u.speaker, -1), format_clock(u.start, hours),
               [[round(w.start, 3), round(w.end, 3), w.text] for w in u.words]] + ([] if u.words else [u.text])
              for u in t.utterances],
    }


def _script_json(data: dict) -> str:
    """JSON that cannot end its <script> element early (every ``<`` escaped)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _static(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")
