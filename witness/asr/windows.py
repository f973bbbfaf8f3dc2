"""One encoder run per speech piece: what whisper.cpp leaves of a piece is decoded with the others' rests.

A speech piece fits one 30 s window, yet whisper.cpp often encodes it twice. It moves its
window to the last timestamp it decoded; when the window's text ends with a segment that
opens and never closes (the piece ends mid-sentence, or the model stopped early), that is
before the piece's end, and a whole new 30 s window is encoded for the 1-5 s left. On the
30-minute corpus call 10 of 75 pieces did: 87 encoder runs for 77 decodes, with the encoder
about 60% of whisper.cpp's time. ``OneWindow`` lets a decode's first encoder run start and
refuses the next (whisper.cpp's encoder-begin callback, which ends that decode with the
first window's words), and knows where the refused window would have started; the engine
then lays the pieces' rests end to end into as few pieces as fit a window and decodes those
(``speech.pack_pieces``). whisper.cpp drops its text context for a rest under 5 s anyway.

Where a decode may take more windows (rests, ``gaps``), a window that would start with less
than ``DTW_FRAMES`` of audio left is refused too: whisper.cpp decodes a window down to 0.1 s,
and with DTW timestamps one that says anything in under 0.16 s aborts the process (its median
filter, 7 audio tokens wide, asserts ``filter_width < a->ne[2]``). A pack of rests of
check_long, 29.57 s, did: its first window's text ended at 29.44 s ("…the first violin
cello."), and tiny.en-q8_0 said more in the 0.13 s left (issue 24).
"""

from __future__ import annotations

from typing import Any, Callable

from witness.asr.jobs import Decoded, Job, Track
from witness.asr.speech import pack_pieces
from witness.audio import SAMPLE_RATE

CENTISECOND = SAMPLE_RATE // 100  # whisper.cpp's times are in 10 ms
DTW_FRAMES = 16  # the least audio, in 10 ms frames, whose window DTW can align (8 audio tokens)
REST_GAP = SAMPLE_RATE  # silence between the rests of pieces decoded together (``rest_jobs``)


class OneWindow:
    """One whisper_full call's window over a piece of ``samples`` samples: ``arm`` it on the
    call's parameters (``progress`` gets whisper.cpp's percentages); with ``guard`` it refuses
    a second encoder run, and afterwards ``rest`` says where the undecoded rest starts (None:
    the call decoded all of it). Without, it refuses only a window too short for DTW."""

    def __init__(self, samples: int, progress: Callable[[int], None] | None = None, guard: bool = True):
        self.samples = samples
        self.refused = False
        self._guard = guard
        self._runs = 0
        self._percent = 0  # of the piece before the window about to be encoded
        self._progress = progress

    def arm(self, params: Any) -> None:
        if self._progress is not None or self._guard:
            params.print_progress = True  # the bindings call the progress callback only when this is on
            params.set_progress_callback(self._on_progress)
        params.set_encoder_begin_callback(self._on_encoder)

    def _on_progress(self, percent: int) -> None:
        self._percent = percent
        if self._progress is not None:
            self._progress(percent)

    def _on_encoder(self, ctx: Any) -> bool:
        self._runs += 1
        if self._runs == 1:
            return True
        if self._guard:
            self.refused = True
            return False
        import _pywhispercpp as pw

        n = pw.whisper_full_n_segments(ctx)  # the window starts where the last segment ends, or later
        return not n or self.samples // CENTISECOND - pw.whisper_full_get_segment_t1(ctx, n - 1) >= DTW_FRAMES

    def rest(self, last_segment_end: int | None) -> int | None:
        """Sample offset into the piece where the refused window would have started, from the
        last percentage whisper.cpp reported (rounded down) and ``last_segment_end`` (the
        decoded text's last segment end, centiseconds into the piece; None: no text): the
        later of the two, never after the window's real start. None when nothing was refused."""
        if not self.refused:
            return None
        at = self._percent * self.samples // 100
        if last_segment_end is not None:
            at = max(at, last_segment_end * CENTISECOND)
        return min(at, self.samples)


def rest_jobs(tracks: list[Track], jobs: list[Job], decoded: list[Decoded]) -> list[Job]:
    """The rests that decoding ``jobs`` left, laid end to end per track into pieces of at most a
    window, each to be decoded whole. A rest ends where its piece did, often mid-sentence:
    silence (``REST_GAP``) keeps the next one out of its last segment, where DTW put the next
    rest's words (on the 30-minute corpus call, 250 s early)."""
    return [Job(k, piece, piece.audio(track.signal, track.own), first=False, one_window=False)
            for k, track in enumerate(tracks)
            for piece in pack_pieces([rest for job, (_, _, rest) in zip(jobs, decoded) if job.track == k and rest],
                                     gap=REST_GAP)]
