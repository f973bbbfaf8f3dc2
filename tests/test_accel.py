"""Execution providers, the VRAM probe and the MIGraphX compile cache, without a GPU:
provider choice and fallback on the real ONNX Runtime, a faked NVML for the probe, and a
fake compile step under real file locking across processes."""

from __future__ import annotations

import logging
import multiprocessing
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

from witness.accel import migraphx_cache as mc
from witness.accel.providers import CPU, CUDA, MIGRAPHX, choose_provider, open_session
from witness.accel.vram import GIB, free_vram, probe_gpus


@pytest.mark.parametrize(
    "role, available, expected",
    [
        ("embedding", [MIGRAPHX, CPU], MIGRAPHX),
        ("segmentation", [MIGRAPHX, CPU], CPU),  # dynamic input: stays on the CPU
        ("segmentation", [CUDA, CPU], CUDA),
        ("embedding", ["ROCMExecutionProvider", CUDA, CPU], "ROCMExecutionProvider"),
        ("embedding", [CPU], CPU),
    ],
)
def test_auto_picks_the_best_provider_per_model(role, available, expected):
    assert choose_provider(role, "auto", available).provider == expected


def test_an_unavailable_provider_falls_back_to_cpu_with_a_reason():
    choice = choose_provider("embedding", "cuda", [CPU])
    assert choice.provider == CPU and "cuda requested" in choice.reason and "README" in choice.reason
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        choose_provider("embedding", "tpu", [CPU])


def test_a_provider_that_does_not_load_runs_on_cpu_with_one_warning(default_models, caplog, capfd):
    from witness.accel.providers import ProviderChoice

    choice = ProviderChoice("segmentation", CUDA, "forced for the test")  # not in this CPU build
    with caplog.at_level(logging.WARNING):
        session = open_session(default_models.segmentation, choice, threads=1)
    assert session.get_providers()[0] == CPU
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"cuda could not run {default_models.segmentation.name} (the provider did not load (missing "
                        "GPU libraries?)); running it on the CPU"]
    assert "plugin EP" not in capfd.readouterr().err  # ONNX Runtime's own false alarm stays quiet
    (y,) = session.run(None, {"x": np.zeros((1, 1, 160000), np.float32)})
    assert y.shape == (1, 589, 7)


def test_cuda_sessions_choose_convolutions_by_heuristics():
    """CAM++'s input length changes from call to call: no exhaustive cuDNN search per shape."""
    from witness.accel.providers import ProviderChoice, provider_list

    assert provider_list(ProviderChoice("embedding", CUDA, "test", 1)) == [
        (CUDA, {"device_id": "1", "cudnn_conv_algo_search": "HEURISTIC"}), CPU]
    assert provider_list(ProviderChoice("embedding", MIGRAPHX, "test"), {"k": "v"}) == [
        (MIGRAPHX, {"device_id": "0", "k": "v"}), CPU]


def test_onnx_runtime_warnings_show_with_debug_only(default_models, caplog, capfd):
    """With CUDA options ({"device_id": "0"}) ONNX Runtime warns "No registered plugin EP
    device found" on its default logger, on this CPU build as on onnxruntime-gpu (1.31.1
    there, 1.32 here): hidden unless --debug."""
    from witness.accel.providers import ProviderChoice

    choice = ProviderChoice("segmentation", CUDA, "forced for the test")
    with caplog.at_level(logging.DEBUG):
        open_session(default_models.segmentation, choice, threads=1)
    assert "No registered plugin EP device found for 'CUDAExecutionProvider'" in capfd.readouterr().err
    with caplog.at_level(logging.INFO):  # -v
        open_session(default_models.segmentation, choice, threads=1)
    assert "plugin EP" not in capfd.readouterr().err


def test_vram_probe_never_crashes_without_a_gpu(monkeypatch):
    def no_driver():
        raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", types.SimpleNamespace(nvmlInit=no_driver))
    monkeypatch.setitem(sys.modules, "pyamdgpuinfo", None)  # not installed
    gpus = probe_gpus()  # nothing, no exception
    assert gpus == () and free_vram(gpus) is None


def test_vram_probe_reads_nvml(monkeypatch):
    fake = types.SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None, nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: i, nvmlDeviceGetName=lambda h: b"NVIDIA H100",
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(total=80 * GIB, free=14 * GIB),
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    gpus = probe_gpus()
    assert gpus[0].name == "NVIDIA H100" and free_vram(gpus) == 14 * GIB


def _compile_or_load(root: str, log_path: str) -> None:
    """One process: ask the cache for a session; the fake compile takes a while."""

    def make_session(options):
        if "migraphx_save_model_path" in options:
            time.sleep(0.5)
            Path(options["migraphx_save_model_path"]).write_bytes(b"compiled program")
            action = "compiled"
        else:
            assert Path(options["migraphx_load_model_path"]).read_bytes() == b"compiled program"
            action = "loaded"
        with open(log_path, "a") as f:
            f.write(action + "\n")
        return action

    key = mc.CacheKey("1.31", "2.12", "gfx1100", "ab" * 32, (("mels", (32, 160, 40)),))
    mc.open_cached(key, "ge2e.onnx", make_session, root=Path(root))


def test_exactly_one_of_several_processes_compiles(tmp_path):
    log_path = tmp_path / "log"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_compile_or_load, args=(str(tmp_path / "cache"), str(log_path))) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert sorted(log_path.read_text().split()) == ["compiled", "loaded", "loaded", "loaded"]
    files = [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")]
    assert len(files) == 1 and files[0].startswith("ge2e-") and files[0].endswith(".mxr")


def test_cache_key_covers_everything_the_program_depends_on():
    base = mc.CacheKey("1.31", "2.12", "gfx1100", "ab" * 32, (("mels", (32, 160, 40)),))
    variants = [
        mc.CacheKey("1.32", "2.12", "gfx1100", "ab" * 32, base.input_shapes),
        mc.CacheKey("1.31", "2.13", "gfx1100", "ab" * 32, base.input_shapes),
        mc.CacheKey("1.31", "2.12", "gfx1030", "ab" * 32, base.input_shapes),
        mc.CacheKey("1.31", "2.12", "gfx1100", "cd" * 32, base.input_shapes),
        mc.CacheKey("1.31", "2.12", "gfx1100", "ab" * 32, (("mels", (16, 160, 40)),)),
    ]
    assert len({base.digest(), *(v.digest() for v in variants)}) == 6


def test_ge2e_on_migraphx_pins_its_shape_and_pads_the_tail(monkeypatch, tmp_path):
    """Faked provider probe: the embedder must ask for a pinned (8, 160, 40) input and pad."""
    from witness.diarize import embedding as emb

    calls = []

    class FakeSession:
        def __init__(self, path, providers, threads, static_shapes=None):
            from witness.accel.providers import ProviderChoice

            self.choice = ProviderChoice("embedding", MIGRAPHX, "test")
            self.static_shapes = static_shapes

        def run(self, feeds):
            calls.append(feeds["mels"].shape)
            return [np.ones((len(feeds["mels"]), 256), np.float32)]

    monkeypatch.setattr(emb, "LazySession", FakeSession)
    embedder = emb.GE2EEmbedder(tmp_path / "ge2e.onnx", providers=(MIGRAPHX,))
    assert embedder.batch_size == 8 and embedder.session.static_shapes == (("mels", (8, 160, 40)),)
    out = embedder.embed_partials(np.zeros((11, 160, 40), np.float32))
    assert out.shape == (11, 256) and calls == [(8, 160, 40), (8, 160, 40)]
