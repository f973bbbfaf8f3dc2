"""Loading the speakrs fixtures (pyannote's arrays) for the tests/test_diarize_*.py files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from witness.diarize.windows import Segmentations, SlidingWindow

PREFIXES = ("pipeline", "3speakers", "single_speaker", "short")


def load(fixtures_dir: Path, name: str) -> np.ndarray:
    """A fixture array; a missing file raises (the test fails, never skips)."""
    return np.load(fixtures_dir / name)


def window(fixtures_dir: Path, prefix: str, stage: str) -> SlidingWindow:
    """The sliding window saved with ``<prefix>_<stage>_data.npy``."""
    spec = json.loads((fixtures_dir / f"{prefix}_{stage}_window.json").read_text())
    return SlidingWindow(start=spec["start"], duration=spec["duration"], step=spec["step"])


def segmentations(fixtures_dir: Path, prefix: str) -> Segmentations:
    frames = window(fixtures_dir, prefix, "speaker_counting")
    return Segmentations(
        load(fixtures_dir, f"{prefix}_segmentation_data.npy"),
        window(fixtures_dir, prefix, "segmentation"),
        frame_step=frames.step,
        frame_duration=frames.duration,
    )


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """True when label arrays a and b (same shape) are equal up to renaming the labels."""
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))
