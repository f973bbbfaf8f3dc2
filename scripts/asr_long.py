#!/usr/bin/env python3
"""Long calls as ``witness FILE --no-diarize`` transcribes them: WER, loops, words invented
over non-speech, pieces decoded again, and seconds, per model and decoding setting.

Cases (scripts/asr_cases.py): the sample call once (the short-file baseline), tiled to
``--copies`` copies (60: 30 minutes, ring tone and silence at every seam), and with
``--music`` seconds of synthetic hold music between two copies and two more.

    python scripts/asr_long.py [--copies 60] [--music 60] [--models tiny.en tiny.en-q8_0 base]
        [--variants gated context ungated] [--threads 2]

Variants: ``gated`` (the default decoding), ``context`` (gated, previous text as context),
``ungated`` (no VAD: 600 s pieces, the decoding before issue 14).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# as witness's ASR worker does (engines.asr_engine): OpenMP threads sleep while they wait
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from scripts.asr_cases import score, tiled, with_music  # noqa: E402
from witness.asr.whisper import WhisperEngine, WhisperOptions  # noqa: E402
from witness.models.whisper_models import resolve_model, resolve_vad  # noqa: E402

VARIANTS = {
    "gated": {},
    "context": {"condition_on_previous_text": True},
    "ungated": {"speech_gate": False},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=60)
    parser.add_argument("--music", type=float, default=60.0, help="seconds of music; 0: no music case")
    parser.add_argument("--models", nargs="+", default=["tiny.en"])
    parser.add_argument("--variants", nargs="+", default=["gated"], choices=list(VARIANTS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true", help="log pieces decoded again")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="  %(message)s")

    cases = [tiled(1), tiled(args.copies)] + ([with_music(args.music)] if args.music else [])
    vad = resolve_vad()
    for name in args.models:
        model = resolve_model(name)
        for variant in args.variants:
            options = WhisperOptions(threads=args.threads, language="en", **VARIANTS[variant])
            with WhisperEngine(model.path, options, model.name, vad_path=vad) as engine:
                for case in cases:
                    t0 = time.perf_counter()
                    result = engine.transcribe(case.audio)
                    seconds = time.perf_counter() - t0
                    got = score(case, result.words, [s.text for s in result.segments])
                    stats = result.info.stats
                    print(f"{name:14s} {variant:8s} {case.name:34s} {got}  redecoded {stats.redecoded} "
                          f"of {stats.pieces} pieces  {seconds:6.1f} s  RTF {seconds / (len(case.audio) / 16000):.3f}",
                          flush=True)


if __name__ == "__main__":
    main()
