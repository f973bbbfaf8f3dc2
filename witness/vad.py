"""Silero VAD: speech regions, the fallback when no segmentation model can be had.

The model is stateful: it reads 512 new samples at a time (16 kHz) with the previous chunk's
last 64 samples in front, and carries a (2, 1, 128) state from chunk to chunk, as upstream's
``OnnxWrapper`` does. A long signal is read as a few stretches side by side in the model's
batch dimension (``LANES``), each stretch after the last ``LANE_WARMUP`` chunks before it so
its state has settled (the state remembers about a minute: a warm-up of 32 s still moved 45
chunks by over 0.01 on a 30-minute call, 64 s none that changed a region); ``workers`` threads
read a share of the lanes each (the same probabilities, bit for bit). Probabilities become regions with upstream's hysteresis (start at
``threshold``, end after ``min_silence`` below ``threshold - 0.15``), short regions dropped,
then padded. ``fixed_subwindows`` cuts regions into pieces of a fixed length for embedding.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from witness.diarize.features import SAMPLE_RATE, finite_audio
from witness.accel.onnx_session import CPU, LazySession

CHUNK = 512
CONTEXT = 64
STATE_SHAPE = (2, 1, 128)
LANES = 4  # stretches read side by side: 1.75x less CPU on a 30-minute call (8 or 16: no more)
LANE_WARMUP = 2000  # chunks (64 s) read before a stretch and thrown away


@dataclass(frozen=True)
class VadOptions:
    """Upstream's defaults.

    threshold: speech starts at this probability (0.5); it ends after ``min_silence``
    seconds (0.1) below ``threshold - 0.15``. Regions shorter than ``min_speech`` seconds
    (0.25) are dropped; the rest are widened by ``pad`` seconds (0.03) on each side, without
    overlapping their neighbours.
    """

    threshold: float = 0.5
    min_speech: float = 0.25
    min_silence: float = 0.1
    pad: float = 0.03


class SileroVad:
    """Silero VAD (``silero-vad.onnx``, v6) behind a lazily created session."""

    def __init__(self, path: str | Path, providers: Sequence[Any] = CPU, threads: int = 1, workers: int = 1):
        self.session = LazySession(path, providers, threads)
        self.workers = workers  # threads that read the lanes, each a share of them

    def probabilities(self, signal: np.ndarray, lanes: int = LANES, warmup: int = LANE_WARMUP) -> np.ndarray:
        """signal: (samples,) float32, 16 kHz → (ceil(samples / 512),) float32 speech
        probability of each 512-sample chunk (the last one zero-padded). Read in up to
        ``lanes`` stretches of at least four warm-ups each (module docstring), else in one."""
        signal = finite_audio(np.asarray(signal, dtype=np.float32).reshape(-1), "VAD input")
        n_chunks = -(-len(signal) // CHUNK)
        lanes = max(1, min(lanes, n_chunks // (4 * warmup) if warmup else lanes))
        warmup = warmup if lanes > 1 else 0
        steps = -(-(n_chunks + (lanes - 1) * warmup) // lanes)  # chunks each lane reads
        firsts = np.arange(lanes) * (steps - warmup)  # lane k reads from here; keeps all but its warm-up (lane 0: all)
        padded = np.zeros(CONTEXT + (firsts[-1] + steps) * CHUNK, dtype=np.float32)
        padded[CONTEXT:CONTEXT + len(signal)] = signal
        frames = firsts[:, None] * CHUNK + np.arange(CONTEXT + CHUNK)[None, :]
        out = np.empty((lanes, steps), dtype=np.float32)
        cuts = np.linspace(0, lanes, max(1, min(self.workers, lanes)) + 1).astype(int)
        groups = [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
        if len(groups) == 1:
            self._read(padded, frames, out)
        else:  # ONNX Runtime lets go of the GIL: each group of lanes on a thread of its own
            with ThreadPoolExecutor(len(groups), thread_name_prefix="vad") as pool:
                list(pool.map(lambda g: self._read(padded, frames[g], out[g]), groups))
        return np.concatenate([out[0], *out[1:, warmup:]])[:n_chunks]

    def _read(self, padded: np.ndarray, frames: np.ndarray, out: np.ndarray) -> None:
        """Read the lanes that start at ``frames`` ((lanes, 576) sample indices) for
        ``out.shape[1]`` chunks, each lane's probabilities into its row of ``out``."""
        state = np.zeros((STATE_SHAPE[0], len(frames), STATE_SHAPE[2]), dtype=np.float32)
        rate = np.array(SAMPLE_RATE, dtype=np.int64)
        for i in range(out.shape[1]):
            prob, state = self.session.run({"input": padded[frames + i * CHUNK], "state": state, "sr": rate})
            out[:, i] = prob.reshape(-1)

    def speech_regions(self, signal: np.ndarray,
                       options: VadOptions = VadOptions()) -> list[tuple[float, float]]:
        """Speech regions (start, end) in seconds, sorted and disjoint."""
        signal = np.asarray(signal).reshape(-1)
        return regions_from_probabilities(self.probabilities(signal), len(signal), options)


def regions_from_probabilities(probs: np.ndarray, num_samples: int,
                               options: VadOptions = VadOptions()) -> list[tuple[float, float]]:
    """Turn per-chunk speech probabilities ((chunks,) float32, one per 512 samples) into
    speech regions (start, end) in seconds within [0, num_samples / 16000]."""
    low = options.threshold - 0.15
    min_silence = options.min_silence * SAMPLE_RATE
    raw: list[tuple[int, int]] = []
    start, silent_since = None, None
    for i, p in enumerate(np.asarray(probs, dtype=np.float64)):
        at = i * CHUNK
        if p >= options.threshold:
            silent_since = None
            start = at if start is None else start
        elif p < low and start is not None:
            silent_since = at if silent_since is None else silent_since
            if at - silent_since >= min_silence:
                raw.append((start, silent_since))
                start, silent_since = None, None
    if start is not None:
        raw.append((start, num_samples))
    kept = [(s, e) for s, e in raw if e - s > options.min_speech * SAMPLE_RATE]
    return [(s / SAMPLE_RATE, e / SAMPLE_RATE) for s, e in _pad(kept, num_samples, options.pad)]


def _pad(regions: list[tuple[int, int]], num_samples: int, pad_s: float) -> list[tuple[int, int]]:
    """Widen each region by ``pad_s`` seconds; neighbours closer than two pads share the gap."""
    pad = int(pad_s * SAMPLE_RATE)
    out = []
    for k, (s, e) in enumerate(regions):
        left = max(0, s - pad) if k == 0 else max(s - pad, (regions[k - 1][1] + s) // 2)
        right = min(num_samples, e + pad) if k == len(regions) - 1 else min(e + pad, (e + regions[k + 1][0]) // 2)
        out.append((int(left), int(right)))
    return out


def fixed_subwindows(regions: list[tuple[float, float]], length: float = 2.0,
                     min_length: float = 1.0) -> list[tuple[float, float]]:
    """Cut each region into consecutive pieces of ``length`` seconds for embedding.

    A remainder of at least ``min_length`` seconds stays a (shorter) piece; a shorter
    remainder joins the piece before it; a region under ``min_length`` is kept whole (its
    embedding decides whether it is usable).
    """
    if length <= 0 or min_length <= 0:
        raise ValueError("sub-window length and minimum length must be positive")
    pieces = []
    for start, end in regions:
        cuts = list(np.arange(start, end, length)) + [end]
        if len(cuts) > 2 and cuts[-1] - cuts[-2] < min_length:
            del cuts[-2]
        pieces += [(float(a), float(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    return pieces
