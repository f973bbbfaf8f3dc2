"""Torch LSTM layers for the ONNX converters: weights, a numpy reference, ONNX initialisers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LstmLayer:
    """One direction of one torch LSTM layer; gate order (input, forget, cell, output) as
    torch stores it.

    w_ih (4H, in) float32, w_hh (4H, H) float32, b_ih and b_hh (4H,) float32.
    """

    w_ih: np.ndarray
    w_hh: np.ndarray
    b_ih: np.ndarray
    b_hh: np.ndarray

    @property
    def hidden(self) -> int:
        return self.w_hh.shape[1]


def torch_lstm_layer(state: dict, key: str) -> LstmLayer:
    """The layer named ``key`` (e.g. ``lstm.{}_l0`` or ``lstm.{}_l0_reverse``, ``{}`` standing
    for weight_ih, weight_hh, bias_ih, bias_hh) from a torch state dict. Raises KeyError."""
    return LstmLayer(*(np.asarray(state[key.format(kind)], np.float32)
                       for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")))


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def lstm_numpy(layer: LstmLayer, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The LSTM equations written out over time, from zero state (float64 inside).

    x: (batch, frames, in). Returns the outputs (batch, frames, H) and the last hidden
    state (batch, H), float64.
    """
    x = np.asarray(x, np.float64)
    batch, hidden = x.shape[0], layer.hidden
    inputs = x @ layer.w_ih.T.astype(np.float64) + layer.b_ih + layer.b_hh
    w_hh = layer.w_hh.T.astype(np.float64)
    h = np.zeros((batch, hidden))
    c = np.zeros((batch, hidden))
    outputs = np.empty((batch, x.shape[1], hidden))
    for t in range(x.shape[1]):
        i, f, g, o = np.split(inputs[:, t] + h @ w_hh, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs[:, t] = h
    return outputs, h


def _onnx_gates(array: np.ndarray) -> np.ndarray:
    """Reorder the 4 gate blocks along axis 0 from torch (i, f, g, o) to ONNX (i, o, f, c)."""
    i, f, g, o = np.split(array, 4, axis=0)
    return np.concatenate([i, o, f, g], axis=0)


def onnx_lstm_weights(directions: tuple[LstmLayer, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ONNX ``LSTM`` inputs W (D, 4H, in), R (D, 4H, H), B (D, 8H) float32 for the layer's
    ``directions`` (forward, then reverse when bidirectional)."""
    w = np.stack([_onnx_gates(d.w_ih) for d in directions])
    r = np.stack([_onnx_gates(d.w_hh) for d in directions])
    b = np.stack([np.concatenate([_onnx_gates(d.b_ih), _onnx_gates(d.b_hh)]) for d in directions])
    return w.astype(np.float32), r.astype(np.float32), b.astype(np.float32)
