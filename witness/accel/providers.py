"""Which ONNX Runtime execution provider each model runs on, and opening sessions with fallback.

``auto`` picks, per model, the best provider the installed ONNX Runtime build offers:
MIGraphX (``onnxruntime-migraphx``), ROCm, CUDA (``onnxruntime-gpu``), CoreML, then CPU.
Under MIGraphX the segmentation model stays on the CPU (its dynamic input compiles for
minutes there, and it is cheap on the CPU). If a provider fails to create or compile, the
model runs on the CPU with one warning line naming the provider and the reason.
"""

from __future__ import annotations

import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger(__name__)

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
MIGRAPHX = "MIGraphXExecutionProvider"
ROCM = "ROCMExecutionProvider"
COREML = "CoreMLExecutionProvider"
PREFERENCE = (MIGRAPHX, ROCM, CUDA, COREML, CPU)
NAMES = {"cpu": CPU, "cuda": CUDA, "migraphx": MIGRAPHX, "rocm": ROCM, "coreml": COREML}
GPU_PROVIDERS = frozenset({CUDA, MIGRAPHX, ROCM})
CPU_ON_MIGRAPHX = frozenset({"segmentation", "vad"})  # roles kept on the CPU under MIGraphX


def quiet_runtime() -> None:
    """ONNX Runtime's telemetry off (unless the environment says otherwise), for this process
    and the workers it starts: it keeps a device id in the user's cache and prints a coloured
    warning when it cannot (a read-only HOME); a transcriber of calls has no use for it."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


@dataclass(frozen=True)
class ProviderChoice:
    """The provider a model will use, and why."""

    role: str  # "segmentation", "embedding", "vad"
    provider: str
    reason: str
    device_id: int = 0

    @property
    def on_gpu(self) -> bool:
        return self.provider in GPU_PROVIDERS

    @property
    def short(self) -> str:
        return short_name(self.provider)

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.short, "reason": self.reason}


def available_providers() -> tuple[str, ...]:
    import onnxruntime as ort

    return tuple(ort.get_available_providers())


def choose_provider(role: str, requested: str = "auto", available: Sequence[str] | None = None,
                    device_id: int = 0) -> ProviderChoice:
    """The provider for a model of ``role``; ``requested`` is "auto" or a name in NAMES."""
    available = tuple(available if available is not None else available_providers())
    if requested != "auto":
        wanted = NAMES.get(requested.lower())
        if wanted is None:
            raise ValueError(f"unknown device {requested!r}; choose from auto, {', '.join(NAMES)}")
        if wanted in available:
            return ProviderChoice(role, wanted, f"{requested} requested", device_id)
        return ProviderChoice(role, CPU, f"{requested} requested but this onnxruntime build offers only "
                              f"{', '.join(short_name(p) for p in available)}; {INSTALL_HINT}", device_id)
    best = next((p for p in PREFERENCE if p in available), CPU)
    if best == MIGRAPHX and role in CPU_ON_MIGRAPHX:
        return ProviderChoice(role, CPU, "MIGraphX compiles its dynamic input for minutes; cheap on the CPU",
                              device_id)
    return ProviderChoice(role, best, "best provider this onnxruntime build offers", device_id)


INSTALL_HINT = "see the README (GPU set-up) for the onnxruntime wheel your GPU needs"


def short_name(provider: str) -> str:
    """"cuda" for CUDAExecutionProvider: the names --device takes and transcripts show."""
    return next((k for k, v in NAMES.items() if v == provider), provider)


# Options each GPU provider gets. CUDA: cuDNN picks each convolution's algorithm by its
# heuristics instead of timing every algorithm (the provider's default, EXHAUSTIVE), which it
# does again for every new input shape: CAM++ sees a new frame count in almost every call
# (rows share a call only when their kept-frame counts match; 1.00 rows per call on a
# 5-minute tiling of the sample call).
PROVIDER_OPTIONS = {CUDA: {"cudnn_conv_algo_search": "HEURISTIC"}}


def provider_list(choice: ProviderChoice, extra_options: dict[str, str] | None = None) -> list[Any]:
    """``providers=`` for an InferenceSession: the chosen one with its options, then CPU."""
    if choice.provider == CPU:
        return [CPU]
    options: dict[str, Any] = {"device_id": str(choice.device_id), **PROVIDER_OPTIONS.get(choice.provider, {})}
    options.update(extra_options or {})
    return [(choice.provider, options), CPU]


def open_session(path: str | Path, choice: ProviderChoice, threads: int = 0,
                 static_shapes: tuple[tuple[str, tuple[int, ...]], ...] | None = None):
    """An InferenceSession on ``choice``'s provider; on failure, a CPU session and one
    warning line. MIGraphX sessions with ``static_shapes`` go through the compiled cache."""
    import onnxruntime as ort

    severity = ort_log_severity()
    ort.set_default_logger_severity(severity)  # before the session: the provider set-up logs there

    def make(options: dict[str, str] | None = None, providers: list[Any] | None = None):
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(threads)
        so.inter_op_num_threads = 1
        so.log_severity_level = severity
        with warnings.catch_warnings():  # ORT's own "not in available providers" warning: we say it once
            warnings.simplefilter("ignore", UserWarning)
            return ort.InferenceSession(str(path), sess_options=so, providers=providers or provider_list(choice, options))

    if choice.provider == CPU:
        return make(providers=[CPU])
    try:
        if choice.provider == MIGRAPHX and static_shapes:
            session = _migraphx_cached(path, static_shapes, make)
        else:
            session = make()
    except Exception as exc:  # provider libraries raise their own exception types
        _warn_fallback(choice, path, first_line(exc))
        return make(providers=[CPU])
    if session.get_providers()[0] != choice.provider:
        _warn_fallback(choice, path, "the provider did not load (missing GPU libraries?)")
    return session


ORT_WARNING, ORT_ERROR = 2, 3  # ONNX Runtime's log severities


def ort_log_severity() -> int:
    """ONNX Runtime's own log level: its warnings only with ``--debug``, else errors only.

    Since 1.26 its Python binding looks for a plugin execution provider first whenever the
    options name a ``device_id``, and warns on its process-wide default logger ("No registered
    plugin EP device found for 'CUDAExecutionProvider' with device_id=0") before it creates the
    built-in provider that then runs the model: an alarm about nothing. Whether a model really
    runs on its provider is checked here (``open_session``) and said in one line of our own.
    """
    return ORT_WARNING if log.isEnabledFor(logging.DEBUG) else ORT_ERROR


def _migraphx_cached(path, static_shapes, make):
    import onnxruntime as ort

    from witness.accel import migraphx_cache as mc
    from witness.fileio import sha256_file

    key = mc.CacheKey(ort.__version__, mc.migraphx_version(), mc.gpu_arch(), sha256_file(path), static_shapes)
    return mc.open_cached(key, Path(path).name, lambda options: make(dict(options)))


def _warn_fallback(choice: ProviderChoice, path, reason: str) -> None:
    log.warning("%s could not run %s (%s); running it on the CPU", short_name(choice.provider), Path(path).name, reason)


def first_line(exc: BaseException) -> str:
    """An exception as one short line, for one-line errors and warnings."""
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
