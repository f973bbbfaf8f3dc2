"""Plan decisions with injected probes: VRAM floor, unknown VRAM, CPU cores, thread split."""

from __future__ import annotations

import logging

import pytest

from witness.run.plan import GIB, EngineDevices, PlanOptions, ThreadSettings, make_plan

BOTH_GPU = EngineDevices(asr_gpu=True, diarization_gpu=True)
BOTH_CPU = EngineDevices(asr_gpu=False)


def test_short_vram_means_serial():
    plan = make_plan(BOTH_GPU, 3 * GIB, cores=8)
    assert plan.mode == "serial" and "3.0 GiB is under the 4 GiB floor" in plan.reasons[0]


def test_enough_vram_means_parallel():
    plan = make_plan(BOTH_GPU, 14 * GIB, cores=8)
    assert plan.mode == "parallel" and plan.free_vram_gib == 14.0


@pytest.mark.parametrize("default", ["serial", "parallel"])
def test_unknown_vram_takes_the_configured_default(default):
    plan = make_plan(BOTH_GPU, None, cores=8, options=PlanOptions(unknown_vram=default))
    assert plan.mode == default and "free VRAM unknown" in plan.reasons[0]


def test_the_floor_is_configurable_and_flags_win():
    assert make_plan(BOTH_GPU, 3 * GIB, 8, PlanOptions(min_free_vram_gib=2)).mode == "parallel"
    assert make_plan(BOTH_GPU, 14 * GIB, 8, PlanOptions(mode="serial")).mode == "serial"
    assert make_plan(BOTH_GPU, 1 * GIB, 8, PlanOptions(mode="parallel")).reasons[0] == "--parallel asked for"


def test_cpu_only_follows_the_measured_core_threshold():
    assert make_plan(BOTH_CPU, None, cores=2).mode == "serial"
    assert make_plan(BOTH_CPU, None, cores=16).mode == "parallel"


@pytest.mark.parametrize("cores", [1, 2, 3, 4, 8, 16])
def test_cpu_threads_never_oversubscribe(cores):
    plan = make_plan(BOTH_CPU, None, cores=cores)
    if plan.mode == "parallel":
        assert plan.whisper_threads + plan.onnx_threads <= cores
    else:
        assert plan.whisper_threads == cores  # one engine at a time: each may use every core
    assert plan.whisper_threads >= 1 and plan.onnx_threads >= 1


def test_plan_explains_itself_as_json():
    plan = make_plan(BOTH_GPU, 14 * GIB, cores=8).to_dict()
    assert plan["mode"] == "parallel" and plan["reasons"][-1].startswith("threads: whisper.cpp")


def test_an_engine_on_a_gpu_gets_few_cpu_threads():
    plan = make_plan(EngineDevices(asr_gpu=True), None, cores=16)
    assert plan.mode == "parallel" and plan.whisper_threads == 2 and plan.onnx_threads_per_model == 1


def test_threads_the_user_fixed_are_the_plans():
    plan = make_plan(BOTH_CPU, None, cores=16, fixed=ThreadSettings(whisper=3, onnx_per_model=4))
    assert (plan.whisper_threads, plan.onnx_threads_per_model, plan.onnx_threads) == (3, 4, 8)
    assert plan.reasons[-1] == "threads: whisper.cpp 3, ONNX Runtime 8 of 16 cores"


def test_the_floor_is_what_the_chosen_models_need():
    plan = make_plan(BOTH_GPU, 3 * GIB, cores=8, need_gib=2.2)
    assert plan.mode == "parallel" and plan.vram_floor_gib == 2.2
    assert "at least the 2.2 GiB floor (what the chosen models need" in plan.reasons[0]
    assert make_plan(BOTH_GPU, 3 * GIB, cores=8, need_gib=6.7).mode == "serial"


def test_unknown_need_keeps_the_default_floor_and_the_flag_wins():
    plan = make_plan(BOTH_GPU, 3 * GIB, cores=8, need_gib=None)
    assert plan.mode == "serial" and "under the 4 GiB floor (the default" in plan.reasons[0]
    plan = make_plan(BOTH_GPU, 80 * GIB, 8, PlanOptions(min_free_vram_gib=1000), need_gib=2.2)
    assert plan.mode == "serial" and "1000 GiB floor (--min-free-vram)" in plan.reasons[0]


def test_no_floor_unless_both_engines_share_the_gpu():
    assert make_plan(EngineDevices(asr_gpu=True), 1 * GIB, cores=8, need_gib=2.2).vram_floor_gib is None


@pytest.mark.parametrize("model, free_gib, mode", [("tiny.en", 3, "parallel"), ("large-v3", 3, "serial"),
                                                   ("large-v3", 8, "parallel"), ("my-import", 3, "serial")])
def test_the_plan_asks_what_the_chosen_whisper_model_needs(model, free_gib, mode):
    """The orchestrator's plan with injected probes: an H100-like GPU with ``free_gib`` free,
    whisper.cpp on Vulkan and both ONNX models on CUDA (an unknown model: the 4 GiB default)."""
    from dataclasses import replace

    from witness.accel.providers import CUDA, ProviderChoice
    from witness.accel.vram import GpuMemory
    from witness.accel.vram_need import estimate
    from witness.config import Settings
    from witness.run.placement import Devices, plan_for

    devices = Devices("vulkan", ProviderChoice("segmentation", CUDA, "test"), ProviderChoice("embedding", CUDA, "test"),
                      (GpuMemory(0, "nvidia", "NVIDIA H100", 80 * GIB, free_gib * GIB),))
    settings = Settings()
    plan = plan_for(replace(settings, asr=replace(settings.asr, model=model)), devices)
    assert plan.mode == mode
    decoders = max(settings.whisper.beam_size, settings.whisper.best_of)  # one self-attention cache each
    expected = estimate(model, decoders=decoders)
    assert plan.vram_floor_gib == (expected.floor_gib if expected else 4.0)


def test_more_threads_than_cores_are_capped_with_a_warning(caplog):
    """`--threads 1000` on 2 cores ran 19x slower without a word."""
    with caplog.at_level(logging.WARNING, logger="witness.run.plan"):
        plan = make_plan(BOTH_CPU, None, cores=2, options=PlanOptions(threads=1000))
    assert plan.whisper_threads == 2 and plan.reasons[-1] == "threads: whisper.cpp 2, ONNX Runtime 2 of 2 cores"
    assert caplog.messages == ["1000 threads asked for (--threads, [plan] threads), but this machine has 2 CPU "
                               "cores: using 2 (more threads than cores slow the engines down)"]
    caplog.clear()
    assert make_plan(BOTH_CPU, None, cores=2, options=PlanOptions(threads=1)).whisper_threads == 1
    assert caplog.messages == []
