"""Convert a CTranslate2 Whisper model to the ggml file whisper.cpp loads.

CTranslate2 fuses what whisper.cpp keeps apart, so the conversion splits it again:
self-attention ``linear_0`` is query, key and value stacked by rows (3d x d), cross-attention
``linear_1`` is key and value (2d x d). Whisper's key projections have no bias; CTranslate2
stores zeros there, and whisper.cpp has no slot for it. Dropping a key bias is exact in any
case: it adds q·b to every score of a query, which the softmax cancels.
The output projection is tied to the token embedding (whisper.cpp uses the embedding).
Weight matrices and conv kernels are written as float16, everything else as float32
(``ftype`` 1, as whisper.cpp's own converter does); int8/int16 weights are dequantised first.
With ``weights="q8_0"`` (or q5_0, q5_1) the weight matrices are block-quantised instead
(``quantize``), as whisper.cpp's ``quantize`` tool does; conv kernels stay float16.
The mel filterbank is computed (``melfilters``), the vocabulary decoded from GPT-2's
byte-level alphabet to raw bytes.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Iterator

import numpy as np

from witness.errors import ModelError
from witness.fileio import publish, temp_beside
from witness.models import ggml, quantize
from witness.models.ct2 import Ct2Model
from witness.models.melfilters import mel_filters
from witness.progress import Progress

log = logging.getLogger(__name__)

N_TEXT_TOKENS = 50257  # GPT-2 BPE ranks whisper.cpp stores (ids below its first special token)


def byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in character -> the byte it encodes."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = list(printable)
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def token_bytes(vocabulary: tuple[str, ...]) -> list[bytes]:
    """Raw bytes of the first 50,257 tokens (the text tokens, as whisper.cpp's files hold them)."""
    decode = byte_decoder()
    out = []
    for token in vocabulary[:N_TEXT_TOKENS]:
        try:
            out.append(bytes(decode[c] for c in token))
        except KeyError:  # a special token such as <|endoftext|> is plain ASCII
            out.append(token.encode("utf-8"))
    return out


def whisper_hparams(model: Ct2Model, weights: str = "f16") -> ggml.WhisperHparams:
    """The ggml header of a CTranslate2 Whisper model with ``weights`` ("f16", "q8_0",
    "q5_0", "q5_1") as the type of its weight matrices."""
    if model.spec != "WhisperSpec":
        raise ModelError(f"not a Whisper model (CTranslate2 spec {model.spec or 'unknown'})", model.path)
    names = model.variables.keys()

    def layers(prefix: str) -> int:
        return len({m.group(1) for n in names if (m := re.match(prefix + r"/layer_(\d+)/", n))})

    conv1 = model.variables["encoder/conv1/weight"].shape  # (n_state, n_mels, 3)
    n_vocab, n_text_state = model.variables["decoder/embeddings/weight"].shape
    return ggml.WhisperHparams(
        n_vocab=n_vocab,
        n_audio_ctx=model.variables["encoder/position_encodings/encodings"].shape[0],
        n_audio_state=conv1[0],
        n_audio_head=model.scalar("encoder/num_heads"),
        n_audio_layer=layers("encoder"),
        n_text_ctx=model.variables["decoder/position_encodings/encodings"].shape[0],
        n_text_state=n_text_state,
        n_text_head=model.scalar("decoder/num_heads"),
        n_text_layer=layers("decoder"),
        n_mels=conv1[1],
        ftype=ggml.F16 if weights == "f16" else quantize.FTYPES[weights],
    )


def ggml_tensors(model: Ct2Model, hp: ggml.WhisperHparams) -> Iterator[tuple[str, np.ndarray]]:
    """(whisper.cpp tensor name, array in numpy shape) for every tensor, in file order."""
    w = model.weight
    yield "encoder.positional_embedding", w("encoder/position_encodings/encodings")
    for i in (1, 2):
        yield f"encoder.conv{i}.weight", w(f"encoder/conv{i}/weight")
        yield f"encoder.conv{i}.bias", w(f"encoder/conv{i}/bias").reshape(-1, 1)
    for i in range(hp.n_audio_layer):
        yield from _layer(model, f"encoder/layer_{i}", f"encoder.blocks.{i}", cross=False)
    yield "encoder.ln_post.weight", w("encoder/layer_norm/gamma")
    yield "encoder.ln_post.bias", w("encoder/layer_norm/beta")
    yield "decoder.positional_embedding", w("decoder/position_encodings/encodings")
    yield "decoder.token_embedding.weight", w("decoder/embeddings/weight")
    for i in range(hp.n_text_layer):
        yield from _layer(model, f"decoder/layer_{i}", f"decoder.blocks.{i}", cross=True)
    yield "decoder.ln.weight", w("decoder/layer_norm/gamma")
    yield "decoder.ln.bias", w("decoder/layer_norm/beta")


def _layer(model: Ct2Model, src: str, dst: str, cross: bool) -> Iterator[tuple[str, np.ndarray]]:
    """One residual block, tensors in the order of OpenAI's state dict (as whisper.cpp's files)."""
    w = model.weight
    q, k, v = _split_rows(w(f"{src}/self_attention/linear_0/weight"), 3)
    qb, _, vb = _split_rows(w(f"{src}/self_attention/linear_0/bias"), 3)
    yield from _attention(dst + ".attn", q, qb, k, v, vb)
    yield from _linear(model, f"{src}/self_attention/linear_1", f"{dst}.attn.out")
    yield from _norm(model, f"{src}/self_attention/layer_norm", f"{dst}.attn_ln")
    if cross:
        k, v = _split_rows(w(f"{src}/attention/linear_1/weight"), 2)
        _, vb = _split_rows(w(f"{src}/attention/linear_1/bias"), 2)
        q, qb = w(f"{src}/attention/linear_0/weight"), w(f"{src}/attention/linear_0/bias")
        yield from _attention(dst + ".cross_attn", q, qb, k, v, vb)
        yield from _linear(model, f"{src}/attention/linear_2", f"{dst}.cross_attn.out")
        yield from _norm(model, f"{src}/attention/layer_norm", f"{dst}.cross_attn_ln")
    yield from _linear(model, f"{src}/ffn/linear_0", f"{dst}.mlp.0")
    yield from _linear(model, f"{src}/ffn/linear_1", f"{dst}.mlp.2")
    yield from _norm(model, f"{src}/ffn/layer_norm", f"{dst}.mlp_ln")


def _attention(dst: str, q: np.ndarray, qb: np.ndarray, k: np.ndarray, v: np.ndarray,
               vb: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
    """Query/key/value weights (d, d) and biases (d,) under whisper.cpp's names (no key bias)."""
    yield f"{dst}.query.weight", q
    yield f"{dst}.query.bias", qb
    yield f"{dst}.key.weight", k
    yield f"{dst}.value.weight", v
    yield f"{dst}.value.bias", vb


def _norm(model: Ct2Model, src: str, dst: str) -> Iterator[tuple[str, np.ndarray]]:
    yield f"{dst}.weight", model.weight(f"{src}/gamma")
    yield f"{dst}.bias", model.weight(f"{src}/beta")


def _linear(model: Ct2Model, src: str, dst: str) -> Iterator[tuple[str, np.ndarray]]:
    yield f"{dst}.weight", model.weight(f"{src}/weight")
    yield f"{dst}.bias", model.weight(f"{src}/bias")


def _split_rows(array: np.ndarray, parts: int) -> list[np.ndarray]:
    if array.shape[0] % parts:
        raise ValueError(f"cannot split {array.shape[0]} rows into {parts} equal parts")
    return np.split(array, parts, axis=0)


def _check_supported(model: Ct2Model) -> None:
    projection = "decoder/projection/weight"
    if model.has(projection) and model.aliases.get(projection) != "decoder/embeddings/weight":
        emb, proj = model.raw("decoder/embeddings/weight"), model.raw(projection)
        if emb.shape != proj.shape or not np.array_equal(emb, proj):
            raise ModelError("the output projection differs from the token embedding; whisper.cpp ties them", model.path)
    if model.has("decoder/projection/bias"):
        raise ModelError("the output projection has a bias, which whisper.cpp has no slot for", model.path)


def convert(model: Ct2Model, out_path: str | Path, progress: Progress | None = None, weights: str = "f16") -> Path:
    """Write ``model`` as a ggml Whisper file at ``out_path`` (atomically) and return the path.

    ``weights``: "f16", or a quantisation of the weight matrices ("q8_0", "q5_0", "q5_1").
    The result is checked with ``ggml.inspect_ggml`` before it is published.
    """
    if weights != "f16" and weights not in quantize.FTYPES:
        raise ValueError(f"weights must be f16 or one of {', '.join(quantize.FTYPES)}, not {weights!r}")
    hp = whisper_hparams(model, weights)
    _check_supported(model)
    if len(model.vocabulary) != hp.n_vocab:
        raise ModelError(f"vocabulary has {len(model.vocabulary)} tokens, the model {hp.n_vocab}", model.path)
    expected = ggml.expected_tensors(hp)
    tmp = temp_beside(out_path)
    try:
        with open(tmp, "wb") as out:
            ggml.write_header(out, hp, mel_filters(hp.n_mels), token_bytes(model.vocabulary))
            for done, (name, array) in enumerate(ggml_tensors(model, hp), start=1):
                ggml.write_tensor(out, name, array, expected[name][1])
                if progress:
                    progress("convert", done, len(expected))
        ggml.inspect_ggml(tmp)
        log.info("converted %s to %s (%s, %d tensors)", model.path, out_path, hp.size_name, len(expected))
        return publish(tmp, out_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
