"""ggml's block quantisations q8_0, q5_0 and q5_1, in numpy, bit for bit as ggml's reference
quantisers (``quantize_row_q*_ref`` in ggml-quants.c) write them.

Every block holds 32 consecutive values of a row:

* q8_0 (34 bytes): f16 scale d = max|x| / 127, then 32 int8 round(x / d).
* q5_0 (22 bytes): f16 d = x_m / -16 where x_m is the value of largest magnitude, a uint32
  of the 32 fifth bits, 16 bytes of low nibbles; q = min(31, floor(x / d + 16.5)).
* q5_1 (24 bytes): f16 d = (max - min) / 31 and f16 m = min, the fifth bits, the nibbles;
  q = floor((x - min) / d + 0.5).

Nibble j of byte k: element k (low) and element k + 16 (high); bit k of the uint32 is
element k's fifth bit.
"""

from __future__ import annotations

import numpy as np

BLOCK = 32
Q8_0, Q5_0, Q5_1 = 8, 6, 7  # ggml type ids
FTYPES = {"q8_0": 7, "q5_0": 8, "q5_1": 9}  # file ftype of each (whisper.cpp's ggml_ftype)
GGML_TYPE = {"q8_0": Q8_0, "q5_0": Q5_0, "q5_1": Q5_1}
QNT_VERSION = 2  # ggml's GGML_QNT_VERSION, folded into a quantised file's ftype


def quantize(array: np.ndarray, kind: str) -> bytes:
    """``array`` (rows, cols) float, cols a multiple of 32, as ggml ``kind`` blocks, row-major."""
    if array.ndim != 2 or array.shape[1] % BLOCK:
        raise ValueError(f"can only quantise 2-D arrays whose rows are a multiple of {BLOCK}, not {array.shape}")
    blocks = np.ascontiguousarray(array, dtype=np.float32).reshape(-1, BLOCK)
    if kind == "q8_0":
        return _q8_0(blocks)
    if kind in ("q5_0", "q5_1"):
        return _q5(blocks, kind)
    raise ValueError(f"unknown quantisation {kind!r} (known: {', '.join(FTYPES)})")


def _round_away(x: np.ndarray) -> np.ndarray:
    """C's roundf: halves away from zero."""
    return np.trunc(x + np.copysign(0.5, x))


def _inverse(d: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0).astype(np.float32)


def _q8_0(blocks: np.ndarray) -> bytes:
    """blocks: (n, 32) float32 -> n q8_0 blocks."""
    d = (np.max(np.abs(blocks), axis=1) / 127).astype(np.float32)
    q = _round_away(blocks * _inverse(d)[:, None]).astype(np.int8)
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", BLOCK)])
    out["d"], out["qs"] = d, q
    return out.tobytes()


def _q5(blocks: np.ndarray, kind: str) -> bytes:
    """blocks: (n, 32) float32 -> n q5_0 or q5_1 blocks."""
    rows = np.arange(len(blocks))
    if kind == "q5_0":
        extreme = blocks[rows, np.argmax(np.abs(blocks), axis=1)]
        d = (extreme / -16).astype(np.float32)
        q = np.minimum(31, np.floor(blocks * _inverse(d)[:, None] + 16.5)).astype(np.uint8)
        fields = [("d", "<f2")]
    else:
        low, high = blocks.min(axis=1), blocks.max(axis=1)
        d = ((high - low) / 31).astype(np.float32)
        q = np.clip(np.floor((blocks - low[:, None]) * _inverse(d)[:, None] + 0.5), 0, 31).astype(np.uint8)
        fields = [("d", "<f2"), ("m", "<f2")]
    out = np.empty(len(blocks), dtype=fields + [("qh", "<u4"), ("qs", "u1", BLOCK // 2)])
    out["d"] = d
    if kind == "q5_1":
        out["m"] = low
    fifth = ((q >> 4) & 1).astype(np.uint32)
    out["qh"] = np.sum(fifth << np.arange(BLOCK, dtype=np.uint32), axis=1, dtype=np.uint32)
    out["qs"] = (q[:, :BLOCK // 2] & 0x0F) | ((q[:, BLOCK // 2:] & 0x0F) << 4)
    return out.tobytes()


def dequantize(data: bytes, kind: str, shape: tuple[int, int]) -> np.ndarray:
    """The (rows, cols) float32 values ``kind`` blocks stand for (ggml's dequantize_row_*)."""
    if kind == "q8_0":
        blocks = np.frombuffer(data, dtype=[("d", "<f2"), ("qs", "i1", BLOCK)])
        return (blocks["d"].astype(np.float32)[:, None] * blocks["qs"]).reshape(shape)
    fields = [("d", "<f2")] + ([("m", "<f2")] if kind == "q5_1" else [])
    blocks = np.frombuffer(data, dtype=fields + [("qh", "<u4"), ("qs", "u1", BLOCK // 2)])
    low = np.concatenate([blocks["qs"] & 0x0F, blocks["qs"] >> 4], axis=1).astype(np.int32)
    fifth = (blocks["qh"][:, None] >> np.arange(BLOCK, dtype=np.uint32)) & 1
    q = (low | (fifth.astype(np.int32) << 4)).astype(np.float32)
    d = blocks["d"].astype(np.float32)[:, None]
    values = d * q + blocks["m"].astype(np.float32)[:, None] if kind == "q5_1" else d * (q - 16)
    return values.reshape(shape)
