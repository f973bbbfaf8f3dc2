"""DER (strict / paper / lenient) and speakers found on every scored case, per embedding
model that can run here, per window step, and on the VAD fallback path.

Cases: the sample call (human reference), the four speakrs fixture wavs (pyannote
community-1's output as reference; TTS voices) and the sample call followed by the 3-speaker
wav. WeSpeaker runs only where it has been downloaded (`--embedding wespeaker`).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/measure_diarization.py
    ... --steps 1,2,3 --variants pooled,window --vad
"""

from __future__ import annotations

import argparse

from scripts.diarization_cases import MODELS, cases, ders
from witness.diarize.config import config_for
from witness.diarize.pipeline import Diarizer
from witness.models import store
from witness.models.diarization_catalogue import WESPEAKER_RESNET34_LM
from witness.models.diarization_choice import DiarizationModels, choose_models


def report(diarizer: Diarizer, label: str, all_cases) -> None:
    print(f"\n== {label}")
    print(f"{'case':24s} {'ref':>3s} {'found':>5s}  {'strict':>7s} {'paper':>7s} {'lenient':>7s}  seconds")
    for case in all_cases:
        out = diarizer.run(case.samples)
        scores = ders(case.reference, out.turns)
        print(f"{case.name:24s} {case.speakers:3d} {out.num_speakers:5d}  {scores['strict']:7.1%} "
              f"{scores['paper']:7.1%} {scores['lenient']:7.1%}  {out.timings['total']:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="pooled,window", help="GE2E variants")
    parser.add_argument("--steps", default="1", help="window steps in seconds, e.g. 1,2,3")
    parser.add_argument("--vad", action="store_true", help="also the Silero VAD fallback path")
    args = parser.parse_args()
    all_cases = cases()
    ge2e = choose_models("ge2e", MODELS)
    for step in map(float, args.steps.split(",")):
        for variant in args.variants.split(","):
            report(Diarizer(ge2e, config_for("ge2e", step), ge2e_variant=variant),
                   f"GE2E {variant}, step {step:g} s, segmentation {ge2e.segmentation.name}", all_cases)
        wespeaker = store.find(WESPEAKER_RESNET34_LM, MODELS)
        if wespeaker:
            models = DiarizationModels(ge2e.segmentation, None, "wespeaker", wespeaker)
            report(Diarizer(models, config_for("wespeaker", step)), f"WeSpeaker, step {step:g} s", all_cases)
        else:
            print("\n(WeSpeaker ResNet34-LM is not here: download-only, skipped)")
    if args.vad:
        fallback = DiarizationModels(None, MODELS / "silero-vad.onnx", "ge2e", ge2e.embedding_path)
        report(Diarizer(fallback), "VAD fallback (Silero VAD pieces), GE2E", all_cases)


if __name__ == "__main__":
    main()
