"""Speech-gated decoding: which audio Whisper is handed, and how its times map back.

Silero VAD's per-chunk speech probabilities ((chunks,) float32, one per 512 samples) become
speech regions (``regions_from_probabilities`` with ``GateOptions.vad``). Regions closer
than ``join_gap`` seconds are one span (a short pause stays as it was said); a span longer
than ``max_piece`` is cut at its least speech-like chunk. Spans are then packed, in order,
into pieces of at most ``max_piece`` seconds (Whisper's 30 s window): a piece is its spans'
audio laid end to end, so a long silence, ring tone or hold music between them is never
handed to the decoder. ``SpeechPiece.to_file`` maps a time in the piece back to the file, and
``SpeechPiece.word_to_file`` a word, kept inside the span it was said in.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from witness.asr.chunks import chunk_spans
from witness.asr.options import WINDOW_SECONDS
from witness.asr.words import plausible_seconds
from witness.audio import SAMPLE_RATE
from witness.transcript import Word
from witness.vad import CHUNK, VadOptions, regions_from_probabilities


@dataclass(frozen=True)
class GateOptions:
    """How speech is found and packed.

    vad: Silero's hysteresis (speech from probability 0.5, ended after 0.3 s below 0.35),
        regions under 0.25 s dropped, each widened by 0.2 s so word edges are not clipped.
    join_gap: pauses shorter than this (1.0 s) stay inside a span as they were.
    max_piece: the longest piece, seconds (30: one Whisper window, so the encoder never
        sees audio it does not decode).

    Fuller pieces, measured and dropped (issue 24; tiny.en-q8_0, scripts/decode_policy.py
    --sets dev long, each variant beside this packing in one run, CPU s of the decoding). This
    packing: dev calls + sample 16 pieces (mean 21.0 s of speech per 30 s window; at best 14,
    file by file), 18 encoder runs (2 for rests), 34.4 CPU s, WER 8.97% (each digit a word);
    check_long 75 pieces (mean 23.6 s; at best 59), 80 encoder runs, 153.6 CPU s, 22.63%.
    Filling each piece to F seconds, the span that does not fit cut at its latest VAD chunk
    under 0.1 in the 10 s before the room runs out: F = 28, 14 pieces and 16 runs, 31.9 CPU s,
    WER 12.71% (devcall_03 11.6% -> 25.9%: digit strings cut between pieces, two stretches
    skipped); check_long 70 pieces, 74 runs, 152.6 CPU s, 22.94%. F = 29: 14 pieces, 16 runs,
    32.3 CPU s, 9.65% (devcall_02 and _03 worse, _04 better); check_long 66 pieces, 74 runs
    (more rests and loops decoded again), 165.4 CPU s, 24.06%. As many pieces of even length
    (the least F giving F = 28's count; another run): devcall_03 looped, 59.8%. Spans whole,
    first-fit decreasing out of order: 14 pieces but 18 runs (two skipped stretches decoded
    again), 11.01%; on check_long whisper.cpp aborted the process on a pack of rests (DTW in
    a 0.13 s window, which ``windows.DTW_FRAMES`` now refuses). On the v2 check part (28
    files) F = 28 plans as many pieces as this (154), F = 29 147. Fewer encoder runs save at
    most about 7% of the ASR CPU time, and tiny.en's words move wherever a piece changes.
    """

    vad: VadOptions = field(default_factory=lambda: VadOptions(min_silence=0.3, pad=0.2))
    join_gap: float = 1.0
    max_piece: float = WINDOW_SECONDS


@dataclass(frozen=True)
class SpeechPiece:
    """Audio spans (start, end sample of the file, end exclusive) decoded as one, with ``gap``
    samples of silence at each seam (0: none; the rests of pieces are decoded so apart)."""

    spans: tuple[tuple[int, int], ...]
    gap: int = 0

    @property
    def samples(self) -> int:
        return sum(e - s for s, e in self.spans) + self.gap * max(0, len(self.spans) - 1)

    def audio(self, signal: np.ndarray, own: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
        """(samples,) float32, contiguous: the spans of ``signal`` ((samples,) float32) end to
        end (``gap`` apart); with ``own`` (sorted sample spans), silent outside them."""
        parts = [signal[s:e] for s, e in self.spans]
        if own is None and not self.gap:
            return np.ascontiguousarray(parts[0] if len(parts) == 1 else np.concatenate(parts), dtype=np.float32)
        out = np.zeros(self.samples, dtype=np.float32)
        offset = 0
        for (s, e), part in zip(self.spans, parts):
            for a, b in [(s, e)] if own is None else own[max(0, bisect_right(own, (s,)) - 1):]:
                if a >= e:
                    break
                lo, hi = max(a, s), min(b, e)
                if hi > lo:
                    out[offset + lo - s: offset + hi - s] = part[lo - s: hi - s]
            offset += e - s + self.gap
        return out

    def after(self, offset: int) -> "SpeechPiece | None":
        """The rest of this piece from ``offset`` samples into it (None: nothing is left)."""
        spans = []
        for s, e in self.spans:
            if offset < e - s:
                spans.append((s + max(offset, 0), e))
            offset -= e - s + self.gap
        return SpeechPiece(tuple(spans), self.gap) if spans else None

    def to_file(self, seconds: float) -> float:
        """File time of ``seconds`` into this piece; at a seam between spans (or in the gap
        there) it belongs to the next span."""
        at = seconds * SAMPLE_RATE
        k, offset = self._span(at)
        return self._in_span(k, offset, at)

    def word_to_file(self, start: float, end: float, length: float | None = None) -> tuple[int, float, float]:
        """(span index, file start, file end) of a word said ``start``..``end`` seconds into this
        piece, both ends inside the one span that holds most of its last ``length`` seconds (None:
        all of it), the ``gap`` of silence after a span counted as its own (``to_file``'s span
        for its start when none holds any). A word is said within one span, yet DTW can end it
        past a seam, where the piece's audio jumps over the silence between spans: on corpus v2
        tune_025 a rest's last word ("it.", 196.8 s) ended 0.02 s past the 1 s of silence after
        its rest, in the next rest of its pack, at 245.2 s, and every later word of the track was
        pushed there (``words.monotonic``). DTW marks where a word ends, and it starts where the
        word before it ended (``words.token_spans``): in the silence after a rest when that one
        ran over, so only the last ``length`` seconds count."""
        a, b = start * SAMPLE_RATE, end * SAMPLE_RATE
        said = a if length is None else max(a, b - length * SAMPLE_RATE)
        best, most, offset, offsets = -1, 0.0, 0, []
        for k, (s, e) in enumerate(self.spans):
            offsets.append(offset)
            overlap = min(b, offset + e - s + self.gap) - max(said, offset)
            if overlap > most:
                best, most = k, overlap
            offset += e - s + self.gap
        k, offset = (best, offsets[best]) if best >= 0 else self._span(a)
        return k, self._in_span(k, offset, a), self._in_span(k, offset, b)

    def place(self, words: Sequence[Word]) -> list[list[Word]]:
        """``words`` (in order, times into this piece) in file times, each inside its span
        (``word_to_file``, over as long as its letters plausibly last): one run, or in a pack of
        rests (``gap``) a run per stretch of words in one span. whisper.cpp can say two rests'
        words in one segment: kept whole, a segment of corpus v2 check_006 started at 45.6 s
        and ended at 123.4 s, and ``words.monotonic`` pushed the 205 words between to its end."""
        runs: list[list[Word]] = []
        last = None
        for word in words:
            span, start, end = self.word_to_file(word.start, word.end, plausible_seconds(word.text))
            if not runs or (self.gap and span != last):
                runs.append([])
            runs[-1].append(replace(word, start=start, end=end))
            last = span
        return runs

    def _in_span(self, k: int, offset: int, at: float) -> float:
        """File time of ``at`` samples into this piece, clamped into span ``k`` (which starts
        ``offset`` samples in); 0.0 when ``k`` is -1 (no spans)."""
        if k < 0:
            return 0.0
        s, e = self.spans[k]
        return (s + min(max(at - offset, 0.0), e - s)) / SAMPLE_RATE

    def _span(self, at: float) -> tuple[int, int]:
        """(index, offset into this piece) of the span that ``at`` samples into the piece falls
        in (at a seam or in the gap there: the next span); the last span past the end, (-1, 0)
        without spans."""
        offset = 0
        for k, (s, e) in enumerate(self.spans):
            if at < offset + e - s or k == len(self.spans) - 1:
                return k, offset
            offset += e - s + self.gap
        return -1, 0


def plan_pieces(probs: np.ndarray, num_samples: int, options: GateOptions = GateOptions()) -> list[SpeechPiece]:
    """Pieces of speech in file order from VAD probabilities ((chunks,) float32, one per 512
    samples) of a (num_samples,) signal; an empty list when nothing is speech."""
    regions = regions_from_probabilities(probs, num_samples, options.vad)
    spans = _join([(int(s * SAMPLE_RATE), int(e * SAMPLE_RATE)) for s, e in regions],
                  int(options.join_gap * SAMPLE_RATE))
    limit = int(options.max_piece * SAMPLE_RATE)
    spans = [part for span in spans for part in _split(span, probs, limit)]
    return pack_pieces([SpeechPiece((span,)) for span in spans], options.max_piece)


def pack_pieces(pieces: Sequence[SpeechPiece], max_piece: float = WINDOW_SECONDS, gap: int = 0) -> list[SpeechPiece]:
    """The spans of ``pieces`` laid end to end, in order, with ``gap`` samples of silence at
    every seam, into as few pieces of at most ``max_piece`` seconds as that allows; a piece
    is never cut."""
    out: list[list[tuple[int, int]]] = []
    length, limit = 0, int(max_piece * SAMPLE_RATE)
    for piece in pieces:
        size = sum(e - s for s, e in piece.spans) + gap * (len(piece.spans) - 1)
        if out and length + gap + size <= limit:
            out[-1].extend(piece.spans)
            length += gap + size
        else:
            out.append(list(piece.spans))
            length = size
    return [SpeechPiece(tuple(spans), gap) for spans in out]


def whole_file_pieces(signal: np.ndarray, max_seconds: float) -> list[SpeechPiece]:
    """No VAD: all of ``signal`` ((samples,) float32) in consecutive pieces of at most
    ``max_seconds`` (0: one piece), cut at quiet moments (``chunks.chunk_spans``)."""
    return [SpeechPiece((span,)) for span in chunk_spans(signal, SAMPLE_RATE, max_seconds)]


def _join(spans: list[tuple[int, int]], gap: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s - out[-1][1] < gap:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _split(span: tuple[int, int], probs: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """``span`` cut into parts of at most ``limit`` samples, each cut at the chunk with the
    lowest speech probability in the last third before the limit."""
    start, end = span
    parts = []
    while end - start > limit:
        lo, hi = (start + limit - limit // 3) // CHUNK, (start + limit) // CHUNK
        window = probs[lo:hi]
        cut = (lo + int(np.argmin(window))) * CHUNK if len(window) else start + limit
        cut = min(max(cut, start + CHUNK), start + limit)
        parts.append((start, cut))
        start = cut
    parts.append((start, end))
    return parts


def speech_share(probs: np.ndarray, start: float, end: float, threshold: float = 0.5) -> float:
    """Share of the VAD chunks ((chunks,) float32 probabilities) in [start, end) seconds that
    are speech (probability >= ``threshold``); 0.0 for an empty span."""
    lo = int(start * SAMPLE_RATE) // CHUNK
    hi = max(lo + 1, -(-int(end * SAMPLE_RATE) // CHUNK))
    window = probs[lo:hi]
    return float(np.mean(window >= threshold)) if len(window) else 0.0
