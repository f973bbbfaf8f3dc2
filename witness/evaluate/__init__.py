"""Scoring: DER (der.py, several files: corpus.py), WER (wer.py), WDER (wder.py), STM (stm.py);
reference turns as what the models see, for measurements (oracle.py).

Names are imported on first use, so ``import witness.evaluate`` loads neither numpy nor scipy.
"""

from importlib import import_module
from typing import Any

_HOMES = {
    "CONVENTIONS": "witness.evaluate.conventions",
    "Convention": "witness.evaluate.conventions",
    "DerResult": "witness.evaluate.der",
    "diarization_error": "witness.evaluate.der",
    "AlignedPair": "witness.evaluate.wer",
    "WerResult": "witness.evaluate.wer",
    "align_words": "witness.evaluate.wer",
    "word_error_rate": "witness.evaluate.wer",
    "WderResult": "witness.evaluate.wder",
    "word_diarization_error": "witness.evaluate.wder",
    "normalize_words": "witness.textnorm",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'witness.evaluate' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
