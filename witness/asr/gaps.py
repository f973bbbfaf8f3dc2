"""Speech that came back without words: the stretches of a decoded piece that the VAD calls
speech and where Whisper wrote nothing.

whisper.cpp can skip speech it heard. On a corpus call (v2 check_013) tiny.en-q8_0 decoded a
24 s piece as "<0.00> So, Wanda Ring singer. <23.92>": one segment whose closing timestamp
jumped over 22 s of speech, after which the window was done. 64 samples more of the same
piece, or tiny.en, and it wrote the five sentences there. ``speech_gaps`` finds such stretches
(an early end of text, a window with no text, a timestamp jump: whatever the cause, speech
with no word on it); the engine decodes each again alone, in a window of its own, and keeps
what passes the guards.
"""

from __future__ import annotations

import logging
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from witness.asr.guards import is_silence_phrase
from witness.asr.jobs import MIN_PIECE_SAMPLES, Candidate, Decoded, Job, Track
from witness.asr.speech import SpeechPiece, speech_share
from witness.audio import SAMPLE_RATE
from witness.transcript import Word

log = logging.getLogger(__name__)

GAP_ROUNDS = 2  # a stretch decoded again alone, and a stretch its words leave


@dataclass(frozen=True)
class GapOptions:
    """When a stretch without words is decoded again.

    min_speech: seconds the VAD calls speech in it (2.5: a pause between sentences is under 1 s
        and is never speech; a stretch of this much speech holds several words).
    word_reach: a word covers at most this long from its start (1.0 s): DTW or a timestamp jump
        can stretch the last word of a segment over the speech that was skipped.

    The stretch is decoded from the end of the word before it to the start of the word after:
    with 0.3 s of those words in its window, a loud word set whisper.cpp's log-mel range and the
    quiet speech after it came back as that word alone (the sample call, its last 20 s 30 dB
    down: tests/asr/test_gaps.py).
    """

    min_speech: float = 2.5
    word_reach: float = 1.0


def redecode_gaps(tracks: list[Track], pieces: list[Job], jobs: list[Job], decoded: list[Decoded],
                  decode: Callable[[list[Job]], list[Decoded]]) -> list[Job]:
    """Stretches of ``pieces`` that decoding ``jobs`` (pieces, rests; ``decoded``, in order) left
    without words, each decoded alone by ``decode`` (into ``decoded``, appended), and what their
    words leave so once more: the gaps' jobs, in ``decoded``'s order."""
    done: list[Job] = []
    for _ in range(GAP_ROUNDS):
        gaps = [Job(k, gap, gap.audio(track.signal, track.own), first=False, one_window=False, speech_gap=True)
                for k, track in enumerate(tracks) if track.probabilities is not None  # no VAD: none
                for gap in track_gaps([j.piece for j in pieces if j.track == k], [w for j, d in zip(
                    jobs + done, decoded) if j.track == k for s in d[0] for w in s.words], track.probabilities)
                if gap.samples >= MIN_PIECE_SAMPLES]
        decoded += decode(gaps)
        done += gaps
        pieces = [g for g, (segments, _, _) in zip(gaps, decoded[len(decoded) - len(gaps):]) if segments]
    return done


def kept(found: Candidate, piece: SpeechPiece) -> Decoded:
    """What a stretch decoded alone (``piece``, its one greedy pass ``found``) gives: its segments
    when its text is no loop and not only Whisper's silence phrases."""
    keep = found.failure is None and not is_silence_phrase(" ".join(s.text for s in found.segments))
    if found.segments and not keep:
        log.info("speech at %.1f s decoded alone: %s; not kept", piece.to_file(0.0), found.failure or "silence")
    return found.segments if keep else [], False, None


def track_gaps(pieces: Sequence[SpeechPiece], words: Sequence[Word], probs: np.ndarray,
               options: GapOptions = GapOptions()) -> list[SpeechPiece]:
    """``speech_gaps`` of each of a track's ``pieces`` (disjoint), given all the words decoded
    from the track (file times, any order: a piece's rest may have been decoded elsewhere)."""
    words = sorted(words, key=lambda w: w.start)
    starts = [w.start for w in words]
    out = []
    for piece in pieces:
        lo = bisect_left(starts, piece.spans[0][0] / SAMPLE_RATE - options.word_reach)
        hi = bisect_right(starts, piece.spans[-1][1] / SAMPLE_RATE)
        out += speech_gaps(piece, words[lo:hi], probs, options)
    return out


def speech_gaps(piece: SpeechPiece, words: Sequence[Word], probs: np.ndarray,
                options: GapOptions = GapOptions()) -> list[SpeechPiece]:
    """The stretches of ``piece`` (already decoded into ``words``, file times) that hold at
    least ``options.min_speech`` seconds of speech by ``probs`` (Silero probabilities, one per
    512 samples of the file) and no word, each a piece of its own (a stretch may run over a
    seam between the piece's spans)."""
    reach = options.word_reach
    covered = sorted((round(w.start * SAMPLE_RATE), round(min(w.end, w.start + reach) * SAMPLE_RATE)) for w in words)
    stretches: list[list[tuple[int, int]]] = []
    previous_end = None
    for s, e in piece.spans:
        for a, b in _uncovered(s, e, covered):
            if stretches and a == s and stretches[-1][-1][1] == previous_end:
                stretches[-1].append((a, b))  # it goes on over the seam
            else:
                stretches.append([(a, b)])
        previous_end = e
    return [SpeechPiece(tuple(spans), piece.gap) for spans in stretches
            if sum(speech_share(probs, a / SAMPLE_RATE, b / SAMPLE_RATE) * (b - a) for a, b in spans)
            >= options.min_speech * SAMPLE_RATE]


def _uncovered(start: int, end: int, covered: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The parts of [start, end) outside every (sorted) ``covered`` interval."""
    cursor = start
    for a, b in covered:
        if a >= end:
            break
        if a > cursor:
            yield cursor, a
        cursor = max(cursor, b)
    if cursor < end:
        yield cursor, end

