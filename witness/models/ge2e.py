"""The Resemblyzer GE2E speaker encoder as an ONNX graph, converted once from its torch checkpoint.

Network (Resemblyzer ``VoiceEncoder``): 3-layer LSTM 40→256 (batch first), the last layer's
final hidden state, linear 256→256, ReLU, L2 normalisation. Input ``mels`` float32
(batch, frames, 40): power (not log) mel partials, 160 frames (1.6 s) in training. Output
``embeddings`` float32 (batch, 256), unit norm (all-zero where ReLU left nothing).

``ge2e_onnx_path`` finds the converted graph (models dir, cache) or builds it from the
checkpoint the store fetches from the ``Resemblyzer`` wheel; the graph is checked against an
independent numpy forward pass (``forward_numpy``) before it is published.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from witness.errors import ModelError
from witness.models.diarization_catalogue import GE2E_CHECKPOINT
from witness.models.lstm import LstmLayer, lstm_numpy, onnx_lstm_weights, torch_lstm_layer
from witness.models.onnx_convert import Conversion, finish_model
from witness.models.torch_pickle import load_legacy_checkpoint

CONVERTER_VERSION = "1"
N_MELS = 40
HIDDEN = 256
N_LAYERS = 3
NORM_EPS = 1e-12
TOLERANCE = 1e-4


@dataclass(frozen=True)
class Ge2eWeights:
    """layers: the 3 LSTM layers; linear_w (256, 256) and linear_b (256,) float32."""

    layers: tuple[LstmLayer, ...]
    linear_w: np.ndarray
    linear_b: np.ndarray


def load_weights(checkpoint: str | Path) -> Ge2eWeights:
    """The encoder's weights from Resemblyzer's ``pretrained.pt`` (read without torch)."""
    state = load_legacy_checkpoint(checkpoint).get("model_state")
    try:
        layers = tuple(torch_lstm_layer(state, f"lstm.{{}}_l{i}") for i in range(N_LAYERS))
        weights = Ge2eWeights(layers, np.asarray(state["linear.weight"], np.float32),
                              np.asarray(state["linear.bias"], np.float32))
    except (KeyError, TypeError) as exc:
        raise ModelError(f"not a Resemblyzer encoder checkpoint (missing {exc})", checkpoint) from None
    if weights.layers[0].w_ih.shape != (4 * HIDDEN, N_MELS) or weights.linear_w.shape != (HIDDEN, HIDDEN):
        raise ModelError("unexpected layer shapes for the Resemblyzer encoder", checkpoint)
    return weights


def forward_numpy(weights: Ge2eWeights, mels: np.ndarray) -> np.ndarray:
    """Reference forward pass, the LSTM equations written out (float64 inside).

    mels: (batch, frames, 40) float32. Returns (batch, 256) float32, unit norm.
    """
    x = np.asarray(mels, np.float64)
    for layer in weights.layers:
        x, h = lstm_numpy(layer, x)
    raw = np.maximum(h @ weights.linear_w.T + weights.linear_b, 0.0)
    norm = np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), NORM_EPS)
    return (raw / norm).astype(np.float32)


def build_onnx(weights: Ge2eWeights, source_sha256: str = ""):
    """The encoder as an ``onnx.ModelProto`` (input ``mels``, output ``embeddings``)."""
    from onnx import TensorProto, helper, numpy_helper

    inits, nodes = [], [helper.make_node("Transpose", ["mels"], ["x0"], perm=[1, 0, 2])]
    for n, layer in enumerate(weights.layers):
        inits += [numpy_helper.from_array(array, f"{name}{n}")
                  for array, name in zip(onnx_lstm_weights((layer,)), "WRB")]
        nodes += [
            helper.make_node("LSTM", [f"x{n}", f"W{n}", f"R{n}", f"B{n}"], [f"y{n}", f"h{n}"],
                             hidden_size=HIDDEN),
            helper.make_node("Squeeze", [f"y{n}", "axis1"], [f"x{n + 1}"]),  # (T, 1, B, H) -> (T, B, H)
        ]
    last = len(weights.layers) - 1
    inits += [
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
        numpy_helper.from_array(weights.linear_w, "linear_w"),
        numpy_helper.from_array(weights.linear_b, "linear_b"),
        numpy_helper.from_array(np.array(NORM_EPS, np.float32), "eps"),
    ]
    nodes += [
        helper.make_node("Squeeze", [f"h{last}", "axis0"], ["hidden"]),  # (1, B, H) -> (B, H)
        helper.make_node("Gemm", ["hidden", "linear_w", "linear_b"], ["linear"], transB=1),
        helper.make_node("Relu", ["linear"], ["relu"]),
        helper.make_node("ReduceL2", ["relu"], ["norm"], axes=[1], keepdims=1),  # axes: attribute before opset 18
        helper.make_node("Max", ["norm", "eps"], ["safe_norm"]),
        helper.make_node("Div", ["relu", "safe_norm"], ["embeddings"]),
    ]
    graph = helper.make_graph(
        nodes, "ge2e_resemblyzer",
        [helper.make_tensor_value_info("mels", TensorProto.FLOAT, ["batch", "frames", N_MELS])],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", HIDDEN])],
        inits)
    return finish_model(graph, CONVERTER_VERSION, source_sha256)


def max_deviation(model_path: Path, weights: Ge2eWeights, mels: np.ndarray) -> float:
    """Largest absolute difference between the ONNX graph and ``forward_numpy`` on ``mels``
    (batch, frames, 40) float32."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"mels": np.asarray(mels, np.float32)})
    return float(np.max(np.abs(got - forward_numpy(weights, mels))))


def probe_mels() -> np.ndarray:
    """Positive mel-like energies over a few decades: wide enough to exercise every gate."""
    return np.random.default_rng(0).lognormal(-4.0, 2.0, (2, 50, N_MELS)).astype(np.float32)


# The shared tail (file name, convert-check-publish, find or convert): ``onnx_convert.Conversion``.
CONVERSION = Conversion("GE2E", "ge2e-resemblyzer", CONVERTER_VERSION, GE2E_CHECKPOINT,
                        load_weights, build_onnx, max_deviation, probe_mels, TOLERANCE)
converted_name, convert, ge2e_onnx_path = CONVERSION.name, CONVERSION.convert, CONVERSION.path
