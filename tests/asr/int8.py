"""Make a real int8 CTranslate2 Whisper model with the ctranslate2 package (test-only)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from witness.models.ct2 import Ct2Model


def quantize_int8(model: Ct2Model, out: Path) -> Path:
    """Fill a ``WhisperSpec`` with ``model``'s variables, quantise to int8, save to ``out``."""
    from ctranslate2.specs import whisper_spec

    hp_layers = {p: len({m.group(1) for n in model.variables if (m := re.match(p + r"/layer_(\d+)/", n))})
                 for p in ("encoder", "decoder")}
    spec = whisper_spec.WhisperSpec(hp_layers["encoder"], model.scalar("encoder/num_heads"),
                                    hp_layers["decoder"], model.scalar("decoder/num_heads"))
    for name, var in model.variables.items():
        if var.shape:  # scalars (num_heads, activation...) are the spec's own
            _set(spec, name, np.array(model.raw(name)))
    spec.decoder.projection.weight = np.array(model.raw("decoder/embeddings/weight"))
    spec.register_vocabulary(list(model.vocabulary))
    for key, value in model.config.items():
        setattr(spec.config, key, value)
    spec.validate()
    spec.optimize(quantization="int8")
    out.mkdir(parents=True)
    spec.save(str(out))
    return out


def _set(spec, name: str, value: np.ndarray) -> None:
    obj = spec
    *scopes, attr = name.split("/")
    for scope in scopes:
        m = re.fullmatch(r"(.+)_(\d+)", scope)
        if m and isinstance(getattr(obj, m.group(1), None), list):
            obj = getattr(obj, m.group(1))[int(m.group(2))]
        else:
            obj = getattr(obj, scope)
    setattr(obj, attr, value)
