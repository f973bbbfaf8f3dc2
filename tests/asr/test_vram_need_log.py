"""The Whisper part of the VRAM estimate against what whisper.cpp itself logs on load."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from witness.accel.vram_need import MB, compute_buffers, kv_caches, whisper_need
from witness.asr.whisper import WhisperEngine
from witness.models.ggml import read_hparams


def _logged_mb(log: str, label: str) -> float:
    return float(re.search(re.escape(label) + r"\s*=\s*([\d.]+) MB", log).group(1))


def test_kv_caches_and_compute_buffers_are_what_whisper_cpp_allocates(tiny_en):
    engine = WhisperEngine(tiny_en.path)
    engine._load()
    log = engine.init_log
    hp, _ = read_hparams(tiny_en.path)
    dims = (hp.n_audio_state, hp.n_audio_layer, hp.n_text_state, hp.n_text_layer)
    kv_self, kv_cross, kv_pad = kv_caches(dims)
    assert kv_self / MB == pytest.approx(_logged_mb(log, "kv self size"), abs=0.01)
    assert kv_cross / MB == pytest.approx(_logged_mb(log, "kv cross size"), abs=0.01)
    assert kv_pad / MB == pytest.approx(_logged_mb(log, "kv pad  size"), abs=0.01)
    logged = sum(_logged_mb(log, f"compute buffer ({part})") for part in ("conv", "encode", "cross", "decode"))
    assert compute_buffers(hp.n_audio_state, hp.n_text_state) / MB == pytest.approx(logged, abs=0.05)
    need, source = whisper_need(str(tiny_en.path))  # a file: its size and header
    assert need / MB > _logged_mb(log, "model size") + logged and Path(tiny_en.path).name in source
    engine.close()
