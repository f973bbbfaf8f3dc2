#!/usr/bin/env python3
"""Where do wrong-speaker words come from? WDER (each digit a word) split by cause, from the
runs ``scripts/measure_merge.py`` keeps in its cache (words, turns and centroids per call),
merged again here with the default merge options (no engine runs again), or (``--outputs``)
from transcripts ``witness`` already wrote (``end_to_end.py --out``), scored as they are.

Each word given the wrong speaker is put in the first of these that fits:

- ``misplaced``: Whisper's timing put the word more than 1 s outside its reference utterance;
- ``no turn``: unattributed, or no turn of any speaker overlaps the word;
- ``missing``: the word's reference speaker was never found (no found speaker maps to them);
- ``extra``: the word went to a found speaker who maps to no reference speaker;
- ``short``: the reference utterance is a backchannel or a rapid 1-word turn (corpus labels);
- ``overlap``: two reference speakers talk at the word's middle;
- ``edge``: a reference change of speaker lies within 0.5 s of the word;
- ``straddle``: the word's sentence (``merge.sentences``) holds reference words of two speakers;
- ``mid-turn``: none of those: confusion between two found speakers inside a turn.

``turns right``: of the wrong words, how many the plain assignment (most overlapping turn) had
right, i.e. what a later merge step broke. ``oracle turns``: WDER when the reference turns are
merged instead (what Whisper's timings and the merge rule lose on their own).

    python scripts/measure_merge.py --calls DIR --cache CACHE     # the runs, once
    python scripts/attribution_errors.py --calls DIR --cache CACHE [-v] [--set opinion_margin=0.05]
    python scripts/attribution_errors.py --calls DIR --cache CACHE --write OUT   # then, as witness scores:
    python scripts/end_to_end.py --calls DIR --out OUT
    python scripts/attribution_errors.py --calls DIR --outputs OUT -v   # witness's own outputs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from witness.audio import load_audio  # noqa: E402
from witness.evaluate.mapping import optimal_mapping  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wer import align_words  # noqa: E402
from witness.evaluate.words import words_from_stm, with_digits  # noqa: E402
from witness.merge import MergeOptions, _assign, exclusive_turns, merge, sentences  # noqa: E402
from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices  # noqa: E402
from witness.rttm import read_rttm  # noqa: E402
from witness.textnorm import scoring_words  # noqa: E402
from witness.transcript import read_transcript  # noqa: E402

CAUSES = ("misplaced", "no turn", "missing", "extra", "short", "overlap", "edge", "straddle", "mid-turn")
EDGE = 0.5  # s
MISPLACED = 1.0  # s


@dataclass
class Tally:
    wrong: int = 0
    aligned: int = 0
    turns_right: int = 0
    causes: Counter = None

    def __post_init__(self):
        self.causes = self.causes or Counter()

    def add(self, other: "Tally") -> None:
        self.wrong += other.wrong
        self.aligned += other.aligned
        self.turns_right += other.turns_right
        self.causes.update(other.causes)


def tokens(words, labels) -> list[tuple[str, str | None, int]]:
    """(text, speaker, word index) per scored token, each digit a word."""
    out = []
    for i, (word, label) in enumerate(zip(words, labels)):
        for text in scoring_words(word.text):
            out.extend((d, label, i) for d in (text if text.isdigit() else (text,)))
    return out


def reference(call: Path):
    """(tokens: (text, speaker, utterance index), utterances, kinds, reference turns)."""
    segments = read_stm(call.with_suffix(".stm"))
    labelled = call.with_suffix(".json")  # a corpus call's utterance kinds; other calls: all turns
    kinds = [u.get("kind", "turn") for u in json.loads(labelled.read_text())["utterances"]] if labelled.exists() \
        else ["turn"] * len(segments)
    out = []
    for k, segment in enumerate(segments):
        out.extend((w.text, w.speaker, k) for w in with_digits(words_from_stm([segment]), "each"))
    turns = next(iter(read_rttm(call.with_suffix(".rttm")).values()))
    return out, segments, kinds, turns


def word_causes(ref, segments, kinds, ref_turns, words, labels, heard) -> tuple[list, dict[str, str]]:
    """(per aligned token: (reference token, hypothesis token, cause; None where the speaker is
    right), found -> reference speaker mapping). Tokens as ``tokens`` and ``reference`` make them."""
    hyp = tokens(words, labels)
    alignment = align_words([t[0] for t in ref], [t[0] for t in hyp])
    pairs = [(ref[p.ref_index], hyp[p.hyp_index]) for p in alignment if p.ref_index is not None and p.hyp_index is not None]
    mapping = optimal_mapping(Counter((h[1], r[1]) for r, h in pairs if h[1] is not None))
    changes = sorted(t for a, b in zip(segments, segments[1:]) if a.speaker != b.speaker for t in (a.end, b.start))
    sentence_of = {i: n for n, span in enumerate(sentences(words, MergeOptions().sentence_pause)) for i in span}
    speakers_in = {}
    for r, h in pairs:
        speakers_in.setdefault(sentence_of[h[2]], set()).add(r[1])
    found = set(mapping.values())
    out = []
    for r, h in pairs:
        if h[1] is not None and mapping.get(h[1]) == r[1]:
            out.append((r, h, None))
            continue
        word, said = words[h[2]], segments[r[2]]
        middle = (word.start + word.end) / 2
        if word.end < said.start - MISPLACED or word.start > said.end + MISPLACED:
            cause = "misplaced"
        elif h[1] is None or not heard[h[2]]:
            cause = "no turn"
        elif r[1] not in found:
            cause = "missing"
        elif h[1] not in mapping:
            cause = "extra"
        elif kinds[r[2]] in ("backchannel", "rapid"):
            cause = "short"
        elif len({t.speaker for t in ref_turns if t.start <= middle <= t.end}) > 1:
            cause = "overlap"
        elif any(word.start - EDGE <= c <= word.end + EDGE for c in changes):
            cause = "edge"
        elif len(speakers_in[sentence_of[h[2]]]) > 1:
            cause = "straddle"
        else:
            cause = "mid-turn"
        out.append((r, h, cause))
    return out, mapping


def score(ref, segments, kinds, ref_turns, words, labels, plain, heard) -> tuple[Tally, dict[str, str]]:
    causes, mapping = word_causes(ref, segments, kinds, ref_turns, words, labels, heard)
    tally = Tally(aligned=len(causes))
    for r, h, cause in causes:
        if cause is None:
            continue
        tally.wrong += 1
        tally.turns_right += plain[h[2]] is not None and mapping.get(plain[h[2]]) == r[1]
        tally.causes[cause] += 1
    return tally, mapping


def group(n: int) -> str:
    return "2 speakers" if n == 2 else "3-4 speakers" if n <= 4 else "5+ speakers"


def options_from(settings: list[str]) -> MergeOptions:
    types = {f.name: f.type for f in fields(MergeOptions)}
    values = {}
    for item in settings:
        name, value = item.split("=", 1)
        kind = types[name]
        values[name] = value.lower() in ("1", "true", "yes") if kind in (bool, "bool") else \
            (int(value) if kind in (int, "int") else value if kind in (str, "str") else float(value))
    return replace(MergeOptions(), **values)


def merged_labels(cached: Path, call: Path, options: MergeOptions, embedder, write: Path | None):
    """(transcript, words in time order without speakers, their speakers, seconds the merge
    took): merged again from measure_merge's cache, or as witness wrote them (``embedder``
    None: ``--outputs``, 0 s)."""
    transcript = read_transcript(cached)
    ordered = sorted(transcript.words, key=lambda w: (w.start, w.end))
    words = [replace(w, speaker=None) for w in ordered]
    if embedder is None:
        return transcript, words, [w.speaker for w in ordered], 0.0
    centroids = dict(np.load(cached.with_suffix(".npz")))
    voices = CentroidVoices(load_audio(call).samples, embedder.embed, centroids) if options.second_opinion else None
    start = time.perf_counter()
    merged = merge(words, transcript.exclusive_turns, options, voices)
    seconds = time.perf_counter() - start
    if write:
        write.mkdir(parents=True, exist_ok=True)
        (write / cached.name).write_text(replace(transcript, utterances=merged.utterances).to_json())
    return transcript, words, [w.speaker for w in merged.words], seconds


def report(totals: dict[tuple[str, str], Tally], oracle: dict[str, Tally]) -> None:
    print(f"\n{'group':28s} {'WDER':>7s} {'wrong':>6s} {'words':>6s} {'turns right':>11s}  " + " ".join(f"{c:>9s}" for c in CAUSES))
    for (g, counted), t in sorted(totals.items()):
        print(f"{g + ', ' + counted:28s} {t.wrong / max(1, t.aligned):7.2%} {t.wrong:6d} {t.aligned:6d} {t.turns_right:11d}  "
              + " ".join(f"{100 * t.causes[c] / max(1, t.aligned):8.2f}%" for c in CAUSES))
    for g in sorted({g for g, _ in totals}):
        t = Tally()
        for (gg, _), v in totals.items():
            if gg == g:
                t.add(v)
        print(f"{g + ', all':28s} {t.wrong / max(1, t.aligned):7.2%} {t.wrong:6d} {t.aligned:6d} {t.turns_right:11d}  "
              + " ".join(f"{100 * t.causes[c] / max(1, t.aligned):8.2f}%" for c in CAUSES))
    for g, t in sorted(oracle.items()):
        print(f"{g + ', oracle turns':28s} {t.wrong / max(1, t.aligned):7.2%} {t.wrong:6d} {t.aligned:6d}  "
              + " ".join(f"{100 * t.causes[c] / max(1, t.aligned):8.2f}%" for c in CAUSES))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Path, required=True, help="corpus folder (NAME.wav, .stm, .rttm, .json)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--cache", type=Path, help="measure_merge.py's cache for those calls (merged again here)")
    source.add_argument("--outputs", type=Path, help="witness's transcripts of those calls (NAME.json), as they are")
    parser.add_argument("--only", help="comma-separated call names")
    parser.add_argument("--set", action="append", default=[], help="merge option NAME=VALUE (repeatable)")
    parser.add_argument("--oracle", action="store_true", help="also merge the reference turns")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per call")
    parser.add_argument("--write", type=Path, help="also write each call's transcript so merged to WRITE/NAME.json")
    args = parser.parse_args()
    options = options_from(args.set)
    embedder = None
    if args.cache:
        from witness.diarize.embedding import CamPlusPlusEmbedder
        from witness.models.diarization_choice import choose_models

        model = choose_models(opinion=options.opinion_precision).opinion
        embedder = CamPlusPlusEmbedder(model, min_clean_seconds=OPINION_MIN_SECONDS)
    totals: dict[tuple[str, str], Tally] = {}
    oracle: dict[str, Tally] = {}
    only = set(args.only.split(",")) if args.only else None
    seconds = 0.0
    for cached in sorted((args.cache or args.outputs).glob("*.json")):
        call = args.calls / f"{cached.stem}.wav"
        if (only and cached.stem not in only) or not call.exists():
            continue
        transcript, words, labels, took = merged_labels(cached, call, options, embedder, args.write)
        seconds += took
        plain, heard = _assign(words, sorted(transcript.exclusive_turns, key=lambda t: (t.start, t.end)),
                               options.gap_tolerance)
        ref, segments, kinds, ref_turns = reference(call)
        tally, _ = score(ref, segments, kinds, ref_turns, words, labels, plain, heard)
        true_n, found = len({s.speaker for s in segments}), len(transcript.speakers)
        key = (group(true_n), "count right" if true_n == found else "count wrong")
        totals.setdefault(key, Tally()).add(tally)
        line = f"{cached.stem:10s} {true_n}->{found} WDER {tally.wrong / max(1, tally.aligned):6.2%} " \
               f"({tally.wrong}/{tally.aligned}) turns right {tally.turns_right} " \
               + " ".join(f"{c}={tally.causes[c]}" for c in CAUSES if tally.causes[c])
        if args.oracle:
            exclusive = exclusive_turns(ref_turns)
            olabels = [w.speaker for w in merge(words, exclusive, replace(options, second_opinion=False)).words]
            oplain, oheard = _assign(words, exclusive, options.gap_tolerance)
            otally, _ = score(ref, segments, kinds, ref_turns, words, olabels, oplain, oheard)
            oracle.setdefault(group(true_n), Tally()).add(otally)
            line += f"  | oracle turns {otally.wrong / max(1, otally.aligned):6.2%}"
        if args.verbose:
            print(line, flush=True)
    report(totals, oracle)
    print(f"(merge options: {options}; the merges took {seconds:.1f} s)" if args.cache else "(as witness wrote them)")


if __name__ == "__main__":
    main()
