"""Free and total GPU memory per GPU: NVML on NVIDIA, pyamdgpuinfo on AMD.

Never raises: on a machine without a GPU, without a driver or without the library, the
probe simply finds nothing, and the caller treats free VRAM as unknown.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

GIB = 1 << 30


@dataclass(frozen=True)
class GpuMemory:
    index: int
    vendor: str  # "nvidia" | "amd"
    name: str
    total: int  # bytes
    free: int  # bytes

    def to_dict(self) -> dict:
        return {"index": self.index, "vendor": self.vendor, "name": self.name,
                "total_gib": round(self.total / GIB, 2), "free_gib": round(self.free / GIB, 2)}


def probe_gpus() -> tuple[GpuMemory, ...]:
    """Every GPU either library can see; empty when none (or when the probes fail)."""
    return _nvidia() + _amd()


def free_vram(gpus: tuple[GpuMemory, ...], index: int = 0) -> int | None:
    """Free bytes on GPU ``index`` (the one the engines use), None when unknown."""
    for gpu in gpus:
        if gpu.index == index:
            return gpu.free
    return None


def _nvidia() -> tuple[GpuMemory, ...]:
    try:
        import pynvml
    except ImportError:
        return ()
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, …
        log.debug("NVML unavailable: %s", exc)
        return ()
    try:
        found = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            name = pynvml.nvmlDeviceGetName(handle)
            found.append(GpuMemory(i, "nvidia", name.decode() if isinstance(name, bytes) else str(name),
                                   int(mem.total), int(mem.free)))
        return tuple(found)
    except Exception as exc:
        log.debug("NVML query failed: %s", exc)
        return ()
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _amd() -> tuple[GpuMemory, ...]:
    try:
        import pyamdgpuinfo
    except ImportError:
        return ()
    try:
        found = []
        for i in range(pyamdgpuinfo.detect_gpus()):
            gpu = pyamdgpuinfo.get_gpu(i)
            total = int(gpu.memory_info["vram_size"])
            used = int(gpu.query_vram_usage())
            found.append(GpuMemory(i, "amd", str(gpu.name or "AMD GPU"), total, max(0, total - used)))
        return tuple(found)
    except Exception as exc:
        log.debug("pyamdgpuinfo query failed: %s", exc)
        return ()
