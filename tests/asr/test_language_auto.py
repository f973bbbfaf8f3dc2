"""``--language auto`` with the multilingual base model on real German speech (FLEURS, shipped
in tests/data/fleurs-de): the language is detected and the words are German."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from tests.conftest import REPO
from witness.audio import SAMPLE_RATE, load_audio, write_wav
from witness.cli import main
from witness.evaluate.wer import word_error_rate
from witness.textnorm import normalize_words

FLEURS_DE = REPO / "tests" / "data" / "fleurs-de"


def test_language_auto_detects_german_and_writes_german(base_model, cache_env, tmp_path):
    clips = sorted(FLEURS_DE.glob("*.ogg"))
    gap = np.zeros(SAMPLE_RATE // 2, np.float32)
    call = write_wav(tmp_path / "german.wav", np.concatenate([x for c in clips for x in (load_audio(c).samples, gap)]))
    reference = [w for c in clips for w in normalize_words(c.with_suffix(".txt").read_text())]
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["-q", str(call), "--model", "base", "--language", "auto", "--no-diarize",
                                       "--threads", "2", "-o", str(out), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    transcript = json.loads((out / "german.json").read_text())
    assert transcript["engines"]["asr"]["language"] == "de"
    said = normalize_words(" ".join(u["text"] for u in transcript["utterances"]))
    # measured: 15.8% (12 of 76 words: names like Kowloon and Mekka, "nötlich", "Sandbank")
    assert word_error_rate(reference, said).wer < 0.25
    assert {"höhle", "gegenüberliegenden", "lebensräume", "wildtiere"} <= set(said)
