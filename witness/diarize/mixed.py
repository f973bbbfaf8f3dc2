"""Window embeddings that mix two voices, told apart by the turn pieces the split embeds.

Segmentation-3.0 often gives two similar voices one local speaker of a 10 s window; that
(window, local speaker)'s embedding then mixes them and bridges their clusters (on the tuning
corpus ~30% of window embeddings are under 80% one speaker, and an oracle that gives each to
its majority speaker counts 90 of 91 calls right). After a first clustering, each long
exclusive turn is embedded by its middle piece (``split.embedded_turns``: the pieces the
turn-by-turn split needs anyway). A (window, local speaker) whose lone frames cover at least
``cover`` of each of two pieces whose embeddings' cosine is under ``cosine`` heard two voices:
it is left out of the clustering, which runs again (it is still assigned to a speaker).
"""

from __future__ import annotations

import numpy as np

from witness.diarize.clustering import TrainingSet
from witness.diarize.windows import Segmentations


def mixed_windows(segmentations: Segmentations, train: TrainingSet, pieces: np.ndarray, vectors: np.ndarray,
                  cosine: float, cover: float = 0.5) -> np.ndarray:
    """(chunks, local speakers) bool: the ``train`` rows that heard two voices.

    pieces: (n, 2) seconds (start, end) of the embedded pieces, in time order; vectors: their
    (n, dim) unit embeddings.
    """
    mixed = np.zeros(segmentations.data.shape[::2], dtype=bool)
    if len(pieces) < 2:
        return mixed
    data = np.nan_to_num(segmentations.data)
    alone = data.sum(axis=2) == 1
    step, frames = segmentations.frame_step, segmentations.frames_per_chunk
    starts, ends = pieces[:, 0] / step, pieces[:, 1] / step  # in frames from the file's start
    for c, s in zip(train.chunk_idx, train.speaker_idx):
        first = segmentations.chunk_start_frame(int(c))
        near = np.flatnonzero((ends > first) & (starts < first + frames))
        if len(near) < 2:
            continue
        mine = np.concatenate([[0], np.cumsum((data[c, :, s] > 0) & alone[c])])  # lone frames before each
        a = np.clip(np.floor(starts[near] - first).astype(np.int64), 0, frames)
        b = np.clip(np.ceil(ends[near] - first).astype(np.int64), 0, frames)
        inside = near[mine[b] - mine[a] >= cover * (ends[near] - starts[near])]
        if len(inside) >= 2 and (vectors[inside] @ vectors[inside].T).min() < cosine:
            mixed[c, s] = True
    return mixed
