"""Option parsers shared by the commands that write transcripts (transcribe, batch)."""

from __future__ import annotations

import click

from witness.writers import WRITERS


def parse_formats(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    formats = tuple(dict.fromkeys(f.strip().lower() for f in value.split(",") if f.strip()))
    unknown = [f for f in formats if f not in WRITERS]
    if unknown or not formats:
        raise click.BadParameter(f"unknown format {', '.join(map(repr, unknown)) or repr(value)}; choose from {', '.join(WRITERS)}")
    return formats


def parse_speaker_names(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, str]:
    names: dict[str, str] = {}
    for pair in (value or "").split(","):
        if not pair.strip():
            continue
        label, sep, name = pair.partition("=")
        if not sep or not label.strip() or not name.strip():
            raise click.BadParameter(f"{pair!r} is not LABEL=NAME (e.g. SPEAKER_00=Diane)")
        names[label.strip()] = name.strip()
    return names
