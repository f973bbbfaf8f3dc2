"""Word diarization error rate (WDER): the share of words given to the wrong speaker.

Definition used here:

1. Reference words (each carrying its utterance's speaker) and hypothesis words (each
   carrying the speaker the transcript gave it, None when unattributed) are aligned by the
   same Levenshtein alignment as WER (:func:`witness.evaluate.wer.align_words`).
2. Only aligned pairs count: hits and substitutions. Deleted and inserted words have no
   partner, so they are WER's business, not WDER's.
3. Over the aligned pairs, a co-occurrence table counts (reference speaker, hypothesis
   speaker); the optimal one-to-one mapping (Hungarian method, maximising the mapped
   counts) pairs hypothesis labels with reference labels.
4. A pair is wrong when its hypothesis speaker is unattributed, unmapped, or mapped to
   another reference speaker. WDER = wrong / aligned (0.0 when nothing is aligned).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence


from witness.evaluate.mapping import optimal_mapping
from witness.evaluate.wer import AlignedPair, WerResult, align_words, wer_from_alignment
from witness.evaluate.words import SpeakerWord, with_digits


@dataclass(frozen=True)
class WderResult:
    """``wrong`` of ``aligned`` word pairs carry the wrong speaker; ``unattributed`` of the
    wrong ones had no hypothesis speaker; ``mapping`` is hypothesis → reference label."""

    wder: float
    wrong: int
    aligned: int
    unattributed: int
    mapping: Mapping[str, str] = field(default_factory=dict)


def word_diarization_error(
    reference: Sequence[SpeakerWord],
    hypothesis: Sequence[SpeakerWord],
    alignment: Sequence[AlignedPair] | None = None,
) -> WderResult:
    """WDER of ``hypothesis`` against ``reference`` (see the module docstring).

    ``alignment`` may pass an alignment of the two word texts already computed (for
    instance for WER) so the quadratic alignment runs once.
    """
    if alignment is None:
        alignment = align_words([w.text for w in reference], [w.text for w in hypothesis])
    pairs = [
        (reference[p.ref_index].speaker, hypothesis[p.hyp_index].speaker)
        for p in alignment
        if p.ref_index is not None and p.hyp_index is not None
    ]
    mapping = optimal_mapping(Counter((h, r) for r, h in pairs if h is not None and r is not None))
    wrong = sum(1 for r, h in pairs if h is None or mapping.get(h) != r)
    unattributed = sum(1 for _, h in pairs if h is None)
    return WderResult(
        wder=wrong / len(pairs) if pairs else 0.0,
        wrong=wrong,
        aligned=len(pairs),
        unattributed=unattributed,
        mapping=mapping,
    )


def score_words(reference: Sequence[SpeakerWord], hypothesis: Sequence[SpeakerWord],
                digits: str = "joined") -> tuple[WerResult, WderResult]:
    """WER and WDER of two speaker-labelled word sequences, from one alignment; ``digits``
    "each" counts every digit of a digit run as a word (``words.with_digits``)."""
    reference, hypothesis = with_digits(reference, digits), with_digits(hypothesis, digits)
    alignment = align_words([w.text for w in reference], [w.text for w in hypothesis])
    return wer_from_alignment(alignment), word_diarization_error(reference, hypothesis, alignment)
