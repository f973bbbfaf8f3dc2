"""The options of a run, by name, for the command line and the Python API alike.

``settings_for`` takes the options a caller gave (``num_speakers=2``, ``device="cpu"``, …;
None: not given) and the settings they start from (defaults, the user's config file, a
``config`` file or table), checks each one and returns the settings the run uses. Every
check raises ``UsageError`` naming the option as the caller spells it: ``--num-speakers``
on the command line (``flag``), ``num_speakers`` in Python (``keyword``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, TypedDict

from witness.config import (
    ANY, CHANNEL_MODES, DEVICES, EMBEDDINGS, SCHEMA, SEGMENTATIONS, Allowed, Settings, load_settings, override)
from witness.errors import UsageError


class RunOptions(TypedDict, total=False):
    """The options ``witness.transcribe``, ``witness.Witness`` and ``witness.diarize`` take,
    named as the command line's (``--num-speakers`` is ``num_speakers``)."""

    model: str  # Whisper model: tiny.en-q8_0 (default), tiny.en, base, small.en, a ggml file…
    language: str  # "auto" or a language code (en, de…)
    no_diarize: bool  # Whisper alone: words without speakers
    num_speakers: int
    min_speakers: int
    max_speakers: int
    segmentation: str  # auto | fp32 | int8
    embedding: str  # auto | campplus | ge2e | wespeaker
    channels: str  # auto | mix | split (stereo calls)
    device: str  # auto | cpu | cuda | migraphx | rocm | coreml
    serial: bool  # True: engines take turns; False: side by side; not given: the plan decides
    min_free_vram: float  # GiB
    threads: int  # CPU threads in all
    models_dir: str | os.PathLike[str]
    offline: bool  # never download a model
    voices: str  # all | none | NAME,NAME…
    config: str | os.PathLike[str] | Mapping[str, Any]  # a TOML file, or its tables as a dict


AT_LEAST_ONE = Allowed(low=1)
# What each option may hold: its types, then its range or choices (as the config's SCHEMA says them).
RULES: dict[str, tuple[tuple[type, ...], Allowed]] = {
    "model": ((str,), SCHEMA["asr"]["model"]),
    "language": ((str,), SCHEMA["whisper"]["language"]),
    "no_diarize": ((bool,), ANY),
    "num_speakers": ((int,), AT_LEAST_ONE),
    "min_speakers": ((int,), AT_LEAST_ONE),
    "max_speakers": ((int,), AT_LEAST_ONE),
    "segmentation": ((str,), Allowed(choices=SEGMENTATIONS)),
    "embedding": ((str,), Allowed(choices=EMBEDDINGS)),
    "channels": ((str,), Allowed(choices=CHANNEL_MODES)),
    "device": ((str,), Allowed(choices=DEVICES)),
    "serial": ((bool,), ANY),
    "min_free_vram": ((float, int), Allowed(low=0, above=True)),
    "threads": ((int,), AT_LEAST_ONE),
    "models_dir": ((str, os.PathLike), ANY),
    "offline": ((bool,), ANY),
    "voices": ((str,), ANY),
    "config": ((str, os.PathLike, Mapping), ANY),
}


def keyword(name: str) -> str:
    """An option as Python spells it: ``num_speakers``."""
    return name


def flag(name: str) -> str:
    """An option as the command line spells it: ``--num-speakers``."""
    return "--serial/--parallel" if name == "serial" else "--" + name.replace("_", "-")


def settings_for(options: Mapping[str, Any], spell: Callable[[str], str] = keyword,
                 base: Settings | None = None) -> Settings:
    """The settings of a run with ``options`` (None values: not given), from ``base`` or
    else the defaults, the user's config file and ``options["config"]``: UsageError naming
    the option (``spell``) for an unknown one, a wrong type or a value out of range, or
    options that contradict each other."""
    given = {name: value for name, value in options.items() if value is not None}
    for name, value in given.items():
        check_option(name, value, spell)
    settings = base or _configured(given.get("config"))
    return apply_options(settings, given, spell)


def check_option(name: str, value: Any, spell: Callable[[str], str] = keyword) -> None:
    """UsageError unless ``value`` is one option ``name`` may hold."""
    if name not in RULES:
        raise UsageError(f"unknown option {spell(name)} (known: {', '.join(spell(n) for n in RULES)})")
    types, allowed = RULES[name]
    if isinstance(value, bool) and bool not in types or not isinstance(value, types) \
            or not isinstance(value, Mapping) and not allowed.allows(value):
        raise UsageError(f"{spell(name)} must be {allowed.describe(types[0])}, not {value!r}")


