"""Witness: speaker-labelled transcripts of recorded calls.

    import witness
    t = witness.transcribe("call.wav", num_speakers=2)
    print(t.at(75)[0])                      # At 01:15.0 SPEAKER_01 says "..."

``transcribe``, ``diarize``, ``enroll`` and ``Witness`` (models loaded once, for many
calls) take the command line's options by the same names (see the README, "Python API").
Importing this package does nothing heavy: no numpy, ONNX Runtime or whisper.cpp, no model
loads, no network, no logging set-up (the ``witness`` logger stays silent unless the caller
configures logging); they come with the first call.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from witness.errors import InputError, ModelError, ModelNotHere, UsageError, WitnessError

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())  # a library prints nothing by itself

# Public names and the module each comes from, imported on first use (PEP 562).
_LAZY = {
    "transcribe": "witness.api", "enroll": "witness.api", "Witness": "witness.api",
    "Transcript": "witness.document", "Quote": "witness.quote", "FileResult": "witness.run.flow",
    "Word": "witness.transcript", "Utterance": "witness.transcript", "Turn": "witness.transcript",
    "RunOptions": "witness.options", "Hook": "witness.progress", "WorkerDied": "witness.run.workers",
}

__all__ = ["__version__", "InputError", "ModelError", "ModelNotHere", "UsageError", "WitnessError", "diarize", *_LAZY]


def __getattr__(name: str) -> Any:
    if name == "diarize":  # the subpackage, callable as the API's function (witness/diarize/__init__.py)
        import importlib

        return importlib.import_module("witness.diarize")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'witness' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from witness.api import Witness, diarize, enroll, transcribe
    from witness.document import Transcript
    from witness.run.flow import FileResult
    from witness.options import RunOptions
    from witness.progress import Hook
    from witness.quote import Quote
    from witness.transcript import Turn, Utterance, Word
    from witness.run.workers import WorkerDied
