#!/usr/bin/env python3
"""The whole product on calls with a reference transcript: `witness FILE...`, then WER, WDER
and, per human utterance, whether its words carry the right speaker.

Files: the sample call and the dev set's simulated calls (their .stm beside each .wav). An
utterance counts as right when the majority of its aligned words carry the speaker the
optimal mapping pairs with its reference speaker.

    python scripts/end_to_end.py                       # sample call + devcall_01..04
    python scripts/end_to_end.py --only sample -v      # per-utterance detail
    python scripts/end_to_end.py -- --embedding ge2e   # extra witness options after --
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts import SAMPLE_CALL, SHARED  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wder import score_words  # noqa: E402
from witness.evaluate.wer import align_words  # noqa: E402
from witness.evaluate.words import words_from_stm, words_from_transcript  # noqa: E402
from witness.transcript import read_transcript  # noqa: E402

CALLS = [SAMPLE_CALL / "sample.wav"] + sorted((SHARED / "data" / "dev-set" / "sim").glob("devcall_*.wav"))


def utterances_right(stm: Path, transcript: Path, verbose: bool) -> tuple[float, float, int, int]:
    """(WER, WDER, utterances with the right speaker, utterances) of one file."""
    segments = read_stm(stm)
    ref, hyp = words_from_stm(segments), words_from_transcript(read_transcript(transcript))
    alignment = align_words([w.text for w in ref], [w.text for w in hyp])
    wer, wder = score_words(ref, hyp)
    owner = [i for i, s in enumerate(segments) for _ in words_from_stm([s])]  # reference word -> utterance
    votes: dict[int, Counter] = {}
    for pair in alignment:
        if pair.ref_index is not None and pair.hyp_index is not None:
            votes.setdefault(owner[pair.ref_index], Counter())[hyp[pair.hyp_index].speaker] += 1
    right = 0
    for i, s in enumerate(segments):
        top = votes.get(i, Counter()).most_common(1)
        said = wder.mapping.get(top[0][0]) if top else None
        right += said == s.speaker
        if verbose:
            print(f"  {'ok   ' if said == s.speaker else 'WRONG'} {s.start:6.2f}-{s.end:6.2f} {s.speaker:7s} -> {said}: {s.text}")
    return wer.wer, wder.wder, right, len(segments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="file names to keep (comma-separated stems, e.g. sample,devcall_02)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each utterance and the transcript")
    parser.add_argument("--out", type=Path, help="score the outputs already in OUT instead of running witness")
    parser.add_argument("extra", nargs="*", help="witness options (after --)")
    args = parser.parse_args()
    calls = [c for c in CALLS if not args.only or c.stem in args.only.split(",")]
    out = args.out or Path(tempfile.mkdtemp(prefix="witness-e2e-"))
    if not args.out:
        subprocess.run([sys.executable, "-m", "witness", "-q", *map(str, calls), "-o", str(out),
                        "--format", "json,txt", *args.extra], cwd=REPO, check=True)
    print(f"{'file':12s} {'WER':>7s} {'WDER':>7s}  utterances right")
    for call in calls:
        if args.verbose:
            print((out / f"{call.stem}.txt").read_text(), end="")
        wer, wder, right, total = utterances_right(call.with_suffix(".stm"), out / f"{call.stem}.json", args.verbose)
        print(f"{call.stem:12s} {wer:7.2%} {wder:7.2%}  {right} of {total}")


if __name__ == "__main__":
    main()
