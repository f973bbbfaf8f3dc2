"""Segmentation in a worker thread, handing decoded windows over through a bounded queue.

The caller embeds each batch of windows as soon as it arrives, so the embedding stage starts
with the first windows instead of after the last, and at most ``queue_size`` batches wait in
between (memory stays flat however long the file). Every decoded window is also written into
the caller's preallocated (windows, frames, local_speakers) float32 array, which the
clustering and reconstruction stages read once the stream is over.

ONNX Runtime releases the GIL while a model runs, so the two stages use two cores. On a CPU
segmentation is the slower stage (a 10 s window costs more than the embeddings of every fifth
one); a caller that finds the queue empty segments the next batch itself instead of waiting
(``share``), so neither core idles while windows remain. Batches may then arrive out of order;
each says where it belongs (``first``), and a window's scores do not depend on which thread ran it.
An error in the worker is raised again in the caller's thread; leaving the ``with`` block
early (an error while embedding) stops and joins the worker.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from witness.diarize.powerset import decode_powerset
from witness.diarize.features import SAMPLE_RATE
from witness.diarize.segmentation import SegmentationModel, WindowBatch, frame_db, sliding_windows, unheard_loud

_DONE = object()
_POLL_SECONDS = 0.1


@dataclass(frozen=True)
class DecodedWindows:
    """first: index of the batch's first window in the file; starts: (B,) int64 first sample
    of each window; activity: (B, frames, local_speakers) float32 0/1 (hard powerset decoding)."""

    first: int
    starts: np.ndarray
    activity: np.ndarray


class SegmentationStream:
    """Iterate over decoded windows of ``signal`` while the model runs in a worker thread.

    signal: (samples,) float32, 16 kHz. out: (windows, frames, local_speakers) float32, one row
    per window of ``window_starts(len(signal), step)``; filled by whichever thread segments.
    on_progress: called (never concurrently) with the number of windows segmented so far.
    share: the iterating thread segments a batch itself whenever none is waiting.
    silence_bias: (loud_db, bias): each window is also decoded with the silence class's score
        lowered by ``bias`` in its frames louder than ``loud_db`` (``segmentation.frame_db``),
        into ``biased`` ((windows, frames, local_speakers) bool); ``loud`` and ``unheard`` count
        those frames and those the plain decoding hears as nobody (None: no second decoding).
    ``busy_seconds``: time both threads spent cutting, segmenting and decoding windows.
    """

    def __init__(self, model: SegmentationModel, signal: np.ndarray, step_seconds: float,
                 windows_per_batch: int, queue_size: int, out: np.ndarray,
                 on_progress: Callable[[int], None] | None = None, share: bool = True,
                 silence_bias: tuple[float, float] | None = None):
        self._model, self._out = model, out
        self._silence_bias = silence_bias
        self.biased = None if silence_bias is None else np.zeros(out.shape, dtype=bool)
        self.loud = self.unheard = 0
        self._batches = sliding_windows(signal, int(round(step_seconds * SAMPLE_RATE)), windows_per_batch)
        self._on_progress = on_progress
        self._share = share
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, queue_size))
        self._stop = threading.Event()
        self._lock = threading.Lock()  # the batch source, the counters and progress
        self._thread = threading.Thread(target=self._work, name="witness-segmentation", daemon=True)
        self._segmented = 0
        self.busy_seconds = 0.0

    def __enter__(self) -> SegmentationStream:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()

    def __iter__(self) -> Iterator[DecodedWindows]:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                batch = self._next() if self._share else None
                item = self._queue.get() if batch is None else self._segment(batch)
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def _next(self) -> WindowBatch | None:
        """The next batch to segment (cut from the signal now), or None when all are taken."""
        with self._lock:
            return next(self._batches, None)

    def _segment(self, batch: WindowBatch) -> DecodedWindows:
        """Segment and decode ``batch`` in the calling thread, filling ``out``."""
        began = time.perf_counter()
        scores = self._model.run(batch.windows)
        activity = decode_powerset(scores)
        rows = slice(batch.first, batch.first + len(activity))
        self._out[rows] = activity
        loud = unheard = 0
        if self._silence_bias is not None:
            loud_db, bias = self._silence_bias
            frames = frame_db(batch.windows) > loud_db
            loud, unheard = unheard_loud(activity, frames)
            scores[..., 0] -= bias * frames
            self.biased[rows] = decode_powerset(scores) > 0
        with self._lock:
            self.busy_seconds += time.perf_counter() - began
            self.loud += loud
            self.unheard += unheard
            self._segmented += len(activity)
            if self._on_progress:
                self._on_progress(self._segmented)
        return DecodedWindows(batch.first, batch.starts, activity)

    def _work(self) -> None:
        try:
            while not self._stop.is_set():
                batch = self._next()
                if batch is None:
                    break
                if not self._put(self._segment(batch)):
                    return
            self._put(_DONE)
        except BaseException as exc:  # handed to the caller's thread, raised there
            self._put(exc)

    def _put(self, item: object) -> bool:
        """Queue ``item``, waiting while the queue is full; False if the caller stopped us."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False
