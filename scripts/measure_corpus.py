#!/usr/bin/env python3
"""Where the diarization error is: per file and per condition (speaker count, band, SNR,
length, reverberation), DER split into missed speech, false alarm and confusion, strict and
paper (0.25 s collar) conventions, with the speaker count found against the true one.

Files: a part of the generated corpus (``make_corpus``; its index.json gives the conditions)
or the dev set. Witness's diarization runs with the product's defaults (``config_for`` the
chosen embedding, as ``witness diarize``); segmentation and embeddings are cached per file
(``--cache``), so a rerun, or a new clustering rule, costs seconds. ``--hyp DIR`` scores RTTM
files already made (DIR/<uri>.rttm, e.g. sherpa-onnx's) instead of running Witness.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python scripts/measure_corpus.py --part check
    ... --part ~/.cache/witness/corpus/v1/tune --only tune_003,tune_004
    ... --dev                                     # the dev set (7 files)
    ... --part check --hyp /tmp/sherpa-check      # score another system's RTTMs
    ... --part check --rttm-out /tmp/witness-check --json /tmp/check.json
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from scripts.diarization_cases import DEV_SET, Case, dev_set
from scripts.make_corpus import default_out
from scripts.measure_diarization import _cached_windows, _models
from witness.audio import load_audio
from witness.diarize.config import SpeakerBounds, config_for
from witness.diarize.pipeline import Diarizer
from witness.evaluate import CONVENTIONS, diarization_error
from witness.rttm import format_rttm, read_rttm

SPLIT = ("missed", "false_alarm", "confusion", "total")


@dataclass
class Scored:
    uri: str
    conditions: dict[str, str]
    true: int
    found: int
    parts: dict[str, tuple[float, float, float, float]]  # convention: (missed, fa, confusion, total)


def _groups(entry: dict) -> dict[str, str]:
    """The condition labels of one corpus index entry."""
    n, snr, minutes = entry["num_speakers"], entry.get("snr_db"), entry["duration"] / 60
    rt60 = [v for v in (entry.get("reverb_rt60") or {}).values() if v]
    return {"speakers": str(n) if n <= 4 else "5-6" if n <= 6 else "7+",
            "band": entry.get("band", "wide"),
            "snr": "clean" if snr is None else "20-30 dB" if snr >= 20 else "10-20 dB" if snr >= 10 else "5-10 dB",
            "length": "< 2 min" if minutes < 2 else "2-5 min" if minutes < 5 else "5-15 min" if minutes < 15 else "15+ min",
            "reverb": "reverberant" if rt60 else "dry"}


def corpus_files(part: Path) -> list[tuple[Case, dict]]:
    index = json.loads((part / "index.json").read_text())
    cases = []
    for entry in index["calls"]:
        wav = part / f"{entry['uri']}.wav"
        (turns,) = read_rttm(wav.with_suffix(".rttm")).values()
        cases.append((Case(entry["uri"], load_audio(wav).samples, tuple(turns)), _groups(entry)))
    return cases


def dev_files() -> list[tuple[Case, dict]]:
    sims = {c["uri"]: c for c in json.loads((DEV_SET / "sim" / "index.json").read_text())["conversations"]}
    out = []
    for case in dev_set():
        sim = sims.get(case.name)
        entry = {"num_speakers": case.speakers, "duration": case.duration,
                 "band": "telephone" if sim and sim["telephone_band"] else "wide",
                 "snr_db": sim["snr_db"] if sim else None}
        out.append((case, {**_groups(entry), "source": "simulated" if sim else "AMI meeting"}))
    return out


def score(case: Case, conditions: dict, hypothesis) -> Scored:
    parts = {}
    for name in ("strict", "paper"):
        c = CONVENTIONS[name]
        r = diarization_error(list(case.reference), list(hypothesis), c.collar, c.skip_overlap)
        parts[name] = (r.missed, r.false_alarm, r.confusion, r.total)
    return Scored(case.name, conditions, case.speakers, len({t.speaker for t in hypothesis}), parts)


def _line(label: str, rows: list[Scored]) -> str:
    sums = {k: [sum(r.parts[k][i] for r in rows) for i in range(4)] for k in ("strict", "paper")}
    right = sum(r.found == r.true for r in rows)
    under = sum(r.found < r.true for r in rows)
    s, p = sums["strict"], sums["paper"]
    total = s[3] or 1.0
    return (f"{label:26s} {len(rows):4d} {right:3d}/{len(rows):<3d} {under:3d} {len(rows) - right - under:3d}  "
            f"{sum(s[:3]) / total:6.1%} {sum(p[:3]) / (p[3] or 1.0):6.1%}   "
            f"{s[0] / total:6.1%} {s[1] / total:6.1%} {s[2] / total:6.1%}")


def report(rows: list[Scored]) -> None:
    head = (f"{'':26s} {'files':>4s} {'count':>7s} {'und':>3s} {'ovr':>3s}  {'strict':>6s} {'paper':>6s}   "
            f"{'missed':>6s} {'f.al.':>6s} {'conf.':>6s}  (split: strict, share of reference speech)")
    print(head)
    for r in rows:
        print(_line(f"{r.uri} ({r.true}->{r.found})", [r]))
    print(_line("ALL", rows))
    for key in ("speakers", "band", "snr", "length", "reverb", "source"):
        values = sorted({r.conditions[key] for r in rows if key in r.conditions})
        if len(values) > 1 or key == "speakers":
            print(f"-- by {key}")
            for v in values:
                print(_line(f"  {v}", [r for r in rows if r.conditions.get(key) == v]))
    small = [r for r in rows if 2 <= r.true <= 4]
    if small:
        print(f"count right on 2-4 speaker files: {sum(r.found == r.true for r in small)}/{len(small)}")


def _hypotheses(args, cases) -> dict[str, list]:
    """Each file's turns: from --hyp RTTMs, or Witness's diarization (windows cached)."""
    if args.hyp:
        out = {}
        for case, _ in cases:
            found = read_rttm(args.hyp / f"{case.name}.rttm")
            out[case.name] = next(iter(found.values()), [])
        return out
    models = _models(args)
    diarizer = Diarizer(models, config_for(models.embedding, args.step))
    out = {}
    for case, _ in cases:
        windows = _cached_windows(diarizer, case, args.cache)
        found = diarizer.cluster_windows(windows, SpeakerBounds(), case.duration, signal=case.samples)
        out[case.name] = list(found.turns)
        if args.rttm_out:
            args.rttm_out.mkdir(parents=True, exist_ok=True)
            (args.rttm_out / f"{case.name}.rttm").write_text(format_rttm(out[case.name], case.name))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", help="a corpus part: tune, check, or its folder")
    parser.add_argument("--dev", action="store_true", help="the dev set instead")
    parser.add_argument("--only", help="comma-separated uris")
    parser.add_argument("--hyp", type=Path, help="score DIR/<uri>.rttm instead of running Witness")
    parser.add_argument("--rttm-out", type=Path, help="write Witness's turns as DIR/<uri>.rttm")
    parser.add_argument("--json", type=Path, help="write the per-file numbers as JSON")
    parser.add_argument("--embedding", default="auto")
    parser.add_argument("--segmentation", help="a segmentation ONNX file (default: the run's choice)")
    parser.add_argument("--models-dir", default=None)
    parser.add_argument("--step", type=float, default=1.0)
    parser.add_argument("--cache", type=Path, default=default_out().parent / "measure-cache")
    args = parser.parse_args()
    if args.dev:
        cases = dev_files()
    else:
        part = Path(args.part) if "/" in (args.part or "/") else default_out() / args.part
        cases = corpus_files(part)
    if args.only:
        cases = [c for c in cases if c[0].name in args.only.split(",")]
    hyps = _hypotheses(args, cases)
    rows = [score(case, conditions, hyps[case.name]) for case, conditions in cases]
    report(rows)
    if args.json:
        args.json.write_text(json.dumps([vars(r) for r in rows], indent=1))


if __name__ == "__main__":
    main()
