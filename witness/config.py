"""Settings: frozen dataclasses whose defaults are the shipped values, overridden by TOML.

``config/default.toml`` documents every default (a test keeps it equal to the dataclasses).
A user's ``~/.config/witness/config.toml`` (or ``$XDG_CONFIG_HOME``), then ``--config FILE``,
then command-line options override them, in that order. Unknown keys are errors, so a typo
never silently does nothing.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import typing
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from witness.errors import InputError
from witness.merge import MergeOptions


@dataclass(frozen=True)
class OutputOptions:
    formats: tuple[str, ...] = ("txt", "json")  # written with -o DIR when --format is not given


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to decide; one section per stage."""

    merge: MergeOptions = field(default_factory=MergeOptions)
    output: OutputOptions = field(default_factory=OutputOptions)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "witness" / "config.toml"


def load_settings(path: str | Path | None = None, base: Settings | None = None) -> Settings:
    """Defaults, then the user's config file (if any), then ``path`` (if given)."""
    settings = base or Settings()
    for candidate in (user_config_path(), path):
        if candidate is not None and (path is not None or Path(candidate).exists()):
            settings = apply_toml(settings, Path(candidate))
    return settings


def apply_toml(settings: Settings, path: Path) -> Settings:
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read config ({exc.strerror or exc})", path) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML ({exc})", path) from None
    return override(settings, table, str(path))


def override(obj: Any, table: Mapping[str, Any], source: str, prefix: str = "") -> Any:
    """A copy of dataclass ``obj`` with ``table``'s values (nested tables for nested
    dataclasses); InputError naming ``source`` and the key on unknown keys or wrong types."""
    known = {f.name: f for f in fields(obj)}
    hints = typing.get_type_hints(type(obj))
    changes: dict[str, Any] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        where = f"{prefix}{key}"
        if name not in known:
            raise InputError(f"unknown setting {where!r} (known: {', '.join(sorted(known))})", source)
        current = getattr(obj, name)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, Mapping):
                raise InputError(f"setting {where!r} must be a table", source)
            changes[name] = override(current, value, source, where + ".")
        else:
            changes[name] = _coerce(value, hints[name], where, source)
    return replace(obj, **changes)


def _coerce(value: Any, hint: Any, where: str, source: str) -> Any:
    """Check ``value`` against the field type (bool/int/float/str, optionals, tuples)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if value is None and type(None) in args:
        return None
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        for arg in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, arg, where, source)
            except InputError:
                continue
        raise InputError(f"setting {where!r} has the wrong type ({value!r})", source)
    if origin is tuple:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise InputError(f"setting {where!r} must be a list", source)
        return tuple(_coerce(v, args[0], where, source) for v in value)
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if hint in (bool, int, str) and type(value) is hint:
        return value
    raise InputError(f"setting {where!r} must be {getattr(hint, '__name__', hint)}, not {value!r}", source)
