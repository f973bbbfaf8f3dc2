"""Speaker embeddings behind one interface: a frontend, an ONNX session, a pinned model file.

``embed(waveforms, masks)`` takes N pieces of audio (N, samples) float32 at 16 kHz and, per
piece, a frame mask (N, mask_frames) saying where the speaker of interest speaks alone (e.g.
the 589 segmentation frames of a 10 s window, overlapped frames already zeroed). Mask frames
are spread evenly over the piece; each feature frame takes the mask value nearest its centre
(>= 0.5 keeps it). Only kept frames are embedded. A row with less than ``min_clean_seconds``
of kept audio comes back as NaN (the caller decides whether to retry with a looser mask).
Rows come back L2-normalised, (N, dimension) float32 (256 for GE2E and WeSpeaker, 192 for CAM++).

- ``GE2EEmbedder``: Resemblyzer's encoder (converted by ``witness.models.ge2e``). The kept
  mel frames are raised to -30 dBFS (never lowered, as Resemblyzer's preprocessing does), cut
  into 1.6 s partials every 77 frames (Resemblyzer's rate of 1.3 per second; the last partial
  kept when at least 75% full, zero-padded), embedded, averaged and normalised.
- ``WeSpeakerEmbedder``: WeSpeaker ResNet34-LM; mean-normalised Kaldi fbank over the whole
  piece (as pyannote does), then the kept frames. Rows with the same number of kept frames
  share a model call; the exported graph has no frame-weight input, so kept frames are
  gathered rather than weighted.
- ``CamPlusPlusEmbedder``: 3D-Speaker CAM++ (converted by ``witness.models.campplus_onnx``);
  Kaldi fbank as 3D-Speaker computes it (``campplus_fbank``) of the kept frames (computed
  for those frames only), mean-normalised over themselves: 3D-Speaker normalises each utterance it embeds,
  and here the utterance is the speaker's kept audio. Rows with the same number of kept frames
  share a model call (the model pools over time, so rows cannot be padded).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from witness.accel.providers import MIGRAPHX
from witness.diarize.features import (
    CAMPPLUS_SCALE, CAMPPLUS_WINDOW, FBANK_FRAME, FBANK_HOP, GE2E_HOP, GE2E_N_MELS, SAMPLE_RATE, fbank_frames,
    finite_audio, frame_energy, ge2e_frames, ge2e_mel_of_frames, kaldi_fbank, kaldi_fbank_of_frames, mean_normalise)
from witness.accel.onnx_session import CPU, LazySession, as_choice
from witness.models.campplus import EMBEDDING_DIM as CAMPPLUS_DIM, MIN_FRAMES as CAMPPLUS_MIN_FRAMES

EMBEDDING_DIM = 256  # GE2E and WeSpeaker
TARGET_DBFS = -30.0
MAX_BOOST_DB = 60.0


class SpeakerEmbedder(Protocol):
    dimension: int
    min_clean_seconds: float

    def embed(self, waveforms: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """(N, samples) float32, (N, mask_frames) bool/float or None → (N, dim) float32."""


def keep_frames(masks: np.ndarray | None, num_samples: int, centres: np.ndarray, rows: int) -> np.ndarray:
    """Which feature frames to use: (rows, len(centres)) bool.

    masks: (rows, mask_frames) bool/float spread evenly over ``num_samples``, or None (all).
    centres: (frames,) sample index at the centre of each feature frame.
    """
    if masks is None:
        return np.ones((rows, len(centres)), dtype=bool)
    masks = np.asarray(masks, dtype=np.float32)
    if masks.ndim != 2 or masks.shape[0] != rows:
        raise ValueError(f"masks of shape {masks.shape}: expected ({rows}, mask_frames)")
    index = np.clip((centres * masks.shape[1]) // max(num_samples, 1), 0, masks.shape[1] - 1)
    return masks[:, index.astype(np.int64)] >= 0.5


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows (N, D) float; all-zero rows become NaN (no direction)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (vectors / np.where(norms > 0, norms, np.nan)).astype(np.float32)


def loudness_gain(mean_square: float | np.ndarray) -> np.ndarray:
    """Power factor raising audio of this mean square (samples in [-1, 1]) to -30 dBFS;
    1 when already louder (never lowered), at most +60 dB."""
    dbfs = 10.0 * np.log10(np.maximum(mean_square, 1e-30))
    boost_db = np.clip(TARGET_DBFS - dbfs, 0.0, MAX_BOOST_DB)
    return 10.0 ** (boost_db / 10.0)


@dataclass(frozen=True)
class Ge2eOptions:
    """partial_frames: frames per partial (160 = 1.6 s, the training length).
    partial_step: frames between partial starts (77: Resemblyzer's 1.3 partials/s).
    min_coverage: a last partial shorter than this share of ``partial_frames`` is dropped
    (unless it is the only one), as in Resemblyzer (0.75).
    min_clean_seconds: less kept audio than this gives a NaN row (1.0: shorter pieces were
    unreliable in our measurements)."""

    partial_frames: int = 160
    partial_step: int = 77
    min_coverage: float = 0.75
    min_clean_seconds: float = 1.0


def partial_starts(num_frames: int, options: Ge2eOptions = Ge2eOptions()) -> np.ndarray:
    """Start frame of each partial over ``num_frames`` frames: (P,) int64, P >= 1."""
    n = options.partial_frames
    starts = np.arange(0, max(1, num_frames - n + options.partial_step + 1), options.partial_step)
    if len(starts) > 1 and (num_frames - starts[-1]) / n < options.min_coverage:
        starts = starts[:-1]
    return starts.astype(np.int64)


class GE2EEmbedder:
    """Resemblyzer GE2E encoder (ONNX input ``mels`` (B, frames, 40), output ``embeddings``).

    providers: ONNX Runtime execution providers (default CPU); batch_size: partials per
    model call (None: 64, or 8 on MIGraphX, where a big batch can cost as much as that many
    small ones on consumer GPUs: measure with scripts/bench_diarize_pipeline.py --embed-batch);
    threads: intra-op threads (1: one thread beat two for small batches).
    On MIGraphX the input shape is pinned, (batch_size, 160, 40): the last batch is padded, and
    the compiled program is cached per shape (``witness.accel.migraphx_cache``).
    """

    dimension = EMBEDDING_DIM

    def __init__(self, path: str | Path, providers: Sequence[Any] = CPU, batch_size: int | None = None,
                 threads: int = 1, options: Ge2eOptions = Ge2eOptions()):
        choice = as_choice(providers)
        self.static = choice.provider == MIGRAPHX
        self.batch_size = batch_size or (8 if self.static else 64)
        shape = (self.batch_size, options.partial_frames, GE2E_N_MELS)
        self.session = LazySession(path, choice, threads, static_shapes=(("mels", shape),) if self.static else None)
        self.options = options
        self.min_clean_seconds = options.min_clean_seconds

    def embed_partials(self, mels: np.ndarray) -> np.ndarray:
        """mels: (P, frames, 40) float32 → (P, 256) float32 unit vectors (zero where ReLU
        left nothing)."""
        mels = np.asarray(mels, dtype=np.float32)
        out = np.empty((len(mels), EMBEDDING_DIM), dtype=np.float32)
        for first in range(0, len(mels), self.batch_size):
            batch = mels[first:first + self.batch_size]
            if self.static and len(batch) < self.batch_size:  # pinned shape: pad the tail
                batch = np.concatenate([batch, np.zeros((self.batch_size - len(batch),) + batch.shape[1:], np.float32)])
            (vectors,) = self.session.run({"mels": batch})
            out[first:first + self.batch_size] = vectors[:len(out) - first]
        return out

    def embed(self, waveforms: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """waveforms: (N, samples) float32; masks: (N, mask_frames) or None → (N, 256) float32."""
        waveforms = finite_audio(np.atleast_2d(waveforms), "embedding input")
        frames = ge2e_frames(waveforms)  # (N, K, 400) view
        centres = np.arange(frames.shape[1]) * GE2E_HOP
        keep = keep_frames(masks, waveforms.shape[1], centres, len(waveforms))
        min_frames = self.options.min_clean_seconds * SAMPLE_RATE / GE2E_HOP
        partials, owner = [], []
        for row in np.flatnonzero(keep.sum(axis=1) >= min_frames):
            # only the kept frames are transformed (a mask keeps ~40% of a 10 s window)
            gain = loudness_gain(frame_energy(waveforms[row])[keep[row]].mean())
            clean = ge2e_mel_of_frames(frames[row, keep[row]]) * np.float32(gain)
            for part in self._cut(clean):
                partials.append(part)
                owner.append(row)
        out = np.full((len(waveforms), EMBEDDING_DIM), np.nan, dtype=np.float32)
        if partials:
            vectors = self.embed_partials(np.stack(partials))
            owner = np.asarray(owner)
            sums = np.zeros((len(waveforms), EMBEDDING_DIM))
            np.add.at(sums, owner, vectors)
            rows = np.unique(owner)
            out[rows] = unit_rows(sums[rows])
        return out

    def _cut(self, clean: np.ndarray) -> list[np.ndarray]:
        """Partials (partial_frames, 40) float32 of the kept frames (K', 40), zero-padded."""
        n = self.options.partial_frames
        padded = np.zeros((len(clean) + n, clean.shape[1]), dtype=np.float32)
        padded[:len(clean)] = clean
        return [padded[s:s + n] for s in partial_starts(len(clean), self.options)]


def embed_kept_frames(frames: np.ndarray, masks: np.ndarray | None, num_samples: int, min_frames: float, dim: int,
                      kept_features: Callable[[np.ndarray], np.ndarray],
                      embed_rows: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Embed each row's kept frames (fbank models): rows with the same number of kept frames
    go to ``embed_rows`` together.

    frames: (N, frames, ...) per-frame data of N pieces of ``num_samples`` samples (raw
    frames or their fbank); masks as in ``embed``. kept_features: one row's kept frames
    (kept, ...) -> (kept, 80) float32 fbank. embed_rows: (B, kept, 80) float32 -> (B, dim)
    float32 unit rows. Returns (N, dim) float32, NaN for rows with fewer than ``min_frames``
    kept frames.
    """
    centres = np.arange(frames.shape[1]) * FBANK_HOP + FBANK_FRAME // 2
    keep = keep_frames(masks, num_samples, centres, len(frames))
    counts = keep.sum(axis=1)
    out = np.full((len(frames), dim), np.nan, dtype=np.float32)
    for count in np.unique(counts[counts >= min_frames]):
        rows = np.flatnonzero(counts == count)
        out[rows] = embed_rows(np.stack([kept_features(frames[r, keep[r]]) for r in rows]))
    return out


def run_in_batches(session: LazySession, input_name: str, feats: np.ndarray, batch_size: int, dim: int) -> np.ndarray:
    """feats (B, frames, 80) through ``session`` ``batch_size`` rows at a time -> (B, dim)
    float32 unit rows."""
    out = np.empty((len(feats), dim), dtype=np.float32)
    for first in range(0, len(feats), batch_size):
        (vectors,) = session.run({input_name: np.asarray(feats[first:first + batch_size], np.float32)})
        out[first:first + len(vectors)] = unit_rows(vectors.reshape(len(vectors), -1))
    return out


def embed_by_length(embed: Callable[[np.ndarray], np.ndarray], pieces: Sequence[np.ndarray], workers: int = 1,
                    frames_per_call: int = 400) -> list[np.ndarray]:
    """Each piece's embedding by a Kaldi-filterbank model's ``embed`` ((N, samples) float32 ->
    (N, dim), NaN rows where too short): pieces (1-D float32 samples) with the same number of
    filterbank frames are embedded together, up to ``frames_per_call`` frames a call (at least
    one piece: CAM++ gains nothing from more, and its activations grow with them), the samples
    after a piece's last whole frame (which the filterbank never reads) left out; the calls
    run on ``workers`` threads, the longest first (ONNX Runtime lets go of the GIL). A row's
    embedding is the same, bit for bit, alone or in a batch, on one thread or several
    (tests/test_diarize_embedding.py). Returns (dim,) float32 rows in the pieces' order."""
    groups: dict[int, list[int]] = {}
    for k, piece in enumerate(pieces):
        framed = len(piece) - (len(piece) - FBANK_FRAME) % FBANK_HOP if len(piece) >= FBANK_FRAME else len(piece)
        groups.setdefault(framed, []).append(k)
    calls = []
    for framed, index in groups.items():
        rows = max(1, frames_per_call // max(1, 1 + (framed - FBANK_FRAME) // FBANK_HOP))
        calls += [(framed, index[i:i + rows]) for i in range(0, len(index), rows)]
    calls.sort(key=lambda call: -call[0] * len(call[1]))

    def run(call: tuple[int, list[int]]) -> np.ndarray:
        framed, index = call
        return np.asarray(embed(np.stack([np.asarray(pieces[k][:framed], np.float32) for k in index])), np.float32)

    out: list[np.ndarray] = [np.empty(0, np.float32)] * len(pieces)
    with ThreadPoolExecutor(max(1, workers)) as pool:
        for (_, index), vectors in zip(calls, pool.map(run, calls)):
            for k, vector in zip(index, vectors):
                out[k] = vector
    return out


class WeSpeakerEmbedder:
    """WeSpeaker ResNet34-LM ONNX (input (B, frames, 80) fbank, output (B, 256)); the
    input and output names are read from the model.

    min_clean_seconds: less kept audio gives a NaN row (0.5). batch_size: rows per call.
    """

    dimension = EMBEDDING_DIM

    def __init__(self, path: str | Path, providers: Sequence[Any] = CPU, batch_size: int = 16,
                 threads: int = 0, min_clean_seconds: float = 0.5):
        self.session = LazySession(path, providers, threads)
        self.batch_size = batch_size
        self.min_clean_seconds = min_clean_seconds

    def features(self, waveforms: np.ndarray) -> np.ndarray:
        """(N, samples) float32 → (N, frames, 80) float32 mean-normalised log fbank."""
        return mean_normalise(kaldi_fbank(finite_audio(np.atleast_2d(waveforms), "embedding input")))

    def embed(self, waveforms: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """waveforms: (N, samples) float32; masks: (N, mask_frames) or None → (N, 256) float32."""
        waveforms = np.atleast_2d(waveforms)
        (input_name,) = self.session.input_names()
        min_frames = max(1.0, self.min_clean_seconds * SAMPLE_RATE / FBANK_HOP)
        return embed_kept_frames(
            self.features(waveforms), masks, waveforms.shape[1], min_frames, EMBEDDING_DIM, lambda kept: kept,
            lambda rows: run_in_batches(self.session, input_name, rows, self.batch_size, EMBEDDING_DIM))


class CamPlusPlusEmbedder:
    """3D-Speaker CAM++ ONNX (input ``feats`` (B, frames, 80), output ``embeddings`` (B, 192)).

    batch_size: rows per model call (rows batch only when their kept frame counts are equal);
    threads: intra-op threads; min_clean_seconds: less kept audio gives a NaN row (0.5 s, as
    WeSpeaker; such a local speaker is then assigned by its overlapping neighbours).
    """

    dimension = CAMPPLUS_DIM

    def __init__(self, path: str | Path, providers: Sequence[Any] = CPU, batch_size: int = 16,
                 threads: int = 1, min_clean_seconds: float = 0.5):
        self.session = LazySession(path, providers, threads)
        self.batch_size = batch_size
        self.min_clean_seconds = min_clean_seconds

    def embed_features(self, feats: np.ndarray) -> np.ndarray:
        """feats: (B, frames, 80) float32 mean-normalised fbank, frames >= 3 → (B, 192) float32
        unit rows."""
        return run_in_batches(self.session, "feats", feats, self.batch_size, CAMPPLUS_DIM)

    def embed(self, waveforms: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """waveforms: (N, samples) float32; masks: (N, mask_frames) or None → (N, 192) float32."""
        waveforms = finite_audio(np.atleast_2d(waveforms), "embedding input")
        min_frames = max(CAMPPLUS_MIN_FRAMES, self.min_clean_seconds * SAMPLE_RATE / FBANK_HOP)
        # the fbank of the kept frames only: each is computed within its frame, and a mask keeps
        # ~40% of a 10 s window (on a GPU the fbank, not the model, is the embedding's cost)
        return embed_kept_frames(fbank_frames(waveforms, CAMPPLUS_SCALE), masks, waveforms.shape[1], min_frames,
                                 CAMPPLUS_DIM, lambda kept: kaldi_fbank_of_frames(kept, CAMPPLUS_WINDOW),
                                 lambda rows: self.embed_features(mean_normalise(rows)))
