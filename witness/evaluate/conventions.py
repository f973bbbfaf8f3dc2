"""The three ways DER is published (kept apart from der.py so the CLI can list them cheaply)."""

from __future__ import annotations

from typing import Mapping, NamedTuple


class Convention(NamedTuple):
    """± ``collar`` seconds around every reference boundary are not scored; reference
    overlap is skipped when ``skip_overlap``."""

    collar: float
    skip_overlap: bool


CONVENTIONS: Mapping[str, Convention] = {
    "strict": Convention(collar=0.0, skip_overlap=False),
    "paper": Convention(collar=0.25, skip_overlap=False),
    "lenient": Convention(collar=0.25, skip_overlap=True),
}
