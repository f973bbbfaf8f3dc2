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

from witness.asr.options import WhisperOptions
from witness.errors import InputError
from witness.merge import MergeOptions
from witness.plan import PlanOptions


@dataclass(frozen=True)
class OutputOptions:
    formats: tuple[str, ...] = ("txt", "json")  # written with -o DIR when --format is not given


@dataclass(frozen=True)
class DiarizationSettings:
    """Who-spoke-when settings (``witness diarize`` options override them; 0 / "" = unset)."""

    segmentation: str = "auto"  # auto (fp32, else Silero VAD) | fp32 | int8
    embedding: str = "auto"  # auto (CAM++; GE2E if CAM++ cannot be had) | campplus | ge2e | wespeaker
    ge2e_variant: str = "pooled"  # pooled partials | window (each masked window on its own)
    step: float = 1.0  # s between the starts of the 10 s segmentation windows
    num_speakers: int = 0  # exact number of speakers; 0: found by clustering
    min_speakers: int = 0  # 0: at least one
    max_speakers: int = 0  # 0: no cap
    threads: int = 0  # ONNX Runtime threads per model (segmentation and embedding run side by side); 0: the plan's
    embedding_batch_size: int = 0  # GE2E partials / WeSpeaker or CAM++ rows per model call; 0: the model's default
    segmentation_device: str = "auto"  # auto | cpu | cuda | migraphx | rocm | coreml
    embedding_device: str = "auto"
    threshold: float = 0.0  # AHC distance cut; 0: the embedding model's tuned value
    channels: str = "auto"  # auto (a stereo call with one party per channel: speakers from the channels) | mix | split


@dataclass(frozen=True)
class VoiceSettings:
    """Known voices (``witness enroll``): which enrolled voices name the speakers of a run."""

    use: str = "all"  # all | none | NAME,NAME… (--voices)
    threshold: float = 0.0  # cosine score a speaker needs to take a voice's name; 0: the calibrated value


@dataclass(frozen=True)
class ModelSettings:
    """Where model files come from."""

    dir: str = ""  # searched first; then $WITNESS_MODELS_DIR and the cache
    offline: bool = False  # never download; say which file to put where instead


@dataclass(frozen=True)
class AsrSettings:
    """Which Whisper model (how it decodes, and on which device, is in [whisper])."""

    model: str = "tiny.en"  # a name from `witness models list`, an imported name, or a ggml file


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to decide; one section per stage."""

    models: ModelSettings = field(default_factory=ModelSettings)
    asr: AsrSettings = field(default_factory=AsrSettings)
    whisper: WhisperOptions = field(default_factory=WhisperOptions)
    diarization: DiarizationSettings = field(default_factory=DiarizationSettings)
    voices: VoiceSettings = field(default_factory=VoiceSettings)
    plan: PlanOptions = field(default_factory=PlanOptions)
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
    user = user_config_path()
    for candidate in (user if user.exists() else None, path):
        if candidate is not None:
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
