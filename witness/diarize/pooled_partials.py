"""GE2E embeddings pooled from partials computed once along the file.

Embedding each 10 s window per speaker at a 1 s step embeds every second of audio about ten
times. Here 1.6 s partials start every ``step`` frames along the whole file, each embedded
once (when a window first needs it) and kept while later windows may still use it; a
(window, speaker) embedding is the normalised mean of the partials that lie inside the
window and whose frames are at least ``min_clean_share`` kept by that speaker's mask.
Same interface as the per-window embedders, with the windows given by their start samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from witness.diarize.embedding import EMBEDDING_DIM, GE2EEmbedder, loudness_gain, unit_rows
from witness.diarize.features import GE2E_HOP, GE2E_N_FFT, finite_audio, ge2e_mel
from witness.diarize.segmentation import WINDOW_SAMPLES


@dataclass(frozen=True)
class PooledOptions:
    """step: mel frames between partial starts along the file (50 = 0.5 s).
    min_clean_share: share of a partial's frames the speaker's mask must keep for the
    partial to join that (window, speaker) pool (0.9).
    window_samples: length of the windows the masks describe (160000 = 10 s)."""

    step: int = 50
    min_clean_share: float = 0.9
    window_samples: int = WINDOW_SAMPLES


class PooledGE2E:
    """Pooled-partials GE2E embeddings over one signal ((samples,) float32, 16 kHz).

    Call ``embed`` with windows in increasing start order (as segmentation yields them):
    partials before the earliest window asked for are forgotten, so memory stays flat.
    """

    dimension = EMBEDDING_DIM

    def __init__(self, embedder: GE2EEmbedder, signal: np.ndarray,
                 options: PooledOptions = PooledOptions()):
        self.embedder = embedder
        self.signal = signal
        self.options = options
        self.min_clean_seconds = embedder.options.min_clean_seconds
        self._cache: dict[int, np.ndarray] = {}

    def embed(self, starts: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """starts: (N,) int64 first sample of each window; masks: (N, mask_frames) bool/float
        over each window → (N, 256) float32, NaN where no partial qualifies."""
        starts = np.asarray(starts, dtype=np.int64)
        masks = np.asarray(masks, dtype=np.float32)
        chosen = [self._partials_for(s, m) for s, m in zip(starts, masks)]
        if len(starts):
            self._forget_before(int(starts.min()))
        self._compute(sorted({p for c in chosen for p in c} - set(self._cache)))
        out = np.full((len(starts), EMBEDDING_DIM), np.nan, dtype=np.float32)
        for row, partials in enumerate(chosen):
            if partials:
                out[row] = unit_rows(np.sum([self._cache[p] for p in partials], axis=0)[None])[0]
        return out

    def _partials_for(self, start: int, mask: np.ndarray) -> list[int]:
        """Indices of the partials inside window ``start`` that the mask keeps well enough."""
        n, step = self.embedder.options.partial_frames, self.options.step
        first_frame = -(-start // GE2E_HOP)
        last_frame = (start + self.options.window_samples - 1) // GE2E_HOP
        frames = np.arange(first_frame, last_frame + 1)
        index = ((frames * GE2E_HOP - start) * len(mask)) // self.options.window_samples
        keep = np.concatenate([[0], np.cumsum(mask[np.clip(index, 0, len(mask) - 1)] >= 0.5)])
        p0 = -(-first_frame // step)
        p1 = (last_frame - n + 1) // step
        chosen = []
        for p in range(p0, p1 + 1):
            local = p * step - first_frame
            if (keep[local + n] - keep[local]) >= self.options.min_clean_share * n:
                chosen.append(p)
        return chosen

    def _forget_before(self, sample: int) -> None:
        first_needed = (sample // GE2E_HOP) // self.options.step
        for p in [p for p in self._cache if p < first_needed]:
            del self._cache[p]

    def _compute(self, partials: list[int]) -> None:
        """Embed the given partials (indices along the file) and remember them."""
        for first in range(0, len(partials), self.embedder.batch_size):
            chunk = partials[first:first + self.embedder.batch_size]
            mels = np.stack([self._partial_mel(p) for p in chunk])
            for p, vector in zip(chunk, self.embedder.embed_partials(mels)):
                self._cache[p] = vector

    def _partial_mel(self, p: int) -> np.ndarray:
        """(160, 40) float32 mel of partial ``p``, raised to -30 dBFS like a per-window row."""
        n = self.embedder.options.partial_frames
        centre0 = p * self.options.step * GE2E_HOP
        lo, hi = centre0 - GE2E_N_FFT // 2, centre0 + (n - 1) * GE2E_HOP + GE2E_N_FFT // 2
        piece = np.zeros(hi - lo, dtype=np.float32)
        a, b = max(lo, 0), min(hi, len(self.signal))
        if b > a:
            piece[a - lo:b - lo] = finite_audio(self.signal[a:b], "embedding input")
        core = piece[GE2E_N_FFT // 2 - GE2E_HOP // 2: GE2E_N_FFT // 2 + (n - 1) * GE2E_HOP + GE2E_HOP // 2]
        gain = loudness_gain(np.mean(core.astype(np.float64) ** 2))
        return ge2e_mel(piece, center=False) * np.float32(gain)
