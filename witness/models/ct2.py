"""Read a CTranslate2 Whisper model (faster-whisper's format) with numpy alone.

A CTranslate2 model folder holds ``model.bin``, ``config.json`` and the vocabulary
(``vocabulary.json``, ``vocabulary.txt`` or only ``tokenizer.json``). ``model.bin`` is
(little-endian, as ``ctranslate2/specs/model_spec.py`` writes it and ``src/models/model.cc``
reads it): uint32 binary version; the spec name and uint32 revision (version >= 2); uint32
variable count; per variable a name, uint8 rank, rank x uint32 dims, then uint8 dtype id and
uint32 byte count (version >= 4; before that uint8 item size and uint32 element count) and
the raw data; then uint32 alias count and (alias, target) name pairs (version >= 3).
Strings are uint16 length (including a trailing NUL) and the bytes.

Quantised weights carry ``<name>_scale``: int8 rows were multiplied by a per-row scale
(``value = round(weight * scale)``), int16 by one scalar; ``weight = value / scale``.
Arrays are memory-mapped, so reading a large model costs little memory.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from witness.errors import ModelError

# dtype ids of include/ctranslate2/types.h
DTYPES = {0: "float32", 1: "int8", 2: "int16", 3: "int32", 4: "float16", 5: "bfloat16"}
_OLD_ITEM_SIZES = {4: "float32", 2: "int16", 1: "int8"}  # binary version < 4
MAX_BINARY_VERSION = 6
VOCABULARY_FILES = ("vocabulary.json", "vocabulary.txt", "tokenizer.json")


@dataclass(frozen=True)
class Ct2Variable:
    """Where one variable's bytes sit in model.bin."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Ct2Model:
    """An opened CTranslate2 model: its variable table, config and vocabulary."""

    path: str
    spec: str
    revision: int
    binary_version: int
    variables: Mapping[str, Ct2Variable]
    aliases: Mapping[str, str]
    config: Mapping[str, Any] = field(default_factory=dict)
    vocabulary: tuple[str, ...] = ()

    def has(self, name: str) -> bool:
        return self.aliases.get(name, name) in self.variables

    def raw(self, name: str) -> np.ndarray:
        """The stored array of ``name`` (aliases followed), read-only, in its stored dtype."""
        var = self.variables.get(self.aliases.get(name, name))
        if var is None:
            raise ModelError(f"CTranslate2 model has no variable {name!r}", self.path)
        if var.nbytes == 0:
            return np.zeros(var.shape, dtype=np.float32 if var.dtype == "bfloat16" else var.dtype)
        with open(self.path, "rb") as f:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if var.dtype == "bfloat16":
            bits = np.frombuffer(buf, dtype="<u2", count=var.nbytes // 2, offset=var.offset)
            return (bits.astype(np.uint32) << 16).view(np.float32).reshape(var.shape)
        dtype = np.dtype(var.dtype).newbyteorder("<")
        return np.frombuffer(buf, dtype=dtype, count=var.nbytes // dtype.itemsize, offset=var.offset).reshape(var.shape)

    def weight(self, name: str) -> np.ndarray:
        """``name`` as floats: float16/float32 as stored, quantised weights divided by their scale."""
        value = self.raw(name)
        if value.dtype.kind == "f":
            return value
        scale_name = name + "_scale"
        if not self.has(scale_name):
            raise ModelError(f"quantised variable {name!r} has no {scale_name!r}", self.path)
        if self.has(name + "_zero"):
            raise ModelError(f"variable {name!r} uses AWQ zero points, which witness cannot convert", self.path)
        scale = self.raw(scale_name).astype(np.float32)
        if scale.ndim == 1:  # int8: one scale per output row (conv weights: per output channel)
            scale = scale.reshape((-1,) + (1,) * (value.ndim - 1))
        return value.astype(np.float32) / scale

    def scalar(self, name: str) -> int:
        return int(self.raw(name).reshape(-1)[0])


def read_model_bin(path: str | Path) -> tuple[str, int, int, dict[str, Ct2Variable], dict[str, str]]:
    """Parse the variable table of ``model.bin`` without reading the data.

    Returns (spec name, spec revision, binary version, variables, aliases). A file that ends
    before its last variable raises ModelError naming that variable (a truncated download).
    """
    path = str(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        r = _Reader(f, path, size)
        (version,) = r.unpack("<I")
        if not 1 <= version <= MAX_BINARY_VERSION:
            raise ModelError(f"not a CTranslate2 model.bin (binary version {version})", path)
        spec, revision = (r.string(), r.unpack("<I")[0]) if version >= 2 else ("", 1)
        (count,) = r.unpack("<I")
        variables = {}
        for _ in range(count):
            var = _variable(r, version)
            variables[var.name] = var
        aliases = {}
        if version >= 3:
            for _ in range(r.unpack("<I")[0]):
                alias = r.string()
                aliases[alias] = r.string()
    return spec, revision, version, variables, aliases


def _variable(r: "_Reader", version: int) -> Ct2Variable:
    name = r.string()
    (rank,) = r.unpack("<B")
    shape = r.unpack(f"<{rank}I") if rank else ()
    if version >= 4:
        type_id, nbytes = r.unpack("<BI")
        dtype = DTYPES.get(type_id)
    else:
        item_size, count = r.unpack("<BI")
        dtype, nbytes = _OLD_ITEM_SIZES.get(item_size), count * item_size
    if dtype is None:
        raise ModelError(f"variable {name!r} has an unknown data type", r.path)
    itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
    if nbytes != int(np.prod(shape, dtype=np.int64)) * itemsize:
        raise ModelError(f"variable {name!r} has an invalid payload size", r.path)
    offset = r.f.tell()
    if offset + nbytes > r.size:
        raise ModelError(f"CTranslate2 model.bin is truncated: variable {name!r} ends at byte "
                         f"{offset + nbytes:,} but the file has {r.size:,} bytes", r.path)
    r.f.seek(nbytes, os.SEEK_CUR)
    return Ct2Variable(name=name, shape=tuple(shape), dtype=dtype, offset=offset, nbytes=nbytes)


class _Reader:
    def __init__(self, f: Any, path: str, size: int):
        self.f, self.path, self.size = f, path, size

    def unpack(self, fmt: str) -> tuple[int, ...]:
        n = struct.calcsize(fmt)
        raw = self.f.read(n)
        if len(raw) != n:
            raise ModelError(f"CTranslate2 model.bin is truncated at byte {self.f.tell():,}", self.path)
        return struct.unpack(fmt, raw)

    def string(self) -> str:
        (length,) = self.unpack("<H")
        raw = self.f.read(length)
        if length == 0 or len(raw) != length:
            raise ModelError(f"CTranslate2 model.bin is truncated or corrupt at byte {self.f.tell():,}", self.path)
        return raw[:-1].decode("utf-8", "replace")


def read_vocabulary(path: str | Path) -> tuple[str, ...]:
    """Tokens by id from a .json list (vocabulary.json), a .txt with one per line, or a tokenizer.json."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".txt":
            lines = text.split("\n")  # not splitlines(): a token may be empty, none holds "\n"
            return tuple(lines[:-1] if text.endswith("\n") else lines)
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"cannot read the vocabulary ({exc})", path) from None
    if isinstance(data, list):
        return tuple(str(t) for t in data)
    try:  # Hugging Face tokenizer.json: BPE vocab plus added (special) tokens
        by_id = {int(i): str(t) for t, i in data["model"]["vocab"].items()}
        by_id.update({int(t["id"]): str(t["content"]) for t in data.get("added_tokens", ())})
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ModelError("not a vocabulary file (expected a list or a tokenizer.json)", path) from None
    return tuple(by_id.get(i, "") for i in range(max(by_id) + 1))


def open_ct2(model_bin: str | Path, config: str | Path | None = None, vocabulary: str | Path | None = None) -> Ct2Model:
    """Open a CTranslate2 model from its files (config and vocabulary default to model.bin's folder)."""
    model_bin = Path(model_bin)
    folder = model_bin.parent
    if vocabulary is None:
        vocabulary = next((folder / n for n in VOCABULARY_FILES if (folder / n).is_file()), None)
        if vocabulary is None:
            raise ModelError(f"no vocabulary beside the model: put one of {', '.join(VOCABULARY_FILES)} there", folder)
    config = folder / "config.json" if config is None else Path(config)
    try:
        config_data = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"cannot read the model config ({exc})", config) from None
    if not model_bin.is_file():
        raise ModelError("no model.bin here: not a CTranslate2 model folder", model_bin)
    spec, revision, version, variables, aliases = read_model_bin(model_bin)
    return Ct2Model(path=str(model_bin), spec=spec, revision=revision, binary_version=version,
                    variables=variables, aliases=aliases, config=config_data,
                    vocabulary=read_vocabulary(vocabulary))
