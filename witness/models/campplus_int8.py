"""CAM++ with int8 convolutions, built once on this machine from the fp32 conversion.

ONNX Runtime's static QDQ quantiser (``onnxruntime.quantization.QDQQuantizer``) makes every
convolution but the first (the one reading the filterbank image) int8: weights per output
channel, activations per tensor (uint8) over ranges measured once on the corpus tune part by
``scripts/campplus_int8.py calibrate`` and shipped in ``RANGES`` (a user's machine has no
corpus to calibrate on). The rest (the BatchNorms after concatenations, the CAM gates and
segment means, statistics pooling, the dense layer) stays fp32. The graph is the fp32
conversion's own, so the ranges name its tensors; they are refused for another conversion.

Measured (``scripts/campplus_int8.py compare``, 1 thread): 0.6x the fp32 model's CPU time;
embeddings at cosine 0.99 to fp32's on average on tune-part windows and pieces. The first
convolution in int8 cost 0.003 of that cosine for 0.03x of the time; per-tensor weights and a
moving-average calibration were worse (cosine 0.925 and 0.976); ONNX Runtime's dynamic
quantisation (ConvInteger) took 4x the fp32 time. It is not the default
(``[diarization] precision = "int8"`` asks for it): on the corpus check parts it counted 52 of
79 calls right against fp32's 55 at 92f7f9e (v1 35/54, v2 17/25), strict DER +0.4-0.5 points; lone voices
53/55 against 52/55; the dev set 17.3% against 17.1%, its four calls counted right.
``[merge] opinion_precision = "int8"`` asks for it for the merge's second opinion alone (the
diarization stays fp32; numbers in ``witness.opinion``).

The built file is checked against the fp32 one on a probe before it is published, and named
after the fp32 file's stamp and the ranges' digest, so new ranges build a new file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

import numpy as np

from witness.errors import ModelError
from witness.fileio import temp_beside
from witness.models import store
from witness.models.onnx_convert import CONVERTER_KEY, SOURCE_KEY, is_converted_from, publish_checked

log = logging.getLogger(__name__)

RANGES = Path(__file__).resolve().parents[1] / "diarize" / "data" / "campplus_int8_ranges.json"
BUILDER_VERSION = "1"
# unit-embedding cosine to fp32 on ``campplus_onnx.probe_feats`` (noise, not speech: the ranges
# are speech's), at least; measured 0.98 there, and 0.2-0.6 with ranges that do not fit the graph
MIN_PROBE_COSINE = 0.9


def node_names(model) -> None:
    """Name every node of ``model`` (an onnx.ModelProto, in place) by its place and type: the
    conversion leaves them unnamed, and the quantiser excludes nodes by name."""
    for index, node in enumerate(model.graph.node):
        node.name = f"n{index:03d}_{node.op_type}"


def first_conv(model) -> str:
    """Name of the convolution reading the 1-channel filterbank image (kept fp32)."""
    weights = {init.name: tuple(init.dims) for init in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Conv" and len(weights.get(node.input[1], ())) == 4 and weights[node.input[1]][1] == 1:
            return node.name
    raise ModelError("not a CAM++ graph (no 1-channel 2-D convolution)")


def activation_tensors(model) -> list[str]:
    """The tensors the quantiser needs ranges for: inputs and outputs of every quantised convolution."""
    skip = first_conv(model)
    return sorted({name for node in model.graph.node if node.op_type == "Conv" and node.name != skip
                   for name in (node.input[0], node.output[0])})


def load_ranges(path: Path | None = None) -> dict:
    """The shipped ranges file: {"converter", "source_sha256", "tensors": {name: [low, high]}, ...}."""
    try:
        path = path or RANGES
        data = json.loads(Path(path).read_text())
        return {**data, "tensors": {k: (float(lo), float(hi)) for k, (lo, hi) in data["tensors"].items()}}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"cannot read the CAM++ int8 ranges ({exc})", path) from None


def ranges_digest(path: Path | None = None) -> str:
    return hashlib.sha256(Path(path or RANGES).read_bytes()).hexdigest()


def quantise(fp32_path: Path, ranges: dict):
    """The int8 graph (onnx.ModelProto) of the fp32 CAM++ file, with ``load_ranges``' ranges."""
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QDQQuantizer, QuantType, TensorData, TensorsData
    from onnxruntime.quantization.quant_utils import load_model_with_shape_infer

    model = onnx.load(str(fp32_path))
    props = {p.key: p.value for p in model.metadata_props}
    if (props.get(SOURCE_KEY), props.get(CONVERTER_KEY)) != (ranges.get("source_sha256"), ranges.get("converter")):
        raise ModelError("the CAM++ int8 ranges were measured on another conversion", fp32_path)
    node_names(model)
    missing = [name for name in activation_tensors(model) if name not in ranges["tensors"]]
    if missing:
        raise ModelError(f"the CAM++ int8 ranges lack {len(missing)} tensors ({missing[0]}, ...)", fp32_path)
    tensors = {name: TensorData(lowest=np.array([lo], np.float32), highest=np.array([hi], np.float32))
               for name, (lo, hi) in ranges["tensors"].items()}
    named = temp_beside(fp32_path.with_name(fp32_path.stem + "-named.onnx"))
    try:
        onnx.save(model, str(named))
        shaped = load_model_with_shape_infer(named)
    finally:
        named.unlink(missing_ok=True)
    quantiser = QDQQuantizer(shaped, True, False, QuantType.QInt8, QuantType.QUInt8,
                             TensorsData(CalibrationMethod.MinMax, tensors), [], [first_conv(model)], ["Conv"], {})
    quantiser.quantize_model()
    return quantiser.model.model


