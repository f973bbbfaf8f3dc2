"""The ggml Whisper file format whisper.cpp loads: write it, and check a file before loading it.

Layout (little-endian int32 unless noted), as whisper.cpp 1.8's ``whisper_model_load`` reads it:
magic ``ggml``; 11 hparams (n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype); the mel filterbank
(n_mel, n_fft, then n_mel*n_fft float32); the vocabulary (count, then per token a uint32
length and its raw bytes); then tensors until the end of the file, each as n_dims, name
length, ggml type, the dims in ggml order (fastest first), the name, the data.

whisper.cpp trusts the file: a wrong shape or a short file can crash the process. So
``inspect_ggml`` walks the whole tensor table (seeking over the data) and checks every name,
shape, type and byte count against what whisper.cpp will allocate for these hparams.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

import numpy as np

from witness.errors import ModelError
from witness.models import quantize

MAGIC = 0x67676D6C  # "ggml"
QNT_VERSION_FACTOR = 1000  # whisper.cpp folds the quantisation version into ftype
QNT_VERSION = quantize.QNT_VERSION

F32, F16 = 0, 1
# ggml type id -> (name, bytes per block, values per block); the types whisper.cpp models use.
TYPES: dict[int, tuple[str, int, int]] = {
    0: ("f32", 4, 1), 1: ("f16", 2, 1), 2: ("q4_0", 18, 32), 3: ("q4_1", 20, 32),
    6: ("q5_0", 22, 32), 7: ("q5_1", 24, 32), 8: ("q8_0", 34, 32), 10: ("q2_k", 84, 256),
    11: ("q3_k", 110, 256), 12: ("q4_k", 144, 256), 13: ("q5_k", 176, 256),
    14: ("q6_k", 210, 256), 30: ("bf16", 2, 1),
}
# file ftype -> ggml type of the big matrices (ggml_ftype_to_ggml_type)
FTYPE_WTYPE = {0: 0, 1: 1, 2: 2, 3: 3, 7: 8, 8: 6, 9: 7, 10: 10, 11: 11, 12: 12, 13: 13, 14: 14, 24: 30}
SIZE_NAMES = {4: "tiny", 6: "base", 12: "small", 24: "medium", 32: "large"}


@dataclass(frozen=True)
class WhisperHparams:
    """The 11 header integers. ``ftype`` here is without the quantisation-version part."""

    n_vocab: int
    n_audio_ctx: int
    n_audio_state: int
    n_audio_head: int
    n_audio_layer: int
    n_text_ctx: int
    n_text_state: int
    n_text_head: int
    n_text_layer: int
    n_mels: int
    ftype: int

    def as_tuple(self) -> tuple[int, ...]:
        return (self.n_vocab, self.n_audio_ctx, self.n_audio_state, self.n_audio_head, self.n_audio_layer,
                self.n_text_ctx, self.n_text_state, self.n_text_head, self.n_text_layer, self.n_mels, self.ftype)

    @property
    def multilingual(self) -> bool:
        return self.n_vocab >= 51865

    @property
    def size_name(self) -> str:
        """tiny, base, small, medium, large or large-v3-turbo (from the layer counts)."""
        name = SIZE_NAMES.get(self.n_audio_layer, f"{self.n_audio_layer}-layer")
        if name == "large" and self.n_text_layer == 4:
            return "large-v3-turbo"
        return name


@dataclass(frozen=True)
class GgmlInfo:
    """What ``inspect_ggml`` found in a file that whisper.cpp can load."""

    path: str
    hparams: WhisperHparams
    quant_version: int
    n_tokens: int  # tokens stored in the file's vocabulary section
    n_tensors: int
    size: int

    @property
    def weight_type(self) -> str:
        return TYPES[FTYPE_WTYPE[self.hparams.ftype]][0]


def expected_tensors(hp: WhisperHparams) -> dict[str, tuple[tuple[int, ...], int]]:
    """Every tensor whisper.cpp allocates for ``hp``: name -> (dims in ggml order, ggml type)."""
    wtype = FTYPE_WTYPE[hp.ftype]
    vtype = F32 if wtype == F32 else F16  # conv weights
    a, t = hp.n_audio_state, hp.n_text_state
    out: dict[str, tuple[tuple[int, ...], int]] = {
        "encoder.positional_embedding": ((a, hp.n_audio_ctx), F32),
        "encoder.conv1.weight": ((3, hp.n_mels, a), vtype),
        "encoder.conv1.bias": ((1, a), F32),
        "encoder.conv2.weight": ((3, a, a), vtype),
        "encoder.conv2.bias": ((1, a), F32),
        "encoder.ln_post.weight": ((a,), F32),
        "encoder.ln_post.bias": ((a,), F32),
        "decoder.positional_embedding": ((t, hp.n_text_ctx), F32),
        "decoder.token_embedding.weight": ((t, hp.n_vocab), wtype),
        "decoder.ln.weight": ((t,), F32),
        "decoder.ln.bias": ((t,), F32),
    }
    for i in range(hp.n_audio_layer):
        out.update(_block(f"encoder.blocks.{i}", a, wtype, cross=False))
    for i in range(hp.n_text_layer):
        out.update(_block(f"decoder.blocks.{i}", t, wtype, cross=True))
    return out


def _block(prefix: str, n: int, wtype: int, cross: bool) -> dict[str, tuple[tuple[int, ...], int]]:
    out = {
        f"{prefix}.mlp_ln.weight": ((n,), F32), f"{prefix}.mlp_ln.bias": ((n,), F32),
        f"{prefix}.mlp.0.weight": ((n, 4 * n), wtype), f"{prefix}.mlp.0.bias": ((4 * n,), F32),
        f"{prefix}.mlp.2.weight": ((4 * n, n), wtype), f"{prefix}.mlp.2.bias": ((n,), F32),
    }
    for attn in ("attn", "cross_attn") if cross else ("attn",):
        out.update({
            f"{prefix}.{attn}_ln.weight": ((n,), F32), f"{prefix}.{attn}_ln.bias": ((n,), F32),
            f"{prefix}.{attn}.query.weight": ((n, n), wtype), f"{prefix}.{attn}.query.bias": ((n,), F32),
            f"{prefix}.{attn}.key.weight": ((n, n), wtype),  # whisper has no key bias
            f"{prefix}.{attn}.value.weight": ((n, n), wtype), f"{prefix}.{attn}.value.bias": ((n,), F32),
            f"{prefix}.{attn}.out.weight": ((n, n), wtype), f"{prefix}.{attn}.out.bias": ((n,), F32),
        })
    return out


def tensor_nbytes(dims: tuple[int, ...], ggml_type: int) -> int:
    _, block_bytes, block_values = TYPES[ggml_type]
    return int(np.prod(dims, dtype=np.int64)) * block_bytes // block_values


# --- writing ------------------------------------------------------------------------------

def write_header(out: BinaryIO, hp: WhisperHparams, filters: np.ndarray, tokens: list[bytes]) -> None:
    """Header, mel filterbank and vocabulary.

    ``filters``: (n_mels, n_fft // 2 + 1) float32. ``tokens``: raw bytes of the regular tokens.
    """
    quantised = FTYPE_WTYPE[hp.ftype] not in (F32, F16)
    version = QNT_VERSION * QNT_VERSION_FACTOR if quantised else 0
    out.write(struct.pack("<12i", MAGIC, *hp.as_tuple()[:-1], hp.ftype + version))
    out.write(struct.pack("<2i", *filters.shape))
    out.write(np.ascontiguousarray(filters, dtype="<f4").tobytes())
    out.write(struct.pack("<i", len(tokens)))
    for token in tokens:
        out.write(struct.pack("<I", len(token)))
        out.write(token)


def write_tensor(out: BinaryIO, name: str, array: np.ndarray, ggml_type: int) -> None:
    """One tensor; ``array`` in numpy (row-major) shape, stored as f32, f16, or (2-D only)
    one of ``quantize``'s block types, per ``ggml_type``."""
    kind = TYPES[ggml_type][0]
    if ggml_type in (F32, F16):
        data = np.ascontiguousarray(array, dtype="<f4" if ggml_type == F32 else "<f2")
        payload = memoryview(data).cast("B")
    elif kind in quantize.GGML_TYPE:
        payload = quantize.quantize(array, kind)
    else:
        raise ValueError(f"write_tensor writes f32, f16, {', '.join(quantize.GGML_TYPE)}, not {kind}")
    encoded = name.encode("utf-8")
    out.write(struct.pack("<3i", array.ndim, len(encoded), ggml_type))
    out.write(struct.pack(f"<{array.ndim}i", *reversed(array.shape)))
    out.write(encoded)
    out.write(payload)


# --- reading and checking -----------------------------------------------------------------

class _Reader:
    """Reads little-endian fields, turning a short read into a ModelError naming the file."""

    def __init__(self, f: BinaryIO, path: str, size: int):
        self.f, self.path, self.size = f, path, size

    def ints(self, n: int, what: str) -> tuple[int, ...]:
        raw = self.f.read(4 * n)
        if len(raw) != 4 * n:
            raise ModelError(f"not a complete ggml Whisper model: file ends inside the {what}", self.path)
        return struct.unpack(f"<{n}i", raw)

    def skip(self, n: int, what: str) -> None:
        if n < 0 or self.f.tell() + n > self.size:
            raise ModelError(f"not a complete ggml Whisper model (truncated?): file ends inside the {what}", self.path)
        self.f.seek(n, os.SEEK_CUR)


def read_hparams(path: str | Path) -> tuple[WhisperHparams, int]:
    """The header of a ggml Whisper file and its quantisation version; ModelError if not one."""
    path = str(path)
    with open(path, "rb") as f:
        r = _Reader(f, path, os.fstat(f.fileno()).st_size)
        return _header(r)


def _header(r: _Reader) -> tuple[WhisperHparams, int]:
    (magic,) = struct.unpack("<I", struct.pack("<i", r.ints(1, "magic")[0]))
    if magic != MAGIC:
        raise ModelError("not a ggml Whisper model (bad magic number); use a whisper.cpp ggml .bin file", r.path)
    values = list(r.ints(11, "header"))
    quant_version, values[10] = divmod(values[10], QNT_VERSION_FACTOR)
    hp = WhisperHparams(*values)
    if min(values[:10]) <= 0 or hp.n_audio_state != hp.n_text_state:
        raise ModelError(f"not a valid ggml Whisper model (impossible header {values})", r.path)
    if hp.ftype not in FTYPE_WTYPE:
        raise ModelError(f"ggml Whisper model with unsupported weight type (ftype {hp.ftype})", r.path)
    return hp, quant_version


def inspect_ggml(path: str | Path) -> GgmlInfo:
    """Check that whisper.cpp can load ``path`` without trusting it; ModelError says why not."""
    path = str(path)
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise ModelError(f"cannot read model file ({exc.strerror})", path) from None
    with f:
        size = os.fstat(f.fileno()).st_size
        r = _Reader(f, path, size)
        hp, quant_version = _header(r)
        n_mel, n_fft = r.ints(2, "mel filterbank header")
        if n_mel != hp.n_mels or n_fft <= 0:
            raise ModelError(f"ggml Whisper model has a {n_mel}x{n_fft} mel filterbank for {hp.n_mels} mels", path)
        r.skip(4 * n_mel * n_fft, "mel filterbank")
        (n_tokens,) = r.ints(1, "vocabulary size")
        if not 0 < n_tokens <= hp.n_vocab:
            raise ModelError(f"ggml Whisper model stores {n_tokens} tokens for n_vocab {hp.n_vocab}", path)
        for _ in range(n_tokens):
            (length,) = struct.unpack("<I", struct.pack("<i", r.ints(1, "vocabulary")[0]))
            r.skip(length, "vocabulary")
        n_tensors = _check_tensors(r, expected_tensors(hp))
    return GgmlInfo(path=path, hparams=hp, quant_version=quant_version, n_tokens=n_tokens,
                    n_tensors=n_tensors, size=size)


def _check_tensors(r: _Reader, expected: dict[str, tuple[tuple[int, ...], int]]) -> int:
    seen: set[str] = set()
    for name, dims, ggml_type in _tensor_table(r):
        if name not in expected:
            raise ModelError(f"ggml Whisper model has an unknown tensor {name!r}", r.path)
        if name in seen:
            raise ModelError(f"ggml Whisper model repeats tensor {name!r}", r.path)
        want_dims, want_type = expected[name]
        if _padded(dims) != _padded(want_dims):
            raise ModelError(f"tensor {name!r} has shape {list(dims)}, whisper.cpp expects {list(want_dims)}", r.path)
        nbytes = tensor_nbytes(dims, ggml_type)
        if nbytes != tensor_nbytes(want_dims, want_type):
            raise ModelError(f"tensor {name!r} has type {TYPES[ggml_type][0]}, whisper.cpp expects "
                             f"{TYPES[want_type][0]}", r.path)
        r.skip(nbytes, f"data of tensor {name!r}")
        seen.add(name)
    missing = len(expected) - len(seen)
    if missing:
        first = next(n for n in expected if n not in seen)
        raise ModelError(f"ggml Whisper model is incomplete (truncated?): {missing} tensors missing, "
                         f"first {first!r}", r.path)
    return len(seen)


def _padded(dims: tuple[int, ...]) -> tuple[int, ...]:
    return dims + (1,) * (4 - len(dims))


def _tensor_table(r: _Reader) -> Iterator[tuple[str, tuple[int, ...], int]]:
    """(name, dims, ggml type) per tensor, leaving the file positioned at its data."""
    while r.f.tell() < r.size:
        n_dims, name_len, ggml_type = r.ints(3, "tensor header")
        if not 1 <= n_dims <= 4 or not 0 < name_len < 256 or ggml_type not in TYPES:
            raise ModelError(f"corrupt ggml Whisper model: bad tensor header at byte {r.f.tell() - 12}", r.path)
        dims = r.ints(n_dims, "tensor header")
        raw = r.f.read(name_len)
        if len(raw) != name_len:
            raise ModelError("not a complete ggml Whisper model: file ends inside a tensor name", r.path)
        yield raw.decode("utf-8", "replace"), tuple(dims), ggml_type
