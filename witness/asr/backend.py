"""Which compute backend the loaded whisper.cpp has, and which device it runs on.

PyPI's pywhispercpp wheel is CPU-only; one built from source with ``GGML_VULKAN=1`` (or CUDA,
Metal) also registers a GPU backend. Two views, merged into ``AsrBackendInfo``:

* what whisper.cpp logs while it loads a model (captured through the bindings' log hook):
  ``whisper_backend_init_gpu: using Vulkan0 backend`` (or ``no GPU found``), the device
  list ggml prints (``ggml_vulkan: 0 = <name> | ...``, CUDA's ``Device 0: <name>, ...``), and
  ``whisper_model_load: Vulkan0 total size = ...``;
* the ggml backend registry itself (``ggml_backend_dev_*`` read with ctypes from the ggml
  library already loaded into this process), which needs no model.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from pathlib import Path

GPU_PREFIXES = ("Vulkan", "CUDA", "Metal", "ROCm", "HIP", "SYCL", "OpenCL", "MUSA", "CANN")
_USING = re.compile(r"whisper_backend_init_gpu: using (\S+) backend")
_VK_DEVICE = re.compile(r"ggml_vulkan: (\d+) = ([^|\n]+?)\s*(?:\||$)", re.M)
_CUDA_DEVICE = re.compile(r"^\s*Device (\d+): ([^,\n]+)", re.M)
_REGISTERED = re.compile(r"register_device: registered device (\S+) \(([^)\n]*)\)")
_LOADED = re.compile(r"whisper_model_load:\s+(\S+) total size")


@dataclass(frozen=True)
class AsrBackendInfo:
    """``backends``: compiled-in ggml devices (name -> description); ``gpu_device`` the one used."""

    version: str  # pywhispercpp's version
    backends: tuple[tuple[str, str], ...]
    gpu_backend: str | None  # e.g. "Vulkan0", None when whisper.cpp runs on the CPU
    gpu_device: str | None  # e.g. "NVIDIA H100 80GB HBM3"


def parse_init_log(text: str) -> tuple[str | None, str | None, dict[str, str]]:
    """(GPU backend used, its device description, devices named in the log) from a load log."""
    devices: dict[str, str] = {}
    for index, desc in _VK_DEVICE.findall(text):
        devices[f"Vulkan{index}"] = desc.strip()
    if "ggml_cuda_init" in text:
        for index, desc in _CUDA_DEVICE.findall(text):
            devices[f"CUDA{index}"] = desc.strip()
    for name, desc in _REGISTERED.findall(text):
        devices.setdefault(name, desc.strip())
    used = _USING.findall(text)
    backend = used[-1] if used else None
    if backend is None:  # older logs only name the buffer the weights went to
        loaded = [b for b in _LOADED.findall(text) if b.startswith(GPU_PREFIXES)]
        backend = loaded[-1] if loaded else None
    return backend, devices.get(backend) if backend else None, devices


_GPU_LIBRARY = re.compile(r"libggml-(vulkan|cuda|metal|hip|sycl|opencl|musa|cann)\b", re.I)


def gpu_backend_libraries() -> tuple[str, ...]:
    """GPU backends the installed whisper.cpp was built with ("vulkan", "cuda", …), from the
    library files beside the bindings: nothing is loaded, so no GPU driver starts in this
    process (the engine's own worker process is the one that touches the GPU)."""
    import importlib.util

    spec = importlib.util.find_spec("_pywhispercpp")
    if spec is None or not spec.origin:
        return ()
    here = Path(spec.origin).parent
    folders = [here, here / "pywhispercpp.libs", here / "pywhispercpp" / "libs"]
    names = [p.name for folder in folders if folder.is_dir() for p in folder.iterdir()]
    return tuple(dict.fromkeys(m.group(1).lower() for n in names if (m := _GPU_LIBRARY.search(n))))


def registry_devices() -> tuple[tuple[str, str], ...]:
    """(name, description) of every device in the ggml backend registry of this process."""
    libs = _loaded_ggml_libraries()
    if not libs:
        return ()
    try:
        funcs = {}
        for lib in libs:
            for fn in ("ggml_backend_dev_count", "ggml_backend_dev_get", "ggml_backend_dev_name",
                       "ggml_backend_dev_description"):
                if fn not in funcs and hasattr(lib, fn):
                    funcs[fn] = getattr(lib, fn)
        funcs["ggml_backend_dev_count"].restype = ctypes.c_size_t
        funcs["ggml_backend_dev_get"].restype = ctypes.c_void_p
        funcs["ggml_backend_dev_get"].argtypes = [ctypes.c_size_t]
        for fn in ("ggml_backend_dev_name", "ggml_backend_dev_description"):
            funcs[fn].restype = ctypes.c_char_p
            funcs[fn].argtypes = [ctypes.c_void_p]
    except KeyError:
        return ()
    out = []
    for i in range(funcs["ggml_backend_dev_count"]()):
        dev = funcs["ggml_backend_dev_get"](i)
        out.append((_text(funcs["ggml_backend_dev_name"](dev)), _text(funcs["ggml_backend_dev_description"](dev))))
    return tuple(out)


def _text(raw: bytes | None) -> str:
    return (raw or b"").decode("utf-8", "replace").strip()


def _loaded_ggml_libraries() -> list[ctypes.CDLL]:
    """The ggml shared libraries the whisper.cpp bindings brought into this process (Linux)."""
    import _pywhispercpp  # noqa: F401  (loads libwhisper and libggml*)

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    paths = sorted({line.split()[-1] for line in maps.splitlines()
                    if re.search(r"/libggml[^/]*\.so", line)})
    libs = []
    for path in paths:
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return libs


def backend_info(init_log: str = "") -> AsrBackendInfo:
    """What this process's whisper.cpp can use, plus what ``init_log`` (a model load) says it used."""
    try:
        from importlib.metadata import version

        pkg_version = version("pywhispercpp")
    except Exception:  # noqa: BLE001 - metadata may be missing in odd installs
        pkg_version = "unknown"
    registry = registry_devices()
    gpu_backend, gpu_device, logged = parse_init_log(init_log)
    backends = dict(registry) or logged
    return AsrBackendInfo(version=pkg_version, backends=tuple(backends.items()), gpu_backend=gpu_backend,
                          gpu_device=gpu_device or (backends.get(gpu_backend) if gpu_backend else None))