def stamp(fp32_path: Path, digest: str) -> tuple[str, str]:
    """(source sha256, converter stamp) an int8 file built from ``fp32_path`` carries."""
    source, version = _stamp_of(fp32_path)
    return source, f"{version}+int8-{BUILDER_VERSION}-{digest[:12]}"


def _stamp_of(path: Path) -> tuple[str, str]:
    import onnx

    props = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    return props.get(SOURCE_KEY, ""), props.get(CONVERTER_KEY, "")


def int8_name(fp32_path: Path, digest: str) -> str:
    return f"{Path(fp32_path).stem}-int8-{BUILDER_VERSION}-{digest[:12]}.onnx"


def campplus_precision(path: Path) -> str:
    """The precision a CAM++ file holds: "int8" for one named as ``int8_name`` names them (by
    any builder version), else "fp32" (the conversion itself)."""
    return "int8" if re.fullmatch(r".+-int8-\w+-[0-9a-f]{12}\.onnx", Path(path).name) else "fp32"


def probe_cosine(fp32_path: Path, int8_path: Path) -> float:
    """Smallest cosine between the two files' embeddings of ``campplus_onnx.probe_feats``."""
    import onnxruntime as ort

    from witness.models.campplus_onnx import probe_feats

    feats = probe_feats()
    out = []
    for path in (fp32_path, int8_path):
        (vectors,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"feats": feats})
        out.append(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return float(np.min(np.sum(out[0] * out[1], axis=1)))


def build(fp32_path: Path, out_path: Path, ranges_path: Path | None = None) -> Path:
    """Quantise ``fp32_path`` into ``out_path``: checked against it on the probe, then published
    atomically. ModelError when it cannot be built or strays from fp32."""
    from onnx import helper

    digest = ranges_digest(ranges_path)
    try:
        model = quantise(Path(fp32_path), load_ranges(ranges_path))
    except ImportError as exc:
        raise ModelError(f"cannot quantise CAM++ ({exc})", fp32_path) from None
    source, version = stamp(Path(fp32_path), digest)
    del model.metadata_props[:]
    helper.set_model_props(model, {SOURCE_KEY: source, CONVERTER_KEY: version})
    return publish_checked(model, out_path, lambda path: 1 - probe_cosine(Path(fp32_path), path),
                           1 - MIN_PROBE_COSINE, "CAM++ int8", fp32_path, reference="fp32 (1 - cosine on the probe)")


def campplus_int8_path(fp32_path: str | Path, models_dir: str | Path | None = None,
                       ranges_path: Path | None = None) -> Path:
    """The int8 CAM++ built from the fp32 file ``fp32_path``: found in the models folders (a
    stale or damaged one raises ModelError naming it), else built into the cache once."""
    fp32_path = Path(fp32_path)
    digest = ranges_digest(ranges_path)
    name = int8_name(fp32_path, digest)
    found = store.first_here(models_dir, name)
    source, version = stamp(fp32_path, digest)
    if found is not None:
        if is_converted_from(found, source, version):
            return found
        raise ModelError("int8 CAM++ model is damaged or stale; delete it and it will be built again", found)
    log.info("quantising CAM++ %s to int8 (once)", fp32_path)
    return build(fp32_path, store.writable_cache_dir() / name, ranges_path)
