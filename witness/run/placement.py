"""Where the engines run: each engine's device (decided without touching a GPU in this
process) and the plan that follows from it (``witness.run.plan``: parallel or serial, threads)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from witness.accel.providers import ProviderChoice, available_providers, choose_provider
from witness.accel.vram import GpuMemory, free_vram, probe_gpus
from witness.accel.vram_need import VramNeed, estimate
from witness.asr.backend import gpu_backend_libraries
from witness.config import Settings
from witness.run.plan import EngineDevices, Plan, ThreadSettings, make_plan


@dataclass(frozen=True)
class Devices:
    """What each engine runs on (decided without touching a GPU in this process)."""

    asr_gpu_backend: str | None  # "vulkan", "cuda", … when whisper.cpp has one and may use it
    segmentation: ProviderChoice
    embedding: ProviderChoice
    gpus: tuple[GpuMemory, ...]

    def for_plan(self) -> EngineDevices:
        return EngineDevices(
            asr_gpu=self.asr_gpu_backend is not None,
            diarization_gpu=self.segmentation.on_gpu or self.embedding.on_gpu,
        )


def find_devices(settings: Settings, gpus: tuple[GpuMemory, ...] | None = None,
                 providers: tuple[str, ...] | None = None) -> Devices:
    """Where the engines would run with ``settings``: probes are injectable for tests."""
    gpus = probe_gpus() if gpus is None else gpus
    providers = available_providers() if providers is None else providers
    asr_gpu = None
    if settings.whisper.use_gpu:
        libraries = gpu_backend_libraries()
        asr_gpu = libraries[0] if libraries else None
    d = settings.diarization
    return Devices(
        asr_gpu_backend=asr_gpu,
        segmentation=choose_provider("segmentation", d.segmentation_device, providers),
        embedding=choose_provider("embedding", d.embedding_device, providers),
        gpus=gpus,
    )


def plan_for(settings: Settings, devices: Devices, cores: int | None = None) -> Plan:
    """The plan for a machine of ``cores`` CPU cores (default: this one's)."""
    fixed = ThreadSettings(settings.whisper.threads, settings.diarization.threads)
    need = vram_need(settings, devices)
    return make_plan(devices.for_plan(), free_vram(devices.gpus, settings.whisper.gpu_device),
                     cores or os.cpu_count() or 1, settings.plan, fixed, need.floor_gib if need else None)


def vram_need(settings: Settings, devices: Devices) -> VramNeed | None:
    """What the chosen models need on a GPU side by side (None: the Whisper model's size is
    unknown). With no diarization model on a GPU provider (a CPU machine) both count, as a
    GPU would run them; with one there (segmentation stays on the CPU under MIGraphX) only it."""
    d, w = settings.diarization, settings.whisper
    seg, emb = devices.segmentation.on_gpu, devices.embedding.on_gpu
    return estimate(settings.asr.model, d.segmentation, d.embedding, d.embedding_batch_size,
                    max(w.beam_size, w.best_of), seg or not emb, emb or not seg)
