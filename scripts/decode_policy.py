#!/usr/bin/env python3
"""The decode policy measured: WER (each digit a word), words and CPU seconds of Witness's ASR per
model, with stretches of speech left without words decoded again (``redecode_gaps``, the
default) and without, on the dev calls and the sample call (``dev``), the v2 corpus check part
(``check``, check_long left out) and the 30-minute v1 check_long (``long``).

The engine runs in this process as ``witness FILE --no-diarize`` runs it (speech gate, English,
2 threads, product defaults), one engine per model and variant, all loaded at once; for each
file every engine runs in turn, the order rotated from file to file, so load from other work on a shared machine hits them alike.
Silero VAD runs once per file (cached in OUT/vad) and is left out of the CPU seconds, which are
this process's user + system time over the decoding. Each file's words and their times go to
OUT/<model>/<variant>/<file>.json; a second call with the same OUT runs only what is missing.
Variants are comma-separated ``WhisperOptions`` overrides or ``default``. Without gaps decoded
again a file's words are the default's wherever no stretch was found (the same decoding), so
``redecode_gaps=false`` runs only on the files where one was; the CPU seconds those stretches
took are measured within the default's run (``gap CPU s``).

    python scripts/decode_policy.py [--sets dev check long] [--models tiny.en tiny.en-q8_0]
        [--variants default] [--out /tmp/witness-decode-policy] [--diff]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from dataclasses import asdict, fields, replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as witness's ASR worker does

from scripts.end_to_end import CALLS  # noqa: E402
from witness.asr.whisper import Track, WhisperEngine, WhisperOptions  # noqa: E402
from witness.audio import SAMPLE_RATE, load_audio  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wder import score_words  # noqa: E402
from witness.evaluate.words import SpeakerWord, words_from_stm  # noqa: E402
from witness.models.whisper_models import resolve_model, resolve_vad  # noqa: E402
from witness.textnorm import scoring_words  # noqa: E402
from witness.vad import SileroVad  # noqa: E402

CORPUS = Path.home() / ".cache" / "witness" / "corpus"
SETS = {
    "dev": lambda: list(CALLS),
    "check": lambda: [p for p in sorted((CORPUS / "v2" / "check").glob("check_*.wav")) if p.stem != "check_long"],
    "long": lambda: [CORPUS / "v1" / "check" / "check_long.wav"],
}


def options(variant: str) -> WhisperOptions:
    base = WhisperOptions(threads=2, language="en")
    if variant == "default":
        return base
    kinds = {f.name: type(getattr(base, f.name)) for f in fields(base)}
    pairs = dict(item.split("=", 1) for item in variant.split(","))
    return replace(base, **{k: (v.lower() == "true") if kinds[k] is bool else kinds[k](v) for k, v in pairs.items()})


def speech(call: Path, out: Path, vad: SileroVad, signal: np.ndarray) -> np.ndarray:
    path = out / "vad" / f"{call.stem}.npy"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vad.probabilities(signal))
    return np.load(path)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


NO_GAPS = "redecode_gaps=false"


def row(out: Path, call: Path, model: str, variant: str) -> dict | None:
    """The stored run; without gaps decoded again, the default's where it found none."""
    path = out / model / variant / f"{call.stem}.json"
    if not path.exists() and variant == NO_GAPS:
        default = row(out, call, model, "default")
        return default if default is not None and default["gaps"] == 0 else None
    return json.loads(path.read_text()) if path.exists() else None


def timed_gaps(engine: WhisperEngine) -> dict:
    """CPU seconds ``engine`` spends on stretches left without words, counted in the dict returned."""
    spent, redecode = {"cpu": 0.0}, engine._redecode_gaps

    def measured(*args, **kwargs):
        start = cpu_seconds()
        try:
            return redecode(*args, **kwargs)
        finally:
            spent["cpu"] += cpu_seconds() - start

    engine._redecode_gaps = measured
    return spent


