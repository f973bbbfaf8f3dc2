"""Enrolled voices on disk: one JSON file per name in the user's data folder.

The folder is ``$WITNESS_VOICES_DIR`` when set, else ``$XDG_DATA_HOME/witness/voices``
(``~/.local/share/witness/voices``). A voice file holds the speaker-embedding model it was
made with (name and the ONNX file's sha256: prints of another model cannot be compared) and
one print per enrolled recording: the centroid of that recording's speaker cluster.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from witness.errors import InputError, UsageError
from witness.fileio import atomic_write

ENV = "WITNESS_VOICES_DIR"
SCHEMA = "witness.voice"
SCHEMA_VERSION = 1
SUFFIX = ".voice.json"
# No spaces (RTTM and --speaker-names split on them), no commas (--voices A,B), not a path,
# and not a diarization label or a --voices keyword.
_NAME = re.compile(r"[^\s,/\\]{1,64}")
_RESERVED = re.compile(r"(SPEAKER_\d+|all|none)", re.IGNORECASE)

NONE, ALL = "none", "all"  # --voices


def voices_dir() -> Path:
    """The folder enrolled voices live in (not created here)."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "witness" / "voices"


def check_name(name: str) -> str:
    """``name`` when it can name a voice, else UsageError saying why."""
    if not _NAME.fullmatch(name) or name.startswith(".") or _RESERVED.fullmatch(name):
        raise UsageError(f"voice name {name!r}: use up to 64 characters without spaces, commas or slashes, "
                         "not starting with a dot, and not SPEAKER_NN, all or none (e.g. Diane or Diane_Smith)")
    return name


@dataclass(frozen=True)
class VoicePrint:
    """One enrolled recording: its speaker's cluster centroid (dim,) float32, where it came
    from, how much speech it held and when it was added (ISO 8601, UTC)."""

    embedding: np.ndarray
    source: str
    source_sha256: str
    speech_seconds: float
    added: str


@dataclass(frozen=True)
class Voice:
    """A named voice: the embedding model its prints come from and the prints."""

    name: str
    model: str
    model_sha256: str
    prints: tuple[VoicePrint, ...]
    path: Path | None = None

    def vector(self) -> np.ndarray:
        """(dim,) float64 unit vector the voice is scored with: the mean of its unit-length
        prints (scripts/calibrate_voices.py compares this with the best single print)."""
        prints = np.stack([p.embedding for p in self.prints]).astype(np.float64)
        mean = (prints / np.linalg.norm(prints, axis=1, keepdims=True)).mean(axis=0)
        return mean / np.linalg.norm(mean)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "name": self.name,
            "model": self.model, "model_sha256": self.model_sha256,
            "prints": [{"source": p.source, "source_sha256": p.source_sha256,
                        "speech_seconds": round(p.speech_seconds, 3), "added": p.added,
                        "embedding": [float(x) for x in p.embedding]} for p in self.prints],
        }


def voice_path(name: str, folder: Path | None = None) -> Path:
    return (folder or voices_dir()) / f"{name}{SUFFIX}"


def read_voice(path: Path) -> Voice:
    """The voice in ``path``; InputError naming it when it is not a readable voice file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"unreadable voice file ({type(exc).__name__}: {exc})", path) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or data.get("schema_version") != SCHEMA_VERSION:
        raise InputError(f"not a witness voice file (schema {SCHEMA} version {SCHEMA_VERSION})", path)
    try:
        prints = tuple(VoicePrint(np.asarray(p["embedding"], dtype=np.float32), str(p["source"]),
                                  str(p["source_sha256"]), float(p["speech_seconds"]), str(p["added"]))
                       for p in data["prints"])
        voice = Voice(str(data["name"]), str(data["model"]), str(data["model_sha256"]), prints, path)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"malformed voice file ({type(exc).__name__}: {exc})", path) from None
    dims = {p.embedding.shape for p in prints}
    if not prints or len(dims) != 1 or len(next(iter(dims))) != 1 or not all(np.isfinite(p.embedding).all()
                                                                              and p.embedding.any() for p in prints):
        raise InputError("malformed voice file (prints must be non-zero vectors of one length)", path)
    return voice


def _voice_files(names: Sequence[str] | None, folder: Path) -> list[Path]:
    """Every voice file in ``folder`` (``names`` None), or the files of ``names``."""
    if names is None:
        return sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []
    return [voice_path(check_name(n), folder) for n in names]


def load_voices(names: Sequence[str] | None = None, folder: Path | None = None) -> tuple[Voice, ...]:
    """The enrolled voices, by name: all of them (``names`` None), or those named
    (UsageError for a name that is not enrolled)."""
    folder = folder or voices_dir()
    paths = _voice_files(names, folder)
    if names is not None:
        missing = [n for n, p in zip(names, paths) if not p.is_file()]
        if missing:
            raise UsageError(f"--voices: no enrolled voice {', '.join(missing)} in {folder} "
                             "(see `witness voices list`)")
    return tuple(read_voice(p) for p in paths)


def voices_digest(names: Sequence[str] | None = None, folder: Path | None = None) -> str:
    """sha256 of the voice files ``load_voices(names)`` would read ("" when there are none):
    it changes whenever one is enrolled, added to, replaced or removed."""
    paths = _voice_files(names, folder or voices_dir())
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    return digest.hexdigest() if paths else ""


def save_voice(voice: Voice, folder: Path | None = None) -> Path:
    """Write ``voice`` to its file (atomically; the folder is made); returns the path."""
    path = voice_path(voice.name, folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(path, json.dumps(voice.to_dict(), indent=1, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write the voice file ({exc.strerror or exc})", path) from None


def remove_voice(name: str, folder: Path | None = None) -> Path:
    """Delete the voice ``name``; UsageError when there is none."""
    path = voice_path(check_name(name), folder)
    if not path.is_file():
        raise UsageError(f"no enrolled voice {name} in {path.parent} (see `witness voices list`)")
    path.unlink()
    return path


def parse_use(use: str) -> tuple[str, ...] | None:
    """The voices ``--voices`` asks for: None for all, () for none, else the names."""
    value = use.strip()
    if value.lower() == ALL:
        return None
    if value.lower() == NONE or not value:
        return ()
    return tuple(dict.fromkeys(n.strip() for n in value.split(",") if n.strip()))


def voices_for_run(use: str, model: str, model_path: Path) -> tuple[Voice, ...]:
    """The enrolled voices a run compares speakers with (``use``: all, none or NAME,…),
    each checked against the run's embedding model (``model``, its file ``model_path``):
    InputError naming the voice file when it was made with another model."""
    names = parse_use(use)
    if names == ():
        return ()
    voices = load_voices(names)
    if voices:
        from witness.models.store import cached_sha256

        sha256 = cached_sha256(Path(model_path))
        for voice in voices:
            if (voice.model, voice.model_sha256) != (model, sha256):
                raise InputError(
                    f"voice print of {voice.name} was made with {voice.model} (sha256 {voice.model_sha256[:12]}…), "
                    f"this run embeds with {model} (sha256 {sha256[:12]}…): enroll {voice.name} again, "
                    "or run with --voices none", voice.path)
    return voices
