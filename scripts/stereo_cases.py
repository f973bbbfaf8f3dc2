"""Stereo calls with one party per channel, built from the dev set's simulated calls.

Each simulated call (``shared/data/dev-set/sim``) is made of single-speaker recordings at
exact sample positions (its ``.json``). From each utterance the stretch no other utterance
overlaps is cut out of the mix, so every piece holds one voice. Two speakers' pieces are
laid out again in their original order, one speaker per channel, with pauses and sometimes
an overlap at a change of speaker; then each channel hears the other party faintly
(``bleed_db`` down, ``delay`` seconds late: crosstalk, echo) over a faint noise floor.

Two references: ``spans``, the pieces' spans (who is exact by construction; but an utterance
span counts its inner pauses, up to a second in read speech, as speech), and ``reference``,
the speech Silero VAD finds in each party's own channel *before* crosstalk and noise are
added, with the split path's settings (pauses under 0.3 s kept inside a turn). DER against
``reference`` measures what the split path is for: that the other party's bleed, the delay
and the noise floor neither add nor remove turns. Texts go along (per whole utterance) for
scoring words.

``channel_groups`` may put two speakers on one channel (a conference on one side): a file
that must stay on the normal diarization path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from scripts import SHARED
from witness.audio import SAMPLE_RATE, load_audio, write_wav
from witness.channels import ChannelOptions
from witness.vad import SileroVad, regions_from_probabilities
from witness.transcript import Turn

SIM = SHARED / "data" / "dev-set" / "sim"
MIN_PIECE = 1.0  # s: shorter single-voice stretches are left out


@dataclass(frozen=True)
class StereoCall:
    """name; channels (2, n) float32; reference and spans: turns labelled CHANNEL_1/CHANNEL_2
    (the channel each speaker is on; see the module docstring); texts: (start, end, label,
    text) of each whole utterance kept (a piece cut short by an overlap has none)."""

    name: str
    channels: np.ndarray
    reference: tuple[Turn, ...]
    spans: tuple[Turn, ...]
    texts: tuple[tuple[float, float, str, str], ...]

    @property
    def duration(self) -> float:
        return self.channels.shape[1] / SAMPLE_RATE

    def write(self, path: Path) -> Path:
        """A 16-bit PCM stereo WAV of the call."""
        return write_wav(path, self.channels)


def _pieces(uri: str) -> list[tuple[str, float, float, str | None]]:
    """(speaker, start, end, text or None) of every single-voice stretch of the call,
    in time order; text only when the stretch is the whole utterance."""
    utterances = json.loads((SIM / f"{uri}.json").read_text())["utterances"]
    spans = [(u["start"], u["end"]) for u in utterances]
    pieces = []
    for k, u in enumerate(utterances):
        start, end = u["start"], u["end"]
        cut = [(max(s, start), min(e, end)) for j, (s, e) in enumerate(spans) if j != k and s < end and e > start]
        parts, at = [], start
        for s, e in sorted(cut):
            if s > at:
                parts.append((at, s))
            at = max(at, e)
        if at < end:
            parts.append((at, end))
        whole = not cut
        pieces += [(u["speaker"], s, e, u["text"] if whole else None) for s, e in parts if e - s >= MIN_PIECE]
    return sorted(pieces, key=lambda p: p[1])


def stereo_call(uri: str, vad: SileroVad, channel_groups: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
                bleed_db: float = -20.0, delay: float = 0.04, seed: int = 0) -> StereoCall:
    """The simulated call ``uri`` as a split stereo call. ``channel_groups``: the speakers on
    channel 1 and on channel 2 (default: the two with most speech, one each); ``vad`` makes
    the reference."""
    mix = load_audio(SIM / f"{uri}.wav").samples
    pieces = _pieces(uri)
    if channel_groups is None:
        seconds: dict[str, float] = {}
        for speaker, s, e, _ in pieces:
            seconds[speaker] = seconds.get(speaker, 0.0) + e - s
        top = sorted(seconds, key=seconds.get, reverse=True)[:2]
        channel_groups = ((top[0],), (top[1],))
    channel_of = {speaker: c for c, group in enumerate(channel_groups) for speaker in group}
    rng = np.random.default_rng(seed)
    placed, at, previous, ends = [], 0.5, None, [0.0, 0.0]
    for speaker, s, e, text in pieces:
        if speaker not in channel_of:
            continue
        c = channel_of[speaker]
        if previous is not None:
            at += rng.uniform(-0.8, -0.3) if c != previous and rng.random() < 0.25 else rng.uniform(0.3, 1.2)
            at = max(at, ends[c] + 0.3)  # one voice per channel never overlaps itself
        placed.append((c, at, mix[int(round(s * SAMPLE_RATE)):int(round(e * SAMPLE_RATE))], text))
        at, previous = at + (e - s), c
        ends[c] = at
    n = int((at + 0.5) * SAMPLE_RATE)
    own = np.zeros((2, n), dtype=np.float32)
    turns, texts = [], []
    for c, start, audio, text in placed:
        first = int(round(start * SAMPLE_RATE))
        own[c, first:first + len(audio)] += audio
        turn = Turn(first / SAMPLE_RATE, (first + len(audio)) / SAMPLE_RATE, f"CHANNEL_{c + 1}")
        turns.append(turn)
        if text is not None:
            texts.append((turn.start, turn.end, turn.speaker, text))
    lag = int(round(delay * SAMPLE_RATE))
    bleed = np.zeros_like(own)
    bleed[:, lag:] = own[::-1, : n - lag] * np.float32(10 ** (bleed_db / 20))
    noise = rng.normal(0.0, 10 ** (-65 / 20), size=own.shape).astype(np.float32)
    name = f"{uri}-stereo" if len(channel_groups[0]) == len(channel_groups[1]) == 1 else f"{uri}-stereo-shared"
    speech = [Turn(s, e, f"CHANNEL_{c + 1}") for c in (0, 1)
              for s, e in regions_from_probabilities(vad.probabilities(own[c]), n, ChannelOptions().vad)]
    return StereoCall(name, own + bleed + noise, tuple(sorted(speech, key=lambda t: t.start)),
                      tuple(sorted(turns, key=lambda t: t.start)), tuple(texts))


def stereo_calls(vad: SileroVad, layout: int = 0) -> list[StereoCall]:
    """The four simulated calls as split stereo calls, bleed -20 dB, each with its own delay
    (20 to 80 ms) and seed; ``layout`` > 0 lays the same pieces out anew (other pauses and
    overlaps), for more calls than four."""
    calls = [stereo_call(f"devcall_0{k}", vad, delay=0.02 * k, seed=k + 10 * layout) for k in (1, 2, 3, 4)]
    return [replace(call, name=f"{call.name}-{layout}") for call in calls] if layout else calls


def shared_channel_calls(vad: SileroVad) -> list[StereoCall]:
    """Two calls with two voices on one channel or both (a conference on one side): not
    one party per channel."""
    return [stereo_call("devcall_02", vad, (("jfk", "pocketsphinx_librivox_reader"), ("fsdd_theo",)), seed=5),
            stereo_call("devcall_03", vad, (("speechbrain_spk1", "librispeech_2412"), ("fsdd_nicolas", "fsdd_lucas")),
                        seed=6)]
