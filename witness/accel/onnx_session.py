"""One ONNX Runtime session per model file, created on first use.

The execution provider and the thread count are parameters: the CPU is the default; a GPU
provider that fails falls back to the CPU with one warning (``witness.accel.providers``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from witness.accel.providers import ProviderChoice, first_line, open_session
from witness.errors import ModelError

CPU = ("CPUExecutionProvider",)


def as_choice(providers: ProviderChoice | Sequence[Any]) -> ProviderChoice:
    """A ProviderChoice as is, or one for the first of provider names (or (name, options) pairs)."""
    if isinstance(providers, ProviderChoice):
        return providers
    first = providers[0] if providers else "CPUExecutionProvider"
    name, options = (first if isinstance(first, tuple) else (first, {}))
    return ProviderChoice("model", name, "requested", int(options.get("device_id", 0)))


class LazySession:
    """An ``onnxruntime.InferenceSession`` for ``path``, built on first use (thread-safe).

    providers: a ProviderChoice, or provider names in order of preference (the first is
    used, the CPU is the fallback); threads: threads inside one operator (0: all cores);
    static_shapes: ((input name, shape), ...) pinned for MIGraphX's compiled-model cache.
    """

    def __init__(self, path: str | Path, providers: ProviderChoice | Sequence[Any] = CPU, threads: int = 0,
                 static_shapes: tuple[tuple[str, tuple[int, ...]], ...] | None = None):
        self.path = Path(path)
        self.choice = as_choice(providers)
        self.threads = int(threads)
        self.static_shapes = static_shapes
        self._session = None
        self._lock = threading.Lock()

    @property
    def session(self):
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._session = self._create()
        return self._session

    @property
    def provider(self) -> str:
        """The provider the session really runs on (creates the session)."""
        return self.session.get_providers()[0]

    def _create(self):
        if not self.path.is_file():
            raise ModelError("model file not found", self.path)
        try:
            return open_session(self.path, self.choice, self.threads, self.static_shapes)
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidProtobuf types
            raise ModelError(f"cannot load the model ({first_line(exc)}); delete it and fetch it again",
                             self.path) from None

    def input_names(self) -> list[str]:
        return [i.name for i in self.session.get_inputs()]

    def run(self, feeds: dict[str, np.ndarray], outputs: Sequence[str] | None = None) -> list[np.ndarray]:
        return self.session.run(None if outputs is None else list(outputs), feeds)
