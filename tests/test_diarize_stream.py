"""The segmentation stream on the real segmentation-3.0 graph and the sample call: the caller
that finds no batch waiting segments one itself, and the windows come out the same."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from witness.diarize.powerset import decode_powerset
from witness.diarize.segmentation import FRAMES_PER_WINDOW, LOCAL_SPEAKERS, SegmentationModel, window_starts
from witness.diarize.stream import SegmentationStream

RATE = 16000


class _HeldWorker(SegmentationModel):
    """The real model, whose worker thread waits until the caller has segmented a batch itself
    (so the caller is sure to find the queue empty); records which thread ran each batch."""

    def __init__(self, path):
        super().__init__(path)
        self.caller_segmented = threading.Event()
        self.threads: list[str] = []

    def run(self, windows):
        worker = threading.current_thread().name == "witness-segmentation"
        if worker:
            assert self.caller_segmented.wait(timeout=120)
        scores = super().run(windows)
        self.threads.append("worker" if worker else "caller")
        self.caller_segmented.set()
        return scores


def _stream(model, audio, share: bool) -> tuple[np.ndarray, list[int], list[int]]:
    """(filled activity array, first window of each yielded batch, progress counts)."""
    out = np.zeros((len(window_starts(len(audio), RATE)), FRAMES_PER_WINDOW, LOCAL_SPEAKERS), np.float32)
    progress: list[int] = []
    with SegmentationStream(model, audio, 1.0, 2, 1, out, progress.append, share=share) as stream:
        firsts = []
        for batch in stream:
            assert np.array_equal(out[batch.first:batch.first + len(batch.activity)], batch.activity)
            firsts.append(batch.first)
    return out, firsts, progress


@pytest.fixture(scope="module")
def seg_path(default_models):
    return default_models.segmentation


def test_the_caller_segments_when_no_batch_waits_and_the_windows_are_the_same(seg_path, sample_audio):
    audio = sample_audio[:20 * RATE]  # 11 windows at a 1 s step: 6 batches of 2
    alone, firsts_alone, _ = _stream(SegmentationModel(seg_path), audio, share=False)
    held = _HeldWorker(seg_path)
    shared, firsts, progress = _stream(held, audio, share=True)
    assert held.threads[0] == "caller" and "worker" in held.threads
    assert np.array_equal(shared, alone)  # bit for bit, whichever thread ran a window
    assert sorted(firsts) == firsts_alone == list(range(0, 11, 2))  # every batch once
    assert progress == sorted(progress) and progress[-1] == 11
    direct = decode_powerset(SegmentationModel(seg_path).run(np.stack([audio[s:s + 10 * RATE] for s in (0, RATE)])))
    assert np.array_equal(shared[:2], direct)


def test_an_error_while_the_caller_segments_is_raised_and_the_worker_stops(seg_path, sample_audio):
    class Failing(_HeldWorker):
        def run(self, windows):
            if threading.current_thread().name != "witness-segmentation":
                self.caller_segmented.set()
                raise RuntimeError("caller failed")
            return super().run(windows)

    model = Failing(seg_path)
    with pytest.raises(RuntimeError, match="caller failed"):
        _stream(model, sample_audio[:20 * RATE], share=True)
