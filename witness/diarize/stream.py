"""Segmentation in a worker thread, handing decoded windows over through a bounded queue.

The caller embeds each batch of windows as soon as it arrives, so the embedding stage starts
with the first windows instead of after the last, and at most ``queue_size`` batches wait in
between (memory stays flat however long the file). Every decoded window is also written into
the caller's preallocated (windows, frames, local_speakers) float32 array, which the
clustering and reconstruction stages read once the stream is over.

ONNX Runtime releases the GIL while a model runs, so the two stages use two cores.
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
from witness.diarize.segmentation import SegmentationModel

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
    per window of ``window_starts(len(signal), step)``; filled by the worker.
    on_progress: called from the worker with the number of windows segmented so far.
    ``busy_seconds``: time the worker spent cutting, segmenting and decoding windows.
    """

    def __init__(self, model: SegmentationModel, signal: np.ndarray, step_seconds: float,
                 windows_per_batch: int, queue_size: int, out: np.ndarray,
                 on_progress: Callable[[int], None] | None = None):
        self._model, self._signal, self._out = model, signal, out
        self._step, self._batch = step_seconds, windows_per_batch
        self._on_progress = on_progress
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, queue_size))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="witness-segmentation", daemon=True)
        self.busy_seconds = 0.0

    def __enter__(self) -> SegmentationStream:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()

    def __iter__(self) -> Iterator[DecodedWindows]:
        while True:
            item = self._queue.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def _work(self) -> None:
        try:
            batches = iter(self._model.segment(self._signal, self._step, self._batch))
            while True:
                began = time.perf_counter()
                batch = next(batches, None)
                if batch is None:
                    break
                activity = decode_powerset(batch.scores)
                first = batch.windows.first
                self._out[first:first + len(activity)] = activity
                self.busy_seconds += time.perf_counter() - began
                if not self._put(DecodedWindows(first, batch.windows.starts, activity)):
                    return
                if self._on_progress:
                    self._on_progress(first + len(activity))
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
