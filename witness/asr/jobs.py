"""What the engine decodes and what it gets back: a file's tracks, the pieces to decode
(``Job``), one decoding of a piece (``Candidate``, ``Decoded``) and the progress over them.
The engine (``whisper``) makes the pieces' jobs; ``windows`` and ``gaps`` make more from what
decoding those left."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from witness.asr.speech import SpeechPiece
from witness.audio import SAMPLE_RATE
from witness.progress import Progress

if TYPE_CHECKING:
    from witness.asr.whisper import AsrSegment

# whisper.cpp refuses audio under 100 ms, and with DTW timestamps aborts the process on audio
# under ~0.17 s (WHISPER_ASSERT filter_width < a->ne[2]: fewer audio frames than DTW's median
# filter is wide); no word fits in that
MIN_PIECE_SAMPLES = SAMPLE_RATE // 5


@dataclass(frozen=True)
class Track:
    """One signal of a file to decode: ``signal`` (samples,) float32; ``probabilities``: its
    speech, one Silero probability per 512 samples (None: no speech gate, all of it is
    decoded); ``own``: (start, end) sample spans outside which its audio is silenced (None:
    none is), so that another party's bleed between them is not decoded."""

    signal: np.ndarray
    probabilities: np.ndarray | None = None
    own: tuple[tuple[int, int], ...] | None = None


@dataclass(frozen=True)
class Job:
    """A piece to decode: of track ``track``, its audio ((samples,) float32), whether it is
    the track's first (the one ``initial_prompt`` conditions), whether its decoding stops before
    a second encoder run (``windows.OneWindow``; off for rests), and whether it is a ``gaps`` one."""

    track: int
    piece: SpeechPiece
    audio: np.ndarray
    first: bool
    one_window: bool = True
    speech_gap: bool = False


Decoded = tuple[list["AsrSegment"], bool, "SpeechPiece | None"]  # segments, decoded again, undecoded rest


@dataclass(frozen=True)
class Candidate:
    """One decoding of a piece: its segments, why it looks like a loop (None: it passes), its
    longest run of one n-gram, which pass made it (0: the first), its normalised words, and
    the sample offset where it stopped short of the piece's end (None: it did not)."""

    segments: list[AsrSegment]
    failure: str | None
    repeats: int
    attempt: int
    words: tuple[str, ...]
    rest: int | None = None

    def decoded(self, piece: SpeechPiece, again: bool) -> Decoded:
        """What the engine's ``_decode`` returns for this candidate of ``piece``: a rest shorter
        than whisper.cpp takes is dropped."""
        rest = piece.after(self.rest) if self.rest is not None else None
        return self.segments, again, rest if rest is not None and rest.samples >= MIN_PIECE_SAMPLES else None

    def rank(self) -> tuple:
        """Smaller is better: no loop first (among loops, fewer repeats), then the coolest pass."""
        loops = self.failure is not None
        return (loops, self.repeats if loops else 0, self.attempt)


class ProgressTracker:
    """Maps whisper.cpp's per-piece percentages onto the whole file, pieces decoded at once
    included (the share of samples done); never goes backwards."""

    def __init__(self, callback: Progress | None, total: int):
        self.callback, self.total, self.last = callback, max(total, 1), -1
        self._done: dict[int, float] = {}  # samples done per piece
        self._lock = threading.Lock()  # whisper.cpp calls back on each decoder's thread

    def for_piece(self, index: int, samples: int) -> Callable[[int], None] | None:
        """The callback for piece ``index`` of ``samples`` samples."""
        if self.callback is None:
            return None

        def report(percent: int) -> None:
            self._done[index] = samples * percent / 100
            self._report(int(100 * sum(self._done.values()) / self.total))

        return report

    def _report(self, percent: int) -> None:
        with self._lock:
            if self.callback is not None and percent > self.last:
                self.last = percent
                self.callback("transcribe", min(percent, 100), 100)

    def done(self) -> None:
        self._report(100)
