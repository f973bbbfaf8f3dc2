"""Word error rate: Levenshtein alignment of reference and hypothesis words.

WER = (substitutions + deletions + insertions) / reference words. Words are compared as
given; run text through :func:`witness.textnorm.scoring_words` first (the CLI does).
When the reference is empty, WER is 0.0 if the hypothesis is empty too and 1.0 otherwise
(the convention pyannote.metrics uses for an empty DER reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

EditKind = Literal["hit", "substitution", "deletion", "insertion"]

# Back-pointer codes in the alignment table.
_DIAGONAL, _UP, _LEFT = 0, 1, 2


@dataclass(frozen=True)
class AlignedPair:
    """One step of an alignment. ``ref_index``/``hyp_index`` index the input sequences;
    a deletion has no hypothesis word (``hyp_index`` None), an insertion no reference word."""

    kind: EditKind
    ref_index: int | None
    hyp_index: int | None


@dataclass(frozen=True)
class WerResult:
    """Counts of one alignment; ``wer`` = (substitutions + deletions + insertions) / reference_words."""

    wer: float
    substitutions: int
    deletions: int
    insertions: int
    reference_words: int
    hits: int

    @property
    def hypothesis_words(self) -> int:
        return self.hits + self.substitutions + self.insertions


def align_words(reference: Sequence[str], hypothesis: Sequence[str]) -> tuple[AlignedPair, ...]:
    """A minimum-edit alignment of two word sequences (unit costs), in order.

    Among the alignments with the fewest edits it picks one with the fewest substitutions
    (most hits): ``a b c`` against ``a c x`` aligns ``c`` with ``c`` (one deletion, one
    insertion) rather than substituting twice. Remaining ties go to the diagonal, then a
    deletion, then an insertion. Memory is one byte per (reference word, hypothesis word)
    pair; time is O(len(reference) * len(hypothesis)).
    """
    back = _back_pointers(reference, hypothesis)
    pairs: list[AlignedPair] = []
    i, j = len(reference), len(hypothesis)
    while i > 0 or j > 0:
        step = back[i, j]
        if step == _DIAGONAL:
            kind: EditKind = "hit" if reference[i - 1] == hypothesis[j - 1] else "substitution"
            pairs.append(AlignedPair(kind, i - 1, j - 1))
            i, j = i - 1, j - 1
        elif step == _UP:
            pairs.append(AlignedPair("deletion", i - 1, None))
            i -= 1
        else:
            pairs.append(AlignedPair("insertion", None, j - 1))
            j -= 1
    return tuple(reversed(pairs))


def _back_pointers(reference: Sequence[str], hypothesis: Sequence[str]) -> np.ndarray:
    """Back-pointer table, shape (len(reference) + 1, len(hypothesis) + 1), uint8.

    Costs are lexicographic, edits first and substitutions second, folded into one
    integer: an edit costs ``step`` (more than the substitutions any alignment can hold)
    and a substitution one more. Row by row: the diagonal and up moves come from the
    previous row; the left moves (insertions) are a running minimum,
    cost[j] = j * step + min_{k<=j}(candidate[k] - k * step).
    """
    n, m = len(reference), len(hypothesis)
    step = n + m + 1
    vocabulary: dict[str, int] = {}
    ref_ids = np.array([vocabulary.setdefault(w, len(vocabulary)) for w in reference], dtype=np.int64)
    hyp_ids = np.array([vocabulary.setdefault(w, len(vocabulary)) for w in hypothesis], dtype=np.int64)
    back = np.empty((n + 1, m + 1), dtype=np.uint8)
    back[0, :] = _LEFT
    back[:, 0] = _UP
    columns = np.arange(m + 1, dtype=np.int64) * step
    previous = columns.copy()
    for i in range(1, n + 1):
        diagonal = previous[:-1] + (hyp_ids != ref_ids[i - 1]) * (step + 1)
        up = previous[1:] + step
        candidate = np.empty(m + 1, dtype=np.int64)
        candidate[0] = i * step
        candidate[1:] = np.minimum(diagonal, up)
        current = columns + np.minimum.accumulate(candidate - columns)
        row = np.full(m, _LEFT, dtype=np.uint8)
        row[current[1:] == up] = _UP
        row[current[1:] == diagonal] = _DIAGONAL
        back[i, 1:] = row
        previous = current
    return back


def word_error_rate(reference_words: Sequence[str], hypothesis_words: Sequence[str]) -> WerResult:
    """WER and its parts for two word sequences (already normalised)."""
    return wer_from_alignment(align_words(reference_words, hypothesis_words))


def wer_from_alignment(pairs: Sequence[AlignedPair]) -> WerResult:
    """Count the edits of an alignment from :func:`align_words`."""
    counts = {"hit": 0, "substitution": 0, "deletion": 0, "insertion": 0}
    for pair in pairs:
        counts[pair.kind] += 1
    n_ref = counts["hit"] + counts["substitution"] + counts["deletion"]
    errors = counts["substitution"] + counts["deletion"] + counts["insertion"]
    if n_ref:
        wer = errors / n_ref
    else:
        wer = 0.0 if errors == 0 else 1.0
    return WerResult(
        wer=wer,
        substitutions=counts["substitution"],
        deletions=counts["deletion"],
        insertions=counts["insertion"],
        reference_words=n_ref,
        hits=counts["hit"],
    )
