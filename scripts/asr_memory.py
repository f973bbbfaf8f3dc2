#!/usr/bin/env python3
"""Peak memory of transcribing a long call vs a short one (tiny.en, whisper.cpp).

Each case runs in a fresh subprocess that tiles the sample call to N minutes, loads the
model, transcribes, and reports its peak RSS (getrusage ru_maxrss) before and after the
transcription. The input array itself is 3.84 MB per minute (float32, 16 kHz); everything
else should not grow with the length (whisper.cpp gets the audio in pieces of at most
``--chunk`` seconds, so its log-mel buffer is bounded).

    python scripts/asr_memory.py [--minutes 10 60] [--chunk 600] [--threads 2]
    python scripts/asr_memory.py --whole-mel [--minutes 10 60]

``--whole-mel`` shows what chunking avoids, quickly: it only runs whisper.cpp's
``whisper_pcm_to_mel`` on the whole array, the first thing ``whisper_full`` does with
the audio it is handed (what chunk_seconds=0 would do), and reports the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def child(minutes: float, chunk: float, threads: int) -> dict:
    import numpy as np
    from asr_bench import ggml_model, sample_audio

    from witness.asr.whisper import WhisperEngine, WhisperOptions

    sample = sample_audio()
    audio = np.tile(sample, int(np.ceil(minutes * 60 * 16000 / len(sample))))[: int(minutes * 60 * 16000)]
    model = ggml_model("tiny.en")
    with WhisperEngine(model.path, WhisperOptions(threads=threads, chunk_seconds=chunk), model.name) as engine:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        result = engine.transcribe(audio)
        elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"minutes": minutes, "chunk_seconds": chunk, "audio_mb": audio.nbytes / 2**20,
            "peak_rss_before_mb": before, "peak_rss_mb": peak, "seconds": elapsed, "words": len(result.words)}


def child_whole_mel(minutes: float, threads: int) -> dict:
    import numpy as np
    from asr_bench import ggml_model, sample_audio

    from witness.asr.whisper import WhisperEngine, WhisperOptions

    sample = sample_audio()
    audio = np.tile(sample, int(np.ceil(minutes * 60 * 16000 / len(sample))))[: int(minutes * 60 * 16000)]
    model = ggml_model("tiny.en")
    with WhisperEngine(model.path, WhisperOptions(threads=threads), model.name) as engine:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        engine._pw.whisper_pcm_to_mel(engine._ctx, audio, len(audio), threads)
        elapsed = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"minutes": minutes, "chunk_seconds": 0, "audio_mb": audio.nbytes / 2**20,
            "peak_rss_before_mb": before, "peak_rss_mb": peak, "seconds": elapsed, "words": 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, nargs="+", default=[10.0, 60.0])
    parser.add_argument("--chunk", type=float, default=600.0, help="chunk_seconds (0: whole file at once)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--whole-mel", action="store_true", help="only whisper.cpp's mel of the whole array")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run = child_whole_mel(args.minutes[0], args.threads) if args.whole_mel else child(args.minutes[0], args.chunk, args.threads)
        print(json.dumps(run))
        return
    rows = []
    for minutes in args.minutes:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--minutes", str(minutes),
               "--chunk", str(args.chunk), "--threads", str(args.threads)] + (["--whole-mel"] if args.whole_mel else [])
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        what = "whole-file mel only" if args.whole_mel else f"chunk {r['chunk_seconds']:.0f} s"
        print(f"{r['minutes']:5.0f} min  {what}  audio array {r['audio_mb']:6.1f} MB  "
              f"peak RSS before {r['peak_rss_before_mb']:7.1f} MB  after {r['peak_rss_mb']:7.1f} MB  "
              f"({r['words']} words, {r['seconds']:.0f} s)", flush=True)
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        growth = b["peak_rss_mb"] - a["peak_rss_mb"]
        print(f"peak RSS grows {growth:.1f} MB from {a['minutes']:.0f} to {b['minutes']:.0f} min; "
              f"the input array alone grows {b['audio_mb'] - a['audio_mb']:.1f} MB; "
              f"the rest: {growth - (b['audio_mb'] - a['audio_mb']):+.1f} MB")


if __name__ == "__main__":
    main()
