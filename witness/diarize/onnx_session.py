"""One ONNX Runtime session per model file, created on first use.

The execution providers and the thread count are parameters from the start: the CPU is the
default; the GPU issue passes CUDA or MIGraphX (with their options) per model.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from witness.errors import ModelError

CPU = ("CPUExecutionProvider",)


class LazySession:
    """An ``onnxruntime.InferenceSession`` for ``path``, built on first use (thread-safe).

    providers: execution providers in order of preference, each a name or a (name, options)
    pair; threads: threads inside one operator (0: ONNX Runtime chooses, i.e. all cores).
    """

    def __init__(self, path: str | Path, providers: Sequence[Any] = CPU, threads: int = 0):
        self.path = Path(path)
        self.providers = tuple(providers)
        self.threads = int(threads)
        self._session = None
        self._lock = threading.Lock()

    @property
    def session(self):
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._session = self._create()
        return self._session

    def _create(self):
        import onnxruntime as ort

        if not self.path.is_file():
            raise ModelError("model file not found", self.path)
        so = ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        try:
            return ort.InferenceSession(str(self.path), sess_options=so,
                                        providers=list(self.providers))
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidProtobuf types
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelError(f"cannot load the model ({first_line}); delete it and fetch it again",
                             self.path) from None

    def input_names(self) -> list[str]:
        return [i.name for i in self.session.get_inputs()]

    def output_names(self) -> list[str]:
        return [o.name for o in self.session.get_outputs()]

    def run(self, feeds: dict[str, np.ndarray], outputs: Sequence[str] | None = None) -> list[np.ndarray]:
        return self.session.run(None if outputs is None else list(outputs), feeds)
