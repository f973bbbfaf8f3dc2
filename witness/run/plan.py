"""The plan: run Whisper and diarization side by side, or one after the other, and with how
many CPU threads each. A pure function of what the engines run on, free VRAM and the
machine, so every decision is testable with injected probes and explained in ``reasons``
(more threads asked for than the machine has cores are capped, with a warning).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

GIB = 1 << 30


@dataclass(frozen=True)
class PlanOptions:
    """``[plan]`` settings."""

    mode: str = "auto"  # "auto", "parallel" or "serial" (--parallel / --serial)
    min_free_vram_gib: float = 0.0  # below this much free VRAM the engines take turns; 0: what the models need
    unknown_vram: str = "serial"  # what to do when free VRAM cannot be read
    cpu_parallel_min_cores: int = 4  # both engines on the CPU: side by side only from this many cores
    threads: int = 0  # CPU threads in all (0: every core)


@dataclass(frozen=True)
class EngineDevices:
    """Whether each engine runs on a GPU (whisper.cpp's backend; any ONNX model's provider)."""

    asr_gpu: bool
    diarization_gpu: bool = False


@dataclass(frozen=True)
class ThreadSettings:
    """Thread counts the user fixed (0: the plan chooses): ``[whisper] threads`` and
    ``[diarization] threads`` (per ONNX model)."""

    whisper: int = 0
    onnx_per_model: int = 0


@dataclass(frozen=True)
class Plan:
    """mode: "parallel" or "serial". whisper_threads: whisper.cpp's CPU threads;
    onnx_threads_per_model: intra-op threads of each ONNX model (segmentation and embedding
    run side by side, so diarization uses twice that). The workers use exactly these."""

    mode: str
    reasons: tuple[str, ...]
    whisper_threads: int
    onnx_threads_per_model: int
    free_vram_gib: float | None = None
    vram_floor_gib: float | None = None  # the free VRAM side by side asks for (None: no GPU pair)

    @property
    def onnx_threads(self) -> int:
        """ONNX Runtime threads in all (both models)."""
        return DIARIZATION_STAGES * self.onnx_threads_per_model

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "reasons": list(self.reasons), "whisper_threads": self.whisper_threads,
                "onnx_threads": self.onnx_threads, "free_vram_gib": self.free_vram_gib,
                "vram_floor_gib": self.vram_floor_gib}


DEFAULT_FLOOR_GIB = 4.0  # free VRAM side by side asks for when what the models need is unknown


def make_plan(devices: EngineDevices, free_vram: int | None, cores: int, options: PlanOptions = PlanOptions(),
              fixed: ThreadSettings = ThreadSettings(), need_gib: float | None = None) -> Plan:
    """Decide parallel or serial (with reasons) and split the CPU threads between the engines
    (``fixed`` counts are taken as they are). ``need_gib``: free VRAM the chosen models need
    side by side, margin included (``witness.accel.vram_need``); None when unknown."""
    if options.threads > cores:
        log.warning("%d threads asked for (--threads, [plan] threads), but this machine has %d CPU cores: "
                    "using %d (more threads than cores slow the engines down)", options.threads, cores, cores)
    cores = max(1, min(options.threads or cores, cores))
    floor = vram_floor(options, need_gib) if devices.asr_gpu and devices.diarization_gpu else None
    mode, reasons = _mode(devices, free_vram, cores, options, floor)
    per_model = fixed.onnx_per_model or ONNX_THREADS_PER_MODEL
    whisper_threads = fixed.whisper or _whisper_threads(mode, devices.asr_gpu, cores, DIARIZATION_STAGES * per_model)
    reasons.append(f"threads: whisper.cpp {whisper_threads}, ONNX Runtime {DIARIZATION_STAGES * per_model} "
                   f"of {cores} cores")
    vram = None if free_vram is None else round(free_vram / GIB, 2)
    return Plan(mode, tuple(reasons), whisper_threads, per_model, vram, floor[0] if floor else None)


def vram_floor(options: PlanOptions, need_gib: float | None) -> tuple[float, str]:
    """(GiB of free VRAM side by side asks for, where that figure comes from)."""
    if options.min_free_vram_gib > 0:
        return options.min_free_vram_gib, "--min-free-vram"
    if need_gib is not None:
        return need_gib, "what the chosen models need, see witness doctor"
    return DEFAULT_FLOOR_GIB, "the default: what the models need is unknown"


def _mode(devices: EngineDevices, free_vram: int | None, cores: int, options: PlanOptions,
          floor: tuple[float, str] | None) -> tuple[str, list[str]]:
    if options.mode in ("serial", "parallel"):
        return options.mode, [f"--{options.mode} asked for"]
    if floor is not None:  # both engines on the GPU
        if free_vram is None:
            return options.unknown_vram, [f"free VRAM unknown: {options.unknown_vram} (the [plan] unknown_vram setting)"]
        gib, (need, why) = free_vram / GIB, floor
        if gib < need:
            return "serial", [f"free VRAM {gib:.1f} GiB is under the {need:g} GiB floor ({why}): the engines take turns"]
        return "parallel", [f"free VRAM {gib:.1f} GiB is at least the {need:g} GiB floor ({why}): both engines on "
                            "the GPU at once"]
    if devices.asr_gpu or devices.diarization_gpu:
        return "parallel", ["one engine on the GPU, the other on the CPU: they do not compete"]
    if cores < options.cpu_parallel_min_cores:
        return "serial", [f"both engines on {cores} CPU cores: below {options.cpu_parallel_min_cores} cores side by "
                          "side was no faster (0.99x on 2 cores, scripts/bench_plan.py) and one after the other "
                          "holds one model in memory at a time"]
    return "parallel", [f"both engines on the CPU with {cores} cores: side by side, cores split"]


DIARIZATION_STAGES = 2  # segmentation and embedding run side by side
# One thread per ONNX model was fastest on the CPU (scripts/bench_diarize_pipeline.py); a
# model on a GPU provider needs no more than one CPU thread to feed it.
ONNX_THREADS_PER_MODEL = 1
GPU_WHISPER_THREADS = 2  # whisper.cpp on a GPU backend: the CPU only feeds it


def _whisper_threads(mode: str, gpu: bool, cores: int, onnx: int) -> int:
    """whisper.cpp's threads: two on a GPU; on the CPU every core when the engines take
    turns, and the cores diarization leaves when they run side by side."""
    if gpu:
        return min(GPU_WHISPER_THREADS, cores)
    return cores if mode == "serial" else max(1, cores - onnx)
