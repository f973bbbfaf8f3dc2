"""Reference (human) turns turned into what the models see: where each speaker talks alone,
cut into pieces, and per-window frame masks. For evaluation and measurement, not inference."""

from __future__ import annotations

import numpy as np

from witness.evaluate.regions import subtract, union
from witness.transcript import Turn


def solo_intervals(turns: list[Turn]) -> dict[str, list[tuple[float, float]]]:
    """Per speaker, the sorted (start, end) stretches where that speaker talks and nobody else."""
    out: dict[str, list[tuple[float, float]]] = {}
    for speaker in sorted({t.speaker for t in turns}):
        mine = union((t.start, t.end) for t in turns if t.speaker == speaker)
        others = union((t.start, t.end) for t in turns if t.speaker != speaker)
        out[speaker] = subtract(mine, others)
    return out


def cut_pieces(intervals: list[tuple[float, float]], min_length: float,
               max_length: float) -> list[tuple[float, float]]:
    """Cut each interval into consecutive pieces of ``max_length`` seconds; a remainder of at
    least ``min_length`` stays a piece, a shorter one (or a shorter interval) is dropped."""
    pieces = []
    for start, end in intervals:
        while end - start >= min_length:
            pieces.append((start, min(end, start + max_length)))
            start += max_length
    return pieces


def alone_mask(turns: list[Turn], speaker: str, start: float, num_frames: int,
               frame_step: float, frame_size: float) -> np.ndarray:
    """(num_frames,) float32: 1 where ``speaker`` talks alone at the centre of each frame of a
    window starting at ``start`` seconds (frame j spans [start + j*step, + size))."""
    centres = start + frame_size / 2 + frame_step * np.arange(num_frames)
    mask = np.zeros(num_frames, dtype=bool)
    for s, e in solo_intervals(turns).get(speaker, []):
        mask |= (centres >= s) & (centres < e)
    return mask.astype(np.float32)
