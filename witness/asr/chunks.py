"""Cut long audio into pieces at quiet moments, so whisper.cpp's memory stays flat.

whisper.cpp computes the log-mel spectrogram of everything it is handed before decoding
(80 or 128 float32 per 10 ms: 345 MB for 3 hours of audio with 80 mels). Handing it pieces
of at most ``max_seconds`` (numpy views, never copies) bounds that. Each cut is placed at the
quietest 100 ms in the last ``search_seconds`` before the limit, so words are rarely split.
"""

from __future__ import annotations

import numpy as np

FRAME_SECONDS = 0.1
SEARCH_SECONDS = 30.0  # a cut is sought in this much audio before each piece's limit


def chunk_spans(audio: np.ndarray, sample_rate: int, max_seconds: float) -> list[tuple[int, int]]:
    """Sample ranges [start, end) covering ``audio`` (shape (samples,)) in order, none longer
    than ``max_seconds`` (a ``max_seconds`` <= 0 means one piece)."""
    n = len(audio)
    limit = int(max_seconds * sample_rate)
    if limit <= 0 or n <= limit:
        return [(0, n)]
    frame = max(1, int(FRAME_SECONDS * sample_rate))
    search = min(int(SEARCH_SECONDS * sample_rate), limit // 2)
    spans = []
    start = 0
    while n - start > limit:
        cut = _quietest_frame(audio, start + limit - search, start + limit, frame)
        spans.append((start, cut))
        start = cut
    spans.append((start, n))
    return spans


def _quietest_frame(audio: np.ndarray, lo: int, hi: int, frame: int) -> int:
    """Start of the lowest-energy frame in audio[lo:hi] (hi when the window holds none)."""
    count = (hi - lo) // frame
    if count < 1:
        return hi
    window = audio[lo : lo + count * frame].reshape(count, frame)
    energy = np.einsum("ij,ij->i", window, window, dtype=np.float64)
    return lo + int(np.argmin(energy)) * frame
