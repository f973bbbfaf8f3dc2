"""Scoring: DER (der.py), WER (wer.py), WDER (wder.py), and the STM reader (stm.py)."""

from witness.evaluate.der import CONVENTIONS, Convention, DerResult, diarization_error
from witness.evaluate.wder import WderResult, word_diarization_error
from witness.evaluate.wer import AlignedPair, WerResult, align_words, word_error_rate
from witness.textnorm import normalize_words

__all__ = [
    "CONVENTIONS",
    "AlignedPair",
    "Convention",
    "DerResult",
    "WderResult",
    "WerResult",
    "align_words",
    "diarization_error",
    "normalize_words",
    "word_diarization_error",
    "word_error_rate",
]
