"""Hyperparameters of the diarization stages, with pyannote's shipped values as defaults.

``COMMUNITY_1`` is pyannote/speaker-diarization-community-1 (pyannote.audio 4): AHC then VBx
on PLDA features. ``PYANNOTE_3_1`` is pyannote/speaker-diarization-3.1: AHC alone with a
higher threshold and a minimum cluster size. Presets override only the fields that differ;
make variants with ``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class SegmentationConfig:
    """Sliding-window segmentation (pyannote segmentation-3.0, powerset output).

    window_duration: 10.0 s, the model's training chunk length.
    window_step: 1.0 s (community-1 and 3.1: ``segmentation_step`` 0.1 of the window).
    num_local_speakers: 3 speakers per window in the powerset output.
    max_speakers_per_frame: 2, the largest powerset set (7 classes: {}, 3 singles, 3 pairs).
    frame_step: 0.016875 s, the model's output frame hop (270 samples at 16 kHz).
    frame_duration: 0.0619375 s, the receptive field of one output frame (991 samples).
    """

    window_duration: float = 10.0
    window_step: float = 1.0
    num_local_speakers: int = 3
    max_speakers_per_frame: int = 2
    frame_step: float = 0.016875
    frame_duration: float = 0.0619375


@dataclass(frozen=True)
class ClusteringConfig:
    """Clustering of the (window, local speaker) embeddings into global speakers.

    method: "vbx" (community-1): AHC initialises VBx on PLDA features; when no PLDA
        parameters are given it falls back to the AHC path below. "ahc" (3.1): AHC alone.
    threshold: 0.6, the AHC distance at which merging stops (Euclidean distance between
        L2-normalised embeddings for centroid linkage; cosine distance for the others).
    linkage: "centroid" (both presets); any scipy linkage method is accepted.
    min_cluster_size: AHC path only: clusters smaller than this are merged into the nearest
        large one (shrunk to 10% of the embeddings on short files, as pyannote does).
        12 is pyannote 3.1's value; community-1's VBx prunes speakers on its own and ignores it.
    min_active_ratio: 0.2: an embedding enters clustering only if its local speaker is the
        only active speaker in at least 20% of the window's frames.
    fa: 0.07, VBx's scale of the sufficient statistics (acoustic weight).
    fb: 0.8, VBx's speaker regularisation (larger -> fewer speakers).
    vbx_max_iters: 20 VB iterations at most (pyannote's ``maxIters``).
    vbx_init_smoothing: 7.0, softmax sharpness turning the AHC labels into VBx's initial
        responsibilities.
    vbx_min_prior: 1e-7: VBx speakers whose prior falls to this or below are dropped.
    constrained_assignment: True (community-1): two local speakers of one window never get the
        same global speaker (Hungarian assignment); 3.1 used a plain argmax (False).
    """

    method: Literal["vbx", "ahc"] = "vbx"
    threshold: float = 0.6
    linkage: str = "centroid"
    min_cluster_size: int = 12
    min_active_ratio: float = 0.2
    fa: float = 0.07
    fb: float = 0.8
    vbx_max_iters: int = 20
    vbx_init_smoothing: float = 7.0
    vbx_min_prior: float = 1e-7
    constrained_assignment: bool = True

    def __post_init__(self) -> None:
        if self.method not in ("vbx", "ahc"):
            raise ValueError(f"clustering method must be 'vbx' or 'ahc', got {self.method!r}")
        if self.min_cluster_size < 1:
            raise ValueError(f"min_cluster_size must be >= 1, got {self.min_cluster_size}")


@dataclass(frozen=True)
class ReconstructionConfig:
    """From clustered windows to turns.

    min_duration_off: 0.0 s (both presets): same-speaker turns separated by a gap shorter
        than this are joined.
    """

    min_duration_off: float = 0.0


@dataclass(frozen=True)
class DiarizationConfig:
    """All model-free diarization hyperparameters; the default is community-1."""

    segmentation: SegmentationConfig = field(default_factory=SegmentationConfig)
    clustering: ClusteringConfig = field(default_factory=ClusteringConfig)
    reconstruction: ReconstructionConfig = field(default_factory=ReconstructionConfig)


COMMUNITY_1 = DiarizationConfig()

PYANNOTE_3_1 = DiarizationConfig(
    clustering=ClusteringConfig(
        method="ahc",
        threshold=0.7045654963945799,
        min_cluster_size=12,
        constrained_assignment=False,
    )
)
