"""pyannote segmentation-3.0 on ONNX Runtime, over sliding 10 s windows produced lazily.

The model takes ``x`` float32 (N, 1, 160000), 10 s of 16 kHz mono, and returns ``y`` float32
(N, 589, 7): per frame (step 270 samples, receptive field 991 samples) the log-softmax over
the 7 powerset classes (silence, 3 single speakers, 3 pairs).

Windows start every ``step`` samples; as in pyannote, when the audio does not end on a
window boundary one more window starts at the next step and is zero-padded, and audio
shorter than one window gives one padded window. Batches are cut from the signal as they
are consumed, so a 3-hour file never holds more than one batch of windows at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from witness.diarize.features import SAMPLE_RATE, finite_audio
from witness.accel.onnx_session import CPU, LazySession
from witness.errors import ModelError

WINDOW_SAMPLES = 160_000
FRAMES_PER_WINDOW = 589
NUM_CLASSES = 7  # powerset: {}, 3 single speakers, 3 pairs
LOCAL_SPEAKERS = 3  # speakers per window
FRAME_STEP_SAMPLES = 270
FRAME_SIZE_SAMPLES = 991


@dataclass(frozen=True)
class WindowBatch:
    """Consecutive windows of one signal.

    first: index of the first window in the file. starts: (B,) int64 first sample of each
    window. windows: (B, 160000) float32 audio, zero-padded past the end of the signal.
    """

    first: int
    starts: np.ndarray
    windows: np.ndarray


@dataclass(frozen=True)
class SegmentedBatch:
    """windows: the batch that went in; scores: (B, 589, 7) float32 powerset log-probabilities."""

    windows: WindowBatch
    scores: np.ndarray


def window_starts(num_samples: int, step: int, window: int = WINDOW_SAMPLES) -> np.ndarray:
    """First sample of every window, pyannote's way (a padded last window covers the tail).

    Returns (num_windows,) int64; at least one window, even for empty audio.
    """
    if step <= 0:
        raise ValueError(f"window step {step} samples: must be positive")
    if num_samples <= window:
        return np.zeros(1, dtype=np.int64)
    full = 1 + (num_samples - window) // step
    tail = (num_samples - window) % step > 0
    return np.arange(full + int(tail), dtype=np.int64) * step


def sliding_windows(signal: np.ndarray, step: int, batch_size: int,
                    window: int = WINDOW_SAMPLES) -> Iterator[WindowBatch]:
    """Yield the windows of ``signal`` ((samples,) float32, any array that slices, e.g. a
    memmap) in batches of at most ``batch_size``, cutting each batch only when asked for."""
    if batch_size <= 0:
        raise ValueError(f"batch size {batch_size}: must be positive")
    starts = window_starts(len(signal), step, window)
    for first in range(0, len(starts), batch_size):
        batch_starts = starts[first:first + batch_size]
        yield WindowBatch(first, batch_starts, cut_windows(signal, batch_starts, window))


def cut_windows(signal: np.ndarray, starts: np.ndarray, window: int = WINDOW_SAMPLES) -> np.ndarray:
    """(len(starts), window) float32: the windows of ``signal`` ((samples,) float32) that
    begin at ``starts`` ((N,) int samples), zero-padded past the end of the signal."""
    windows = np.zeros((len(starts), window), dtype=np.float32)
    for row, start in enumerate(np.asarray(starts, dtype=np.int64)):
        piece = np.asarray(signal[start:start + window], dtype=np.float32)
        windows[row, :len(piece)] = piece
    return windows


def levels_db(signal: np.ndarray, frame: int = 160, floor_db: float = 35.0) -> tuple[float, float]:
    """(speech level, noise floor) of ``signal`` ((n,) float) in dB: the mean power of its 10 ms
    frames within ``floor_db`` of the 95th percentile's (the talk, not the pauses), and the 10th
    percentile's power; -inf when silent."""
    x = np.asarray(signal).reshape(-1)
    n = len(x) // frame
    if n == 0:
        return float("-inf"), float("-inf")
    power = np.empty(n)
    for first in range(0, n, 6000):  # a minute at a time: no float64 copy of a long call
        chunk = np.asarray(x[first * frame:min(first + 6000, n) * frame], dtype=np.float64).reshape(-1, frame)
        power[first:first + len(chunk)] = np.mean(chunk ** 2, axis=1)
    loud = power[power >= np.percentile(power, 95) * 10 ** (-floor_db / 10)]
    with np.errstate(divide="ignore"):
        return float(10 * np.log10(np.mean(loud))), float(10 * np.log10(np.percentile(power, 10)))