def _configured(config: str | os.PathLike[str] | Mapping[str, Any] | None) -> Settings:
    """The defaults, the user's config file, then ``config``: a TOML file, or its tables."""
    if isinstance(config, Mapping):
        return override(load_settings(), config, "config")
    return load_settings(config)


def apply_options(s: Settings, given: Mapping[str, Any], spell: Callable[[str], str] = keyword) -> Settings:
    """``s`` with the engine options ``given`` (checked by ``check_option``) applied."""
    if "model" in given:
        s = replace(s, asr=replace(s.asr, model=given["model"]))
    if "language" in given:
        s = replace(s, whisper=replace(s.whisper, language=given["language"]))
    diar = {k: given[k] for k in ("num_speakers", "min_speakers", "max_speakers", "segmentation", "embedding",
                                  "channels") if k in given}
    device = given.get("device")
    if device:
        diar.update(segmentation_device=device, embedding_device=device)
        if device == "cpu":
            s = replace(s, whisper=replace(s.whisper, use_gpu=False))
    if diar:
        s = replace(s, diarization=replace(s.diarization, **diar))
    d = s.diarization
    check_speaker_bounds(d.num_speakers, d.min_speakers, d.max_speakers, spell)
    check_device(device, spell)
    plan = {k: v for k, v in (("mode", None if "serial" not in given else ("serial" if given["serial"] else "parallel")),
                              ("min_free_vram_gib", given.get("min_free_vram")), ("threads", given.get("threads")))
            if v is not None}
    if plan:
        s = replace(s, plan=replace(s.plan, **plan))
    models = {k: given[o] for k, o in (("dir", "models_dir"), ("offline", "offline")) if o in given}
    if models:
        s = replace(s, models=replace(s.models, **{k: str(v) if k == "dir" else v for k, v in models.items()}))
    check_models_dir(s.models.dir, spell("models_dir") if "models_dir" in given else "the config's [models] dir")
    return apply_voices(s, given.get("voices"))


def check_speaker_bounds(num_speakers: int | None, min_speakers: int | None, max_speakers: int | None,
                         spell: Callable[[str], str] = keyword) -> None:
    """UsageError when the speaker counts contradict each other (0 or None: not given)."""
    n, lo, hi = spell("num_speakers"), spell("min_speakers"), spell("max_speakers")
    if min_speakers and max_speakers and min_speakers > max_speakers:
        raise UsageError(f"{lo} {min_speakers} exceeds {hi} {max_speakers}")
    if num_speakers and max_speakers and num_speakers > max_speakers:
        raise UsageError(f"{n} {num_speakers} exceeds {hi} {max_speakers}")
    if num_speakers and min_speakers and num_speakers < min_speakers:
        raise UsageError(f"{n} {num_speakers} is below {lo} {min_speakers}")


def check_device(device: str | None, spell: Callable[[str], str] = keyword) -> None:
    """UsageError naming what is missing when an explicit device cannot be had (only
    ``auto`` falls back; ``cpu`` always can)."""
    if device in (None, "auto", "cpu"):
        return
    from witness.accel.providers import INSTALL_HINT, NAMES, available_providers, short_name

    available = available_providers()
    if NAMES[device] not in available:
        raise UsageError(
            f"{spell('device')} {device}: this onnxruntime build has no {NAMES[device]} (it offers "
            f"{', '.join(short_name(p) for p in available)}); {INSTALL_HINT}, or use {spell('device')} auto")


def check_models_dir(models_dir: str | Path | None, given_as: str) -> None:
    """UsageError when ``models_dir`` (``given_as`` says where it was given) or
    $WITNESS_MODELS_DIR names no folder."""
    for value, hint in ((models_dir, given_as), (os.environ.get("WITNESS_MODELS_DIR"), "WITNESS_MODELS_DIR")):
        if value and not Path(value).expanduser().is_dir():
            raise UsageError(f"{hint} {value}: no such folder")


def apply_voices(settings: Settings, voices: str | None) -> Settings:
    """``settings`` with the enrolled voices to use (UsageError for a name no voice could have)."""
    if voices is None:
        return settings
    from witness.voices.store import check_name, parse_use

    for name in parse_use(voices) or ():
        check_name(name)
    return replace(settings, voices=replace(settings.voices, use=voices))
