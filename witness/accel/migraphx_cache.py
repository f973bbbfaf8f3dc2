"""MIGraphX's compiled-model cache: compile once per key, even when many processes start together.

Compiling an ONNX model for MIGraphX takes tens of seconds; the compiled program (.mxr) can
be saved and loaded through the execution provider's options. The cache key is everything
the compiled program depends on: ONNX Runtime version, MIGraphX version, GPU architecture,
the model's sha256 and its (static) input shapes. Per key, a file lock makes exactly one
process compile while later comers wait and then load; the compiled file is written to a
temp name and renamed into place, so nobody ever loads half of one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from filelock import FileLock

from witness.fileio import publish, temp_beside
from witness.models.store import cache_dir

log = logging.getLogger(__name__)

LOCK_TIMEOUT = 30 * 60.0  # s: a compile slower than this is stuck, not slow


@dataclass(frozen=True)
class CacheKey:
    ort_version: str
    migraphx_version: str
    gpu_arch: str
    model_sha256: str
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...]  # (input name, static shape)

    def digest(self) -> str:
        text = json.dumps([self.ort_version, self.migraphx_version, self.gpu_arch,
                           self.model_sha256, [[n, list(s)] for n, s in self.input_shapes]])
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/witness/migraphx`` beside the models folder."""
    return cache_dir().parent / "migraphx"


def compiled_path(key: CacheKey, model_name: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / f"{Path(model_name).stem}-{key.digest()}.mxr"


def save_options(path: Path) -> dict[str, str]:
    """Provider options that compile and save the program to ``path``."""
    return {"migraphx_save_compiled_model": "1", "migraphx_save_model_path": str(path)}


def load_options(path: Path) -> dict[str, str]:
    """Provider options that load the compiled program from ``path``."""
    return {"migraphx_load_compiled_model": "1", "migraphx_load_model_path": str(path)}


def open_cached(
    key: CacheKey,
    model_name: str,
    make_session: Callable[[Mapping[str, str]], Any],
    root: Path | None = None,
    timeout: float = LOCK_TIMEOUT,
) -> Any:
    """``make_session(provider_options)`` with the compiled program loaded from the cache,
    or compiled into it by exactly one process per key (the others wait, then load)."""
    final = compiled_path(key, model_name, root)
    if final.is_file():
        return make_session(load_options(final))
    final.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(final) + ".lock", timeout=timeout):
        if final.is_file():  # someone compiled it while we waited
            log.info("loading compiled %s from %s", model_name, final)
            return make_session(load_options(final))
        tmp = temp_beside(final)
        tmp.unlink()  # the provider creates the file itself
        log.warning("compiling %s for MIGraphX once (tens of seconds); cached in %s", model_name, final.parent)
        try:
            session = make_session(save_options(tmp))
            if tmp.is_file() and tmp.stat().st_size > 0:
                publish(tmp, final)
        finally:
            if tmp.exists():
                os.unlink(tmp)
        return session


def gpu_arch() -> str:
    """The AMD GPU's gfx target (e.g. gfx1100) from the kernel's KFD topology, else "unknown"."""
    nodes = Path("/sys/class/kfd/kfd/topology/nodes")
    for props in sorted(nodes.glob("*/properties")) if nodes.is_dir() else []:
        for line in props.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "gfx_target_version" and value.strip() not in ("", "0"):
                v = int(value)
                return f"gfx{v // 10000}{(v // 100) % 100:x}{v % 100:x}"
    return "unknown"


def migraphx_version() -> str:
    """MIGraphX's version from its Python module or ROCm's install, else "unknown"."""
    try:
        import migraphx  # noqa: F401  (ships with ROCm's MIGraphX)

        return str(getattr(migraphx, "__version__", "installed"))
    except ImportError:
        pass
    for info in (Path("/opt/rocm/.info/version"), Path("/opt/rocm/.info/version-dev")):
        if info.is_file():
            return "rocm-" + info.read_text().strip()
    return "unknown"