def run(args: argparse.Namespace, calls: list[Path]) -> None:
    """Decode every (file, model, variant) missing from OUT."""
    engines: dict[tuple[str, str], tuple[WhisperEngine, dict]] = {}
    vad = SileroVad(resolve_vad())
    for k, call in enumerate(calls):
        todo = [(m, v) for m in args.models for v in args.variants if row(args.out, call, m, v) is None]
        todo = todo[k % len(todo):] + todo[:k % len(todo)] if todo else todo  # each engine first in turn
        signal = probs = None
        for model, variant in todo + [(m, NO_GAPS) for m in args.models]:
            if row(args.out, call, model, variant) is not None or variant == NO_GAPS and \
                    row(args.out, call, model, "default") is None:
                continue
            if signal is None:
                signal = load_audio(call).samples
                probs = speech(call, args.out, vad, signal)
            if (model, variant) not in engines:
                resolved = resolve_model(model)
                engine = WhisperEngine(resolved.path, options(variant), resolved.name)
                engines[model, variant] = engine, timed_gaps(engine)
            decode(args.out, call, model, variant, *engines[model, variant], signal, probs)
    for engine, _ in engines.values():
        engine.close()


def decode(out: Path, call: Path, model: str, variant: str, engine: WhisperEngine, spent: dict,
           signal: np.ndarray, probs: np.ndarray) -> None:
    engine.whisper_timings()
    spent["cpu"] = 0.0
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = engine._transcribe([Track(signal, probs)], None)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    counters = engine.whisper_timings()
    path = out / model / variant / f"{call.stem}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"words": [w.text for w in result.words], "wall": wall, "cpu": cpu,
                                "times": [(round(w.start, 3), round(w.end, 3)) for w in result.words],
                                "gap_cpu": spent["cpu"], "encode_runs": counters.get("encode runs", 0),
                                "seconds": len(signal) / SAMPLE_RATE, **asdict(result.info.stats)}))
    print(f"{call.stem} {model} {variant}: {len(result.words)} words, {cpu:.1f} CPU s, "
          f"gaps {result.info.stats.gaps} ({result.info.stats.gaps_filled} kept)", flush=True)


def score(call: Path, words: list[str]) -> tuple[int, int]:
    """(errors, reference words), each digit a word."""
    reference = words_from_stm(read_stm(call.with_suffix(".stm")))
    hypothesis = [SpeakerWord(t, None) for t in scoring_words(" ".join(words))]
    wer, _ = score_words(reference, hypothesis, digits="each")
    return wer.substitutions + wer.deletions + wer.insertions, wer.reference_words


def report(args: argparse.Namespace, name: str, calls: list[Path]) -> None:
    print(f"\n{name}: {len(calls)} files (each row scores those decoded)")
    print("| model | variant | WER (digits each) | words out | CPU s | gap CPU s | wall s | encoder runs "
          "| gaps decoded (kept) |")
    print("|---|---|---|---|---|---|---|---|---|")
    per_file: dict[str, dict[tuple[str, str], float]] = {}
    for model in args.models:
        for variant in args.variants + [NO_GAPS]:
            rows = [(call, stored) for call in calls if (stored := row(args.out, call, model, variant)) is not None]
            errors = refs = 0
            for call, stored in rows:
                e, r = score(call, stored["words"])
                errors, refs = errors + e, refs + r
                per_file.setdefault(call.stem, {})[model, variant] = e / r
            total = {k: sum(r.get(k, 0) for _, r in rows)
                     for k in ("cpu", "gap_cpu", "wall", "encode_runs", "gaps", "gaps_filled")}
            print(f"| {model} | {variant} | {errors / refs:.2%} | {sum(len(r['words']) for _, r in rows)} | "
                  f"{total['cpu']:.1f} | {total['gap_cpu']:.1f} | {total['wall']:.1f} | {total['encode_runs']:.0f} | "
                  f"{total['gaps']} ({total['gaps_filled']}) |")
    if args.diff:
        for stem, cells in per_file.items():
            if len(set(round(v, 6) for v in cells.values())) > 1:
                print(f"  {stem}: " + ", ".join(f"{m} {v} {w:.1%}" for (m, v), w in cells.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=["dev"], choices=list(SETS))
    parser.add_argument("--models", nargs="+", default=["tiny.en", "tiny.en-q8_0"])
    parser.add_argument("--variants", nargs="+", default=["default"])
    parser.add_argument("--out", type=Path, default=Path("/tmp/witness-decode-policy"))
    parser.add_argument("--only", help="file stems to decode (comma-separated); the others are only scored")
    parser.add_argument("--diff", action="store_true", help="list the files where models or variants differ")
    args = parser.parse_args()
    for name in args.sets:
        calls = SETS[name]()
        run(args, [c for c in calls if not args.only or c.stem in args.only.split(",")])
        report(args, name, calls)


if __name__ == "__main__":
    main()
