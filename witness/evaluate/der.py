"""Diarization error rate (DER) with its parts, as md-eval, dscore and pyannote.metrics score it.

Within the scored regions (:func:`witness.evaluate.regions.scored_regions`: the UEM, or
by default the extent of reference and hypothesis together, minus collars and, if asked,
reference overlap), time is cut wherever any turn starts or ends. In each slice of
duration d, with N_ref reference and N_hyp hypothesis speakers active and N_correct
hypothesis speakers mapped onto an active reference speaker:

    missed      += d * max(0, N_ref - N_hyp)
    false_alarm += d * max(0, N_hyp - N_ref)
    confusion   += d * (min(N_ref, N_hyp) - N_correct)
    total       += d * N_ref

DER = (missed + false_alarm + confusion) / total; with no reference speech (total 0) it
is 0.0 without errors and 1.0 with some, as in pyannote.metrics. The mapping is one-to-one and maximises the co-occurrence time of mapped
pairs (Hungarian method); hypothesis speakers left unmapped are always wrong.

``collar`` is ± seconds around every reference boundary (md-eval, dscore); note that
pyannote.metrics' ``collar`` is the total width, so collar=0.25 here is its collar=0.5.
The published conventions (strict, paper, lenient) are in ``conventions.py``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence


from witness.evaluate.mapping import optimal_mapping
from witness.evaluate.regions import Interval, crop, scored_regions
from witness.transcript import Turn


@dataclass(frozen=True)
class DerResult:
    """DER and its parts, in seconds of speaker time; ``mapping`` is hypothesis → reference label."""

    der: float
    missed: float
    false_alarm: float
    confusion: float
    total: float
    mapping: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Slice:
    """A stretch of time with constant activity: speaker label → number of active turns."""

    duration: float
    reference: Mapping[str, int]
    hypothesis: Mapping[str, int]


def diarization_error(
    reference: Sequence[Turn],
    hypothesis: Sequence[Turn],
    collar: float = 0.0,
    skip_overlap: bool = False,
    uem: Sequence[Interval] | None = None,
) -> DerResult:
    """DER of ``hypothesis`` turns against ``reference`` turns for one recording.

    ``uem``: the (start, end) regions to score; None scores the extent of both.
    """
    regions = scored_regions(reference, hypothesis, collar, skip_overlap, uem)
    slices = _slices(crop(reference, regions), crop(hypothesis, regions))
    mapping = optimal_mapping(_cooccurrence(slices))
    missed = false_alarm = confusion = total = 0.0
    for piece in slices:
        n_ref = sum(piece.reference.values())
        n_hyp = sum(piece.hypothesis.values())
        mapped: Counter[str] = Counter()
        for label, count in piece.hypothesis.items():
            if label in mapping:
                mapped[mapping[label]] += count
        correct = sum(min(count, mapped[label]) for label, count in piece.reference.items())
        missed += piece.duration * max(0, n_ref - n_hyp)
        false_alarm += piece.duration * max(0, n_hyp - n_ref)
        confusion += piece.duration * (min(n_ref, n_hyp) - correct)
        total += piece.duration * n_ref
    return _result(missed, false_alarm, confusion, total, mapping)


def combine(results: Sequence[DerResult]) -> DerResult:
    """The DER of several recordings: parts summed over them, as md-eval does (no mapping)."""
    return _result(
        sum(r.missed for r in results),
        sum(r.false_alarm for r in results),
        sum(r.confusion for r in results),
        sum(r.total for r in results),
        {},
    )


def _result(missed: float, false_alarm: float, confusion: float, total: float, mapping: Mapping[str, str]) -> DerResult:
    errors = missed + false_alarm + confusion
    der = errors / total if total > 0 else (0.0 if errors == 0 else 1.0)
    return DerResult(der, missed, false_alarm, confusion, total, dict(mapping))


def _slices(reference: Sequence[Turn], hypothesis: Sequence[Turn]) -> list[_Slice]:
    """Cut time at every turn boundary; keep the slices where someone speaks."""
    events = sorted(
        (time, side, turn.speaker, delta)
        for side, turns in ((0, reference), (1, hypothesis))
        for turn in turns
        for time, delta in ((turn.start, 1), (turn.end, -1))
    )
    active: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
    slices: list[_Slice] = []
    for k, (time, side, speaker, delta) in enumerate(events):
        active[side][speaker] += delta
        if k + 1 == len(events) or events[k + 1][0] == time:
            continue  # apply every event at this instant before cutting
        ref = {s: n for s, n in active[0].items() if n > 0}
        hyp = {s: n for s, n in active[1].items() if n > 0}
        if ref or hyp:
            slices.append(_Slice(events[k + 1][0] - time, ref, hyp))
    return slices


def _cooccurrence(slices: Sequence[_Slice]) -> Counter[tuple[str, str]]:
    """Seconds each (hypothesis, reference) pair of labels is active together."""
    together: Counter[tuple[str, str]] = Counter()
    for piece in slices:
        for h, nh in piece.hypothesis.items():
            for r, nr in piece.reference.items():
                together[h, r] += piece.duration * nh * nr
    return together
