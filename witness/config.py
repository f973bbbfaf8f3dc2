"""Settings: frozen dataclasses whose defaults are the shipped values, overridden by TOML.

``config/default.toml`` documents every default (a test keeps it equal to the dataclasses).
A user's ``~/.config/witness/config.toml`` (or ``$XDG_CONFIG_HOME``), then ``--config FILE``,
then command-line options override them, in that order. ``SCHEMA`` says what each key may
hold (its type comes from the dataclass field; its range or choices from the schema), and
every value is checked as the file is read: an unknown key, a wrong type or a value out of
range is one error naming the file, the key and what is allowed, before any work.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from witness.accel.providers import NAMES as PROVIDER_NAMES
from witness.asr.options import WHISPER_RULES, WhisperOptions
from witness.errors import InputError
from witness.merge import MergeOptions
from witness.run.plan import PlanOptions
from witness.schema import ANY, COUNT, SECONDS, Allowed, toml_text, violation
from witness.writers import FORMATS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutputOptions:
    formats: tuple[str, ...] = ("txt", "json")  # written with -o DIR when --format is not given


@dataclass(frozen=True)
class DiarizationSettings:
    """Who-spoke-when settings (``witness diarize`` options override them; 0 / "" = unset)."""

    segmentation: str = "auto"  # auto (fp32, else Silero VAD) | fp32 | int8
    embedding: str = "auto"  # auto (CAM++; GE2E if CAM++ cannot be had) | campplus | ge2e | wespeaker
    precision: str = "fp32"  # CAM++: fp32 | int8 (0.6x its CPU time; counted 3 fewer corpus check calls right)
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

    model: str = "tiny.en-q8_0"  # a name from `witness models list`, an imported name, or a ggml file


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


SEGMENTATIONS = ("auto", "fp32", "int8")
EMBEDDINGS = ("auto", "campplus", "ge2e", "wespeaker")
PRECISIONS = ("fp32", "int8")
CHANNEL_MODES = ("auto", "mix", "split")
DEVICES = ("auto", *PROVIDER_NAMES)
PLAN_MODES = ("auto", "parallel", "serial")

# Every key of every section (a test keeps it equal to the dataclasses' fields).
SCHEMA: dict[str, dict[str, Allowed]] = {
    "models": {"dir": ANY, "offline": ANY},
    "asr": {"model": Allowed(pattern=r".*\S.*", means="a model name or the path of a ggml file")},
    "whisper": WHISPER_RULES,
    "diarization": {
        "segmentation": Allowed(choices=SEGMENTATIONS), "embedding": Allowed(choices=EMBEDDINGS),
        "precision": Allowed(choices=PRECISIONS),
        "ge2e_variant": Allowed(choices=("pooled", "window")),
        "step": Allowed(low=0, above=True, high=10),  # the segmentation windows are 10 s long
        "num_speakers": COUNT, "min_speakers": COUNT, "max_speakers": COUNT, "threads": COUNT,
        "embedding_batch_size": COUNT,
        "segmentation_device": Allowed(choices=DEVICES), "embedding_device": Allowed(choices=DEVICES),
        "threshold": Allowed(low=0, high=2),  # a cosine distance
        "channels": Allowed(choices=CHANNEL_MODES),
    },
    "voices": {"use": ANY, "threshold": Allowed(low=0, high=1)},  # a cosine score
    "plan": {
        "mode": Allowed(choices=PLAN_MODES), "min_free_vram_gib": Allowed(low=0),
        "unknown_vram": Allowed(choices=("serial", "parallel")), "cpu_parallel_min_cores": Allowed(low=1),
        "threads": COUNT,
    },
    "merge": {
        "gap_tolerance": SECONDS, "repair": ANY, "blip_words": COUNT, "blip_seconds": SECONDS,
        "real_pause": SECONDS, "sentence_pause": SECONDS, "utterance_pause": SECONDS,
        "interjections": ANY, "second_opinion": ANY, "opinion_margin": Allowed(low=0, high=2),  # a cosine gap
        "opinion_piece": SECONDS, "split_gap": Allowed(low=0, high=2),  # a cosine gap; 0: off
        "voice_join": Allowed(low=0, high=2),  # a ratio of mean cosines; 0: off
        "opinion_precision": Allowed(choices=PRECISIONS),
    },
    "output": {"formats": Allowed(choices=FORMATS)},
}


def problem(section: str, obj: Any) -> str | None:
    """The first value of dataclass ``obj`` (the settings of ``section``) that ``SCHEMA``
    does not allow, as "KEY must be …, not VALUE"; None when all are allowed."""
    return violation(obj, SCHEMA[section])


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
    except UnicodeDecodeError:
        raise InputError("not a TOML file: it is not UTF-8 text", path) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML ({exc})", path) from None
    return override(settings, table, str(path))


# Settings a release dropped: a config file written for it still loads, with a warning saying
# what took the setting's place (an unknown key is an error, so a typo is never ignored).
RETIRED = {
    "whisper.fit_encoder": "whisper.cpp's timestamps aborted on encoders fitted to short pieces; it is gone",
    "merge.opinion_seconds": "the second opinion now judges every stretch in pieces of [merge] opinion_piece seconds",
}


def override(obj: Any, table: Mapping[str, Any], source: str, prefix: str = "", schema: Mapping[str, Any] = SCHEMA) -> Any:
    """A copy of dataclass ``obj`` with ``table``'s values (nested tables for nested
    dataclasses), each checked against its type and ``schema``: InputError naming
    ``source``, the key and what it allows otherwise; a ``RETIRED`` key is ignored with a warning."""
    known = {f.name: f for f in fields(obj)}
    hints = typing.get_type_hints(type(obj))
    changes: dict[str, Any] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        where = f"{prefix}{key}"
        if f"{prefix}{name}" in RETIRED:
            log.warning("%s: setting %r is ignored: %s", source, where, RETIRED[f"{prefix}{name}"])
            continue
        if name not in known:
            raise InputError(f"unknown setting {where!r} (known: {', '.join(sorted(known))})", source)
        current = getattr(obj, name)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, Mapping):
                raise InputError(f"setting {where!r} must be a table", source)
            changes[name] = override(current, value, source, where + ".", schema[name])
            continue
        rule = schema[name]
        wrong = f"setting {where!r} must be {rule.describe(hints[name])}, not {toml_text(value)}"
        changes[name] = _coerce(value, hints[name], wrong, source)
        if not rule.allows(changes[name]):
            raise InputError(wrong, source)
    return replace(obj, **changes)


def _coerce(value: Any, hint: Any, wrong: str, source: str) -> Any:
    """``value`` as the field type (bool/int/float/str, optionals, tuples); InputError
    ``wrong`` naming ``source`` when it is not one."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if value is None and type(None) in args:
        return None
    if origin in (typing.Union, types.UnionType):
        for arg in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, arg, wrong, source)
            except InputError:
                continue
        raise InputError(wrong, source)
    if origin is tuple:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise InputError(wrong, source)
        return tuple(_coerce(v, args[0], wrong, source) for v in value)
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if hint in (bool, int, str) and type(value) is hint:
        return value
    raise InputError(wrong, source)
