"""Time grids and the per-window arrays that flow between diarization stages.

Two grids matter. The *window* grid is the sliding 10 s segmentation window (start, duration,
step in seconds). The *frame* grid is the segmentation model's output resolution
(segmentation-3.0: a frame every 16.875 ms, each 61.9375 ms long); once windows are stitched
together the frames of the whole file live on one frame grid that starts where the first
window starts. Frame <-> time conversions use pyannote.core's arithmetic exactly, so our
frame indices and turn boundaries equal pyannote's to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _read_only(array: np.ndarray, dtype: type) -> np.ndarray:
    """A read-only view (or converted copy) of ``array``; the caller's array is untouched."""
    view = np.asarray(array, dtype=dtype).view()
    view.flags.writeable = False
    return view


@dataclass(frozen=True)
class SlidingWindow:
    """Window ``i`` covers ``[start + i * step, start + i * step + duration]`` seconds."""

    start: float
    duration: float
    step: float

    def __post_init__(self) -> None:
        if not (self.duration > 0 and self.step > 0):
            raise ValueError(f"duration and step must be > 0, got {self.duration} and {self.step}")

    def start_of(self, i: int) -> float:
        """Start time of window ``i`` (seconds)."""
        return self.start + i * self.step

    def middle_of(self, i: int) -> float:
        """Middle of window ``i`` (seconds), computed as pyannote's ``Segment.middle``."""
        begin = self.start + i * self.step
        return 0.5 * (begin + (begin + self.duration))

    def closest_frame(self, t: float) -> int:
        """Index of the window whose middle is closest to time ``t`` (pyannote.core's rule)."""
        return int(np.rint((t - self.start - 0.5 * self.duration) / self.step))


@dataclass(frozen=True)
class Segmentations:
    """Per-window local speaker activity.

    data: (chunks, frames_per_chunk, local_speakers) float32, read-only. 1.0 = active,
        0.0 = inactive (hard powerset decoding); soft scores in [0, 1] are allowed; NaN marks
        frames without a prediction. Local speaker ``s`` of window ``c`` is unrelated to local
        speaker ``s`` of any other window.
    window: the sliding segmentation window (``window.start_of(c)`` is where chunk c starts).
    frame_step, frame_duration: the model's output frame resolution in seconds.

    When windows stream in, fill a preallocated float32 (chunks, frames, speakers) array row
    by row and wrap it at the end: wrapping a float32 array makes no copy (a 3-hour file at a
    1 s step is 10,800 x 589 x 3 float32 = 76 MB).
    """

    data: np.ndarray
    window: SlidingWindow
    frame_step: float = 0.016875
    frame_duration: float = 0.0619375

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _read_only(self.data, np.float32))
        if self.data.ndim != 3:
            raise ValueError(f"segmentation data must be (chunks, frames, speakers), got shape {self.data.shape}")

    @property
    def num_chunks(self) -> int:
        return self.data.shape[0]

    @property
    def frames_per_chunk(self) -> int:
        return self.data.shape[1]

    @property
    def num_local_speakers(self) -> int:
        return self.data.shape[2]

    @property
    def frames(self) -> SlidingWindow:
        """The file-level output frame grid; it starts where the first window starts."""
        return SlidingWindow(self.window.start, self.frame_duration, self.frame_step)

    @property
    def num_frames(self) -> int:
        """Number of output frames covering every window (pyannote's aggregation length)."""
        if self.num_chunks == 0:
            return 0
        last_end = self.window.start + self.window.duration + (self.num_chunks - 1) * self.window.step
        return self.frames.closest_frame(last_end + 0.5 * self.frame_duration) + 1

    def chunk_start_frame(self, c: int) -> int:
        """Index on the output frame grid of the first frame of chunk ``c``."""
        return self.frames.closest_frame(self.window.start_of(c) + 0.5 * self.frame_duration)

    def active_local_speakers(self) -> np.ndarray:
        """(chunks, local_speakers) bool: the local speaker is active in at least one frame."""
        return np.nansum(self.data, axis=1) > 0


@dataclass(frozen=True)
class SpeakerCount:
    """Estimated number of simultaneously active speakers per output frame.

    data: (frames,) uint8, read-only; frame ``t`` is ``frames[t]`` on the file-level grid.
    """

    data: np.ndarray
    frames: SlidingWindow

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _read_only(self.data, np.uint8))
        if self.data.ndim != 1:
            raise ValueError(f"speaker count must be (frames,), got shape {self.data.shape}")

    def capped(self, max_speakers: int) -> SpeakerCount:
        """The same count, never above ``max_speakers``."""
        return SpeakerCount(np.minimum(self.data, max_speakers), self.frames)