def frame_db(windows: np.ndarray) -> np.ndarray:
    """(N, FRAMES_PER_WINDOW) float32: each model frame's power in dB (its 991 samples) in
    ``windows`` ((N, WINDOW_SAMPLES) float); one window at a time (a batch's float64 running
    sums would cost hundreds of MB)."""
    first = np.arange(FRAMES_PER_WINDOW) * FRAME_STEP_SAMPLES
    last = np.minimum(first + FRAME_SIZE_SAMPLES, np.shape(windows)[1])
    out = np.empty((len(windows), FRAMES_PER_WINDOW), dtype=np.float32)
    for row, window in enumerate(windows):
        power = np.concatenate([[0.0], np.cumsum(np.square(window, dtype=np.float64))])
        out[row] = 10 * np.log10((power[last] - power[first]) / (last - first) + 1e-12)
    return out


def unheard_loud(activity: np.ndarray, loud: np.ndarray) -> tuple[int, int]:
    """(loud frames, loud frames heard as nobody) of decoded ``activity`` ((N, frames, speakers)
    0/1) where ``loud`` ((N, frames) bool) marks the loud frames."""
    return int(loud.sum()), int((loud & ~activity.any(axis=-1)).sum())


def is_dynamically_quantised(path: str | Path) -> bool:
    """True when the graph quantises its activations at run time (``DynamicQuantizeLinear``).

    Such a model (the int8 export) takes one scale over the whole input tensor, so a window's
    scores depend on the other windows in its batch (we measured 1.7% of frames changing
    their argmax at batch 8 versus 1); it must run one window per call to be reproducible.
    """
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    return any(node.op_type == "DynamicQuantizeLinear" for node in graph.node)


class SegmentationModel:
    """pyannote segmentation-3.0 (fp32 or int8 export) behind a lazily created session.

    providers: ONNX Runtime execution providers (default CPU); batch_size: windows per
    model call (None: 32, or 1 for a dynamically quantised model, see
    ``is_dynamically_quantised``); threads: intra-op threads (0: ONNX Runtime's choice).
    """

    def __init__(self, path: str | Path, providers: Sequence[Any] = CPU,
                 batch_size: int | None = None, threads: int = 0):
        if batch_size is not None and batch_size <= 0:
            raise ValueError(f"batch size {batch_size}: must be positive")
        self.session = LazySession(path, providers, threads)
        self._batch_size = batch_size

    @property
    def batch_size(self) -> int:
        """Windows per model call (decided on first use when not given)."""
        if self._batch_size is None:
            path = self.session.path
            try:
                self._batch_size = 1 if is_dynamically_quantised(path) else 32
            except Exception as exc:  # onnx raises protobuf's DecodeError, OSError, ...
                raise ModelError(f"cannot read the model ({type(exc).__name__}); delete it and "
                                 "fetch it again", path) from None
        return self._batch_size

    def run(self, windows: np.ndarray) -> np.ndarray:
        """windows: (N, 160000) float32 → (N, 589, 7) float32 powerset log-probabilities.

        NaN/Inf samples are zeroed (and logged); the model is called in ``batch_size`` chunks.
        """
        windows = np.asarray(windows, dtype=np.float32)
        if windows.ndim != 2 or windows.shape[1] != WINDOW_SAMPLES:
            raise ValueError(f"windows of shape {windows.shape}: expected (N, {WINDOW_SAMPLES})")
        windows = finite_audio(windows, "segmentation input")
        out = np.empty((len(windows), FRAMES_PER_WINDOW, NUM_CLASSES), dtype=np.float32)
        batch_size = self.batch_size
        for first in range(0, len(windows), batch_size):
            chunk = windows[first:first + batch_size, None, :]
            (scores,) = self.session.run({"x": chunk})
            if scores.shape[1:] != (FRAMES_PER_WINDOW, NUM_CLASSES):
                raise ModelError(f"segmentation output of shape {scores.shape}: expected "
                                 f"(N, {FRAMES_PER_WINDOW}, {NUM_CLASSES})", self.session.path)
            out[first:first + len(chunk)] = scores
        return out

    def segment(self, signal: np.ndarray, step_seconds: float = 1.0,
                windows_per_batch: int = 32) -> Iterator[SegmentedBatch]:
        """Segment ``signal`` ((samples,) float32, 16 kHz), yielding ``windows_per_batch``
        windows at a time (independent of the model's own ``batch_size``).

        A generator: the work (and any error) happens as the caller iterates.
        """
        step = int(round(step_seconds * SAMPLE_RATE))
        for batch in sliding_windows(signal, step, windows_per_batch):
            yield SegmentedBatch(batch, self.run(batch.windows))
