"""What a setting may hold beyond its type: ``Allowed`` (a range, choices or a pattern),
and ``violation``, the first field of a settings dataclass its rules do not allow. The rules
themselves live with the settings they check (``witness.config.SCHEMA``; ``[whisper]``'s in
``witness.asr.options``, which checks its own fields when made)."""

from __future__ import annotations

import json
import math
import re
import typing
from dataclasses import dataclass, fields
from typing import Any, Mapping


@dataclass(frozen=True)
class Allowed:
    """What one setting may hold beyond its type (the dataclass field's): a range, choices or
    a pattern. ``unset``: 0 is also allowed, meaning "not set" (the plan's or the model's value)."""

    low: float | None = None
    high: float | None = None
    above: bool = False  # strictly above ``low``
    unset: bool = False
    choices: tuple[str, ...] = ()
    pattern: str = ""  # a regular expression the whole text matches…
    means: str = ""  # …described in words

    def allows(self, value: Any) -> bool:
        if isinstance(value, tuple):  # a list: one or more items, each allowed
            return bool(value) and all(self.allows(v) for v in value)
        if isinstance(value, bool):
            return True
        if isinstance(value, (int, float)):
            if value == 0 and self.unset:
                return True
            below = self.low is not None and (value <= self.low if self.above else value < self.low)
            return math.isfinite(value) and not below and (self.high is None or value <= self.high)
        if isinstance(value, str):
            return (not self.choices or value in self.choices) and (not self.pattern or bool(re.fullmatch(self.pattern, value)))
        return True

    def describe(self, hint: Any) -> str:
        """E.g. "a whole number >= 1", "one of auto, fp32, int8", "a list of one or more of txt, …"."""
        if typing.get_origin(hint) is tuple:
            return f"a list of one or more of {', '.join(self.choices)}" if self.choices else "a list"
        kind = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}.get(hint, str(hint))
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.means:
            return self.means
        low = None if self.low is None else f"{'>' if self.above else '>='} {self.low:g}"
        high = None if self.high is None else f"<= {self.high:g}"
        bounds = " and ".join(b for b in (low, high) if b)
        return f"{kind}{' ' + bounds if bounds else ''}{' (or 0: unset)' if self.unset else ''}"


ANY = Allowed()
COUNT = Allowed(low=0)  # 0 or more (0: unset, chosen for you)
SECONDS = Allowed(low=0)


def violation(obj: Any, rules: Mapping[str, Allowed]) -> str | None:
    """The first value of dataclass ``obj`` that ``rules`` (by field name) do not allow, as
    "KEY must be …, not VALUE"; None when all are allowed."""
    hints = typing.get_type_hints(type(obj))
    for f in fields(obj):
        rule, value = rules[f.name], getattr(obj, f.name)
        if not rule.allows(value):
            return f"{f.name} must be {rule.describe(hints[f.name])}, not {toml_text(value)}"
    return None


def toml_text(value: Any) -> str:
    """``value`` as TOML writes it (true, "pdf", ["pdf"]), for error lines."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "a table"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)
