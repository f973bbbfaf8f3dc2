"""Clock-style timestamps: parse ``ss``, ``mm:ss``, ``hh:mm:ss(.f)``; format for humans and subtitles."""

from __future__ import annotations

import math
import re

_CLOCK = re.compile(r"^\s*(?:(\d+):)??(?:(\d+):)?(\d+(?:\.\d*)?)\s*$")


def parse_timestamp(text: str) -> float:
    """Seconds from ``"75"``, ``"1:15"``, ``"01:15.5"`` or ``"1:01:15.25"``; ValueError otherwise."""
    m = _CLOCK.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a time: use ss, mm:ss or hh:mm:ss(.f)")
    h, mnt, s = m.groups()
    seconds = float(s)
    if (h is not None or mnt is not None) and seconds >= 60:
        raise ValueError(f"{text!r}: seconds must be under 60 in mm:ss form")
    if h is not None and mnt is not None and int(mnt) >= 60:
        raise ValueError(f"{text!r}: minutes must be under 60 in hh:mm:ss form")
    return int(h or 0) * 3600 + int(mnt or 0) * 60 + seconds


def format_clock(seconds: float, hours: bool = False, decimals: int = 1) -> str:
    """``[hh:]mm:ss.f``, rounded to the nearest tenth (so a printed start, typed back
    into ``witness quote``, lands inside the utterance it came from)."""
    scale = 10**decimals
    total = math.floor(max(0.0, seconds) * scale + 0.5)
    frac = total % scale
    whole = total // scale
    h, rem = divmod(whole, 3600)
    m, s = divmod(rem, 60)
    head = f"{h:02d}:{m:02d}:{s:02d}" if hours or h else f"{m:02d}:{s:02d}"
    return f"{head}.{frac:0{decimals}d}" if decimals else head


def format_subtitle(seconds: float, separator: str = ",") -> str:
    """``hh:mm:ss,mmm`` (SRT) or ``hh:mm:ss.mmm`` (WebVTT, with separator ".")."""
    ms = round(max(0.0, seconds) * 1000)
    h, rem = divmod(ms, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, ms = divmod(rem, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{ms:03d}"
