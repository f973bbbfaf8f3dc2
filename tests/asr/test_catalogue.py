"""The Whisper model catalogue: every entry pinned, every source usable."""

from __future__ import annotations

import re

import _pywhispercpp as pw

from witness.config import AsrSettings
from witness.models.whisper_catalogue import CATALOGUE, HF_BASE


def test_every_ggml_file_has_a_url_size_and_sha256():
    sizes = ("tiny", "base", "small", "medium", "large-v1", "large-v2", "large-v3", "large-v3-turbo")
    assert set(sizes) | {"tiny.en", "base.en", "small.en", "medium.en"} <= set(CATALOGUE)
    assert {"tiny-q5_1", "base.en-q8_0", "large-v3-turbo-q5_0"} <= set(CATALOGUE)
    for name, entry in CATALOGUE.items():
        assert entry.ggml.urls == (f"{HF_BASE}ggml-{name}.bin",)
        assert re.fullmatch(r"[0-9a-f]{64}", entry.ggml.sha256), name
        assert entry.ggml.size and entry.ggml.size > 30_000_000


def test_pip_sources_pin_every_file_and_small_is_left_out():
    assert AsrSettings().model == "tiny.en-q8_0" and CATALOGUE["tiny.en-q8_0"].ct2  # the default converts from CTranslate2
    assert len(CATALOGUE["base"].ct2) == 2 and not CATALOGUE["small"].ct2  # small's parts are truncated
    for entry in CATALOGUE.values():
        for source in entry.ct2:
            for spec in (source.model_bin, source.config, source.vocabulary):
                assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256) and spec.size and spec.pip
                assert all("==" in part.requirement for part in spec.pip)
            assert source.converted_name(entry.name).startswith(f"ggml-{entry.name}-ct2-")


def test_every_model_has_a_dtw_alignment_head_preset():
    for entry in CATALOGUE.values():
        assert hasattr(pw, entry.dtw_preset), entry.name
    assert CATALOGUE["small.en-q5_1"].dtw_preset == "WHISPER_AHEADS_SMALL_EN"
    assert CATALOGUE["large-v3-turbo-q8_0"].dtw_preset == "WHISPER_AHEADS_LARGE_V3_TURBO"
