"""Interval arithmetic for DER: which stretches of time are scored.

An interval is a ``(start, end)`` pair of float seconds; a *region list* is sorted,
disjoint and holds no empty interval. Empty (``end <= start``) intervals are dropped
everywhere.
"""

from __future__ import annotations

import bisect
from typing import Iterable, Sequence

from witness.transcript import Turn

Interval = tuple[float, float]


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """The region list covering exactly the union of ``intervals``."""
    out: list[Interval] = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def subtract(regions: Sequence[Interval], removed: Sequence[Interval]) -> list[Interval]:
    """``regions`` minus ``removed`` (both region lists)."""
    out: list[Interval] = []
    k = 0
    for start, end in regions:
        while k < len(removed) and removed[k][1] <= start:
            k += 1
        cursor, j = start, k
        while j < len(removed) and removed[j][0] < end:
            if removed[j][0] > cursor:
                out.append((cursor, removed[j][0]))
            cursor = max(cursor, removed[j][1])
            j += 1
        if cursor < end:
            out.append((cursor, end))
    return out


def extent(turns: Iterable[Turn]) -> list[Interval]:
    """One interval from the earliest start to the latest end (empty list for no turns).

    This is what pyannote.metrics scores when it is given no UEM: the extent of the
    reference and hypothesis together.
    """
    spans = [(t.start, t.end) for t in turns if t.end > t.start]
    if not spans:
        return []
    return [(min(s for s, _ in spans), max(e for _, e in spans))]


def collars(reference: Iterable[Turn], collar: float) -> list[Interval]:
    """``collar`` seconds either side of every reference turn's start and end."""
    if collar <= 0:
        return []
    return union(
        (t, u)
        for turn in reference
        if turn.end > turn.start
        for t, u in ((turn.start - collar, turn.start + collar), (turn.end - collar, turn.end + collar))
    )


def overlaps(reference: Iterable[Turn]) -> list[Interval]:
    """Where two or more reference turns are active at once (the same speaker twice counts)."""
    events = sorted(
        (time, delta)
        for turn in reference
        if turn.end > turn.start
        for time, delta in ((turn.start, 1), (turn.end, -1))
    )
    out: list[Interval] = []
    active, opened = 0, 0.0
    for time, delta in events:  # ends (-1) sort before starts (+1) at the same instant
        if delta > 0 and active == 1:
            opened = time
        if delta < 0 and active == 2:
            out.append((opened, time))
        active += delta
    return union(out)


def scored_regions(
    reference: Sequence[Turn],
    hypothesis: Sequence[Turn],
    collar: float = 0.0,
    skip_overlap: bool = False,
    uem: Sequence[Interval] | None = None,
) -> list[Interval]:
    """The region list DER is computed over.

    ``uem`` (default: the extent of reference and hypothesis together) minus a collar of
    ± ``collar`` seconds around each reference boundary, minus reference overlap when
    ``skip_overlap``.
    """
    base = union(uem) if uem is not None else extent([*reference, *hypothesis])
    removed = collars(reference, collar)
    if skip_overlap:
        removed = union([*removed, *overlaps(reference)])
    return subtract(base, removed)


def crop(turns: Iterable[Turn], regions: Sequence[Interval]) -> list[Turn]:
    """Every non-empty piece of each turn that falls inside ``regions`` (a region list)."""
    starts = [s for s, _ in regions]
    out: list[Turn] = []
    for turn in turns:
        k = max(0, bisect.bisect_right(starts, turn.start) - 1)
        while k < len(regions) and regions[k][0] < turn.end:
            start, end = max(turn.start, regions[k][0]), min(turn.end, regions[k][1])
            if end > start:
                out.append(Turn(start, end, turn.speaker))
            k += 1
    return out

