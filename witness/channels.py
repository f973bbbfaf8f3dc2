"""Stereo calls with one party per channel: detect them, and take the speakers from the channels.

Call recorders (VoIP, call centres, phone apps) often write each party to its own channel;
then who spoke when is in the signal, and a diarization model can only make it worse.

Detection (``inspect``) looks at the two channels per 32 ms frame (Silero VAD's chunk, so
levels and speech probabilities line up): they must not be copies of each other (their
correlation), they must differ in level where there is speech (one channel well above the
other: ``separated``), each must lead in some of the speech (``leads``), and, checked last
because it costs speaker embeddings, each channel's own speech must be mostly one voice
(``one_voice``: the share of pairs of its pieces that sound alike, ``same_voice_share``).

A party is often audible faintly on the other channel (bleed, echo: tens of dB down, a few
tens of ms late). A channel's speech therefore counts only in frames where it *dominates*:
its level (smoothed over ~100 ms) is at most ``dominance_db`` below the other channel's
loudest level within ``max_delay`` seconds either side, so the other party's delayed bleed
never makes a turn, while real overlapping speech at a similar level does. Turns are the
channel's Silero speech regions over dominant frames; exclusive turns give an instant where
both parties speak to the louder channel. Whisper transcribes each channel's own speech
alone (``parties_apart``, ``WhisperEngine.transcribe_call``), so each word keeps the
speaker of its channel.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from witness.diarize.features import SAMPLE_RATE
from witness.vad import CHUNK, VadOptions, fixed_subwindows, regions_from_probabilities
from witness.progress import Progress
from witness.transcript import Turn

MODES = ("auto", "mix", "split")
LABELS = ("CHANNEL_1", "CHANNEL_2")
FRAME = CHUNK  # 512 samples, 32 ms


@dataclass(frozen=True)
class ChannelOptions:
    """When a stereo file is a split call, and how its channels become turns.

    max_correlation: channels more alike than this (1.0: a copy, dual mono) are one signal.
    separation_db, min_separated: a split call has one channel at least ``separation_db``
        louder than the other in at least ``min_separated`` of its speech frames (a room
        recorded by two microphones has a few dB between them).
    min_lead: each channel must be the one speaking in at least this share of the speech
        frames (a silent or near-silent channel is no party).
    min_one_voice: at least this share of pairs of a channel's pieces must sound like one voice
        (``same_voice_share``).
    dominance_db, max_delay: a channel speaks only where its level is at most ``dominance_db``
        below the other's loudest within ``max_delay`` s (bleed at -20 dB never does).
    vad: Silero's settings for each channel's speech; pauses under 0.3 s stay inside a turn
        (NIST's convention for speaker turns).
    """

    max_correlation: float = 0.9
    separation_db: float = 10.0
    min_separated: float = 0.5
    min_lead: float = 0.05
    min_one_voice: float = 0.75
    dominance_db: float = 10.0
    max_delay: float = 0.25
    vad: VadOptions = field(default_factory=lambda: VadOptions(min_silence=0.3))


@dataclass(frozen=True)
class ChannelEvidence:
    """What ``inspect`` measured, and the verdict. Shares are of the frames where either
    channel has speech; ``one_voice`` is None when the voice check did not run."""

    correlation: float
    separated: float
    leads: tuple[float, float]
    one_voice: tuple[float, float] | None
    split: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(correlation=round(self.correlation, 4), separated=round(self.separated, 4),
                 leads=[round(x, 4) for x in self.leads],
                 one_voice=None if self.one_voice is None else [round(x, 4) for x in self.one_voice])
        return d


@dataclass(frozen=True)
class ChannelTurns:
    """turns: each channel's speech (overlap kept), sorted; exclusive_turns: one speaker per
    instant, the louder channel where both speak."""

    turns: tuple[Turn, ...]
    exclusive_turns: tuple[Turn, ...]


# (signal (n,) float32, speech regions in s) -> how much those regions sound like one voice
VoiceShare = Callable[[np.ndarray, Sequence[tuple[float, float]]], float]


class StereoCall:
    """One two-channel file: per-frame levels, speech probabilities and dominance, computed
    once. ``channels``: (2, n) float32; ``probabilities``: (2, ceil(n / 512)) Silero speech
    probabilities of each channel."""

    def __init__(self, channels: np.ndarray, probabilities: np.ndarray, options: ChannelOptions = ChannelOptions()):
        self.channels = channels
        self.options = options
        self.levels, self.correlation = _levels(channels)
        self.probabilities = np.asarray(probabilities, dtype=np.float32)[:, : self.levels.shape[1]]
        self.dominant = _dominance(self.levels, options)

    @property
    def num_samples(self) -> int:
        return self.channels.shape[1]

    def inspect(self, voice_share: VoiceShare | None = None) -> ChannelEvidence:
        """Whether this is a split call (see the module docstring); ``voice_share`` runs
        the one-voice check last (None: skipped, ``one_voice`` None)."""
        o = self.options
        speech = self.probabilities >= o.vad.threshold
        any_speech = speech.any(axis=0)
        frames = max(1, int(any_speech.sum()))
        gap_db = np.abs(10 * np.log10(np.maximum(self.levels[0], 1e-10) / np.maximum(self.levels[1], 1e-10)))
        separated = float((gap_db[any_speech] >= o.separation_db).sum() / frames)
        leads = tuple(float((speech[c] & self.dominant[c]).sum() / frames) for c in (0, 1))
        evidence = ChannelEvidence(self.correlation, separated, leads, None, False, "")
        if not any_speech.any():
            return _verdict(evidence, "no speech on either channel")
        if self.correlation > o.max_correlation:
            return _verdict(evidence, f"the channels are copies (correlation {self.correlation:.2f})")
        if separated < o.min_separated:
            return _verdict(evidence, f"the channels hear the same voices ({separated:.0%} of speech "
                                      f"{o.separation_db:g} dB apart)")
        if min(leads) < o.min_lead:
            return _verdict(evidence, f"channel {1 + int(np.argmin(leads))} holds almost no speech of its own")
        if voice_share is None:
            return _verdict(evidence, "", split=True)
        shares = tuple(voice_share(self.channels[c], self.speech_regions(c)) for c in (0, 1))
        evidence = replace(evidence, one_voice=shares)
        if min(shares) < o.min_one_voice:
            return _verdict(evidence, f"channel {1 + int(np.argmin(shares))} holds several voices")
        return _verdict(evidence, "", split=True)

    def own_probabilities(self, channel: int) -> np.ndarray:
        """(frames,) float32: the channel's speech probabilities where it dominates, else 0."""
        return np.where(self.dominant[channel], self.probabilities[channel], 0.0).astype(np.float32)

    def speech_regions(self, channel: int) -> list[tuple[float, float]]:
        """The channel's own speech: Silero regions over the frames it dominates, in s."""
        return regions_from_probabilities(self.own_probabilities(channel), self.num_samples, self.options.vad)

    def turns(self, labels: Sequence[str] = LABELS) -> ChannelTurns:
        """Each channel's speech as turns of its label."""
        per_channel = [[Turn(s, e, labels[c]) for s, e in self.speech_regions(c)] for c in (0, 1)]
        turns = tuple(sorted(per_channel[0] + per_channel[1], key=lambda t: (t.start, t.end, t.speaker)))
        return ChannelTurns(turns, _exclusive(per_channel, self.levels))


def _verdict(evidence: ChannelEvidence, reason: str, split: bool = False) -> ChannelEvidence:
    return replace(evidence, split=split, reason=reason or "one voice per channel, the channels apart")


def _levels(channels: np.ndarray, block_frames: int = 1024) -> tuple[np.ndarray, float]:
    """(levels (2, frames) float64 mean square per 512-sample frame (the last zero-padded),
    correlation of the two channels (0.0 when one is silent)), read block by block so an
    hour-long memory-mapped file is never copied whole."""
    n = channels.shape[1]
    levels = np.zeros((2, -(-n // FRAME)), dtype=np.float64)
    cross = 0.0
    step = FRAME * block_frames
    for start in range(0, n, step):
        x = np.asarray(channels[:, start:start + step], dtype=np.float64)
        if x.shape[1] % FRAME:
            x = np.pad(x, ((0, 0), (0, FRAME - x.shape[1] % FRAME)))
        squares = (x * x).reshape(2, -1, FRAME).mean(axis=2)
        levels[:, start // FRAME: start // FRAME + squares.shape[1]] = squares
        cross += float(np.dot(x[0], x[1]))
    power = levels.sum(axis=1) * FRAME
    correlation = cross / math.sqrt(power[0] * power[1]) if power.min() > 0 else 0.0
    return levels, correlation


def _dominance(levels: np.ndarray, options: ChannelOptions) -> np.ndarray:
    """(2, frames) bool: where each channel's level (averaged over 3 frames) is at most
    ``dominance_db`` below the other's loudest within ``max_delay`` s either side."""
    smooth = np.stack([np.convolve(np.pad(row, 1), np.ones(3) / 3, mode="valid") for row in levels])  # any length
    reach = max(1, math.ceil(options.max_delay * SAMPLE_RATE / FRAME))
    padded = np.pad(smooth, ((0, 0), (reach, reach)))
    loudest = sliding_window_view(padded, 2 * reach + 1, axis=1).max(axis=2)
    floor = 10 ** (-options.dominance_db / 10)
    return np.stack([smooth[c] >= np.maximum(loudest[1 - c] * floor, 1e-10) for c in (0, 1)])


def _exclusive(per_channel: Sequence[Sequence[Turn]], levels: np.ndarray) -> tuple[Turn, ...]:
    """One speaker per instant: where both channels have a turn, the louder per frame."""
    edges = sorted({x for turns in per_channel for t in turns for x in (t.start, t.end)})
    starts = [[t.start for t in turns] for turns in per_channel]
    pieces: list[Turn] = []
    for a, b in zip(edges, edges[1:]):
        active = [c for c in (0, 1) if _covers(per_channel[c], starts[c], a, b)]
        if len(active) == 1:
            pieces.append(Turn(a, b, per_channel[active[0]][0].speaker))
        elif len(active) == 2:
            pieces += _louder(a, b, levels, [per_channel[c][0].speaker for c in (0, 1)])
    joined: list[Turn] = []
    for p in pieces:
        if joined and joined[-1].speaker == p.speaker and abs(joined[-1].end - p.start) < 1e-9:
            joined[-1] = Turn(joined[-1].start, p.end, p.speaker)
        else:
            joined.append(p)
    return tuple(joined)


def _covers(turns: Sequence[Turn], starts: list[float], a: float, b: float) -> bool:
    i = bisect_right(starts, a) - 1
    return i >= 0 and turns[i].end >= b


def _louder(a: float, b: float, levels: np.ndarray, labels: Sequence[str]) -> list[Turn]:
    """[a, b) s cut where the louder channel changes (per frame)."""
    first = int(a * SAMPLE_RATE) // FRAME
    last = max(first + 1, -(-int(b * SAMPLE_RATE) // FRAME))
    owner = (levels[1, first:last] > levels[0, first:last]).astype(int)
    if len(owner) == 0:
        return [Turn(a, b, labels[0])]
    changes = np.flatnonzero(np.diff(owner)) + 1
    cuts = [a, *np.clip((first + changes) * FRAME / SAMPLE_RATE, a, b).tolist(), b]
    owners = [owner[0], *owner[changes]]
    return [Turn(s, e, labels[o]) for s, e, o in zip(cuts, cuts[1:], owners) if e > s]


def same_voice_share(embedder, signal: np.ndarray, regions: Sequence[tuple[float, float]],
                     pieces_max: int = 60, same: float = 0.5) -> float:
    """How much the speech in ``regions`` of ``signal`` ((n,) float32) sounds like one voice:
    the share of pairs of its 2 s pieces (at most ``pieces_max``, spread over the file) whose
    ``embedder`` embeddings have cosine similarity >= ``same``. 1.0 with fewer than 2 pieces.
    Measured with CAM++ on the stereo dev calls (``scripts/stereo_cases.py``): 0.80-1.00 on
    the eight one-voice channels, 0.50-0.67 on the three channels holding two voices."""
    from witness.diarize.pieces import piece_batch

    pieces = fixed_subwindows(list(regions), 2.0, 1.0)
    if len(pieces) > pieces_max:
        pieces = [pieces[i] for i in np.linspace(0, len(pieces) - 1, pieces_max).round().astype(int)]
    if len(pieces) < 2:
        return 1.0
    vectors = embedder.embed(*piece_batch(signal, pieces))
    vectors = vectors[~np.isnan(vectors).any(axis=1)]
    if len(vectors) < 2:
        return 1.0
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    pairs = np.triu_indices(len(vectors), 1)
    return float(((vectors @ vectors.T)[pairs] >= same).mean())


def stereo_call(stereo: np.ndarray, vad, options: ChannelOptions = ChannelOptions(),
                progress: Progress | None = None) -> StereoCall:
    """``stereo`` ((2, n) float32) with each channel's speech probabilities from ``vad`` (a
    ``SileroVad``); ``progress`` hears ("vad", channels done, 2)."""
    probabilities = []
    for c in (0, 1):
        if progress is not None:
            progress("vad", c, 2)
        probabilities.append(vad.probabilities(stereo[c]))
    if progress is not None:
        progress("vad", 2, 2)
    return StereoCall(stereo, np.stack(probabilities), options)


def diarize_channels(stereo: np.ndarray, vad, mode: str, voice_share: VoiceShare | None,
                     options: ChannelOptions = ChannelOptions(),
                     progress: Progress | None = None) -> tuple[ChannelEvidence, ChannelTurns | None]:
    """(the evidence, the channels' turns when they decide the speakers) for ``stereo``
    ((2, n) float32) under ``mode`` ("auto": when ``inspect`` says so; "split": always, the
    voice check skipped). ``vad``: a ``SileroVad``; ``progress`` hears ("vad", channels done, 2)."""
    _check_mode(mode)
    call = stereo_call(stereo, vad, options, progress)
    evidence = call.inspect(voice_share if mode == "auto" else None)
    if mode == "split" and not evidence.split:
        evidence = _verdict(evidence, f"asked for (--channels split), although {evidence.reason}", split=True)
    return evidence, call.turns() if evidence.split else None


def parties_apart(stereo: np.ndarray, vad, mode: str, options: ChannelOptions = ChannelOptions()) -> StereoCall | None:
    """The call when its channels are to be transcribed apart, one party each: under "split"
    always, under "auto" when ``inspect`` says so without the voice check (which needs
    speaker embeddings). Whenever ``diarize_channels`` takes the speakers from the channels
    this holds too (same VAD, same measures); when it does not because one channel holds
    several voices, each channel's own speech is still transcribed alone, and the diarization
    model's turns name the speakers."""
    _check_mode(mode)
    if mode == "auto" and _levels(stereo)[1] > options.max_correlation:
        return None  # copies of one signal (dual mono, common): no VAD spent on them
    call = stereo_call(stereo, vad, options)
    return call if mode == "split" or call.inspect().split else None


def _check_mode(mode: str) -> None:
    if mode not in ("auto", "split"):
        raise ValueError(f"channels mode {mode!r}: choose from {', '.join(MODES)}")
