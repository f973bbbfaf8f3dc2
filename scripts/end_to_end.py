#!/usr/bin/env python3
"""The whole product on the sample call: `witness FILE`, then WER, WDER and, per human
utterance, whether its words carry the right speaker.

An utterance counts as right when the majority of its aligned words carry the speaker the
optimal mapping pairs with its reference speaker.

    python scripts/end_to_end.py [--models-dir ../shared/models] [-- extra witness options]
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

from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wder import score_words  # noqa: E402
from witness.evaluate.words import words_from_stm, words_from_transcript  # noqa: E402
from witness.textnorm import normalize_words  # noqa: E402
from witness.transcript import read_transcript  # noqa: E402

CALL = REPO.parent / "shared" / "data" / "sample-call"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models-dir", default=str(REPO.parent / "shared" / "models"))
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="witness-e2e-"))
    subprocess.run([sys.executable, "-m", "witness", "-q", str(CALL / "sample.wav"), "--models-dir", args.models_dir,
                    "-o", str(out), "--format", "json,txt", *args.extra], cwd=REPO, check=True)
    print((out / "sample.txt").read_text(), end="")
    segments = read_stm(CALL / "sample.stm")
    ref, hyp = words_from_stm(segments), words_from_transcript(read_transcript(out / "sample.json"))
    from witness.evaluate.wer import align_words

    alignment = align_words([w.text for w in ref], [w.text for w in hyp])
    wer, wder = score_words(ref, hyp)
    print(f"WER {wer.wer:.2%}  WDER {wder.wder:.2%} ({wder.wrong} of {wder.aligned} aligned words)")
    owner = [i for i, s in enumerate(segments) for _ in normalize_words(s.text)]  # reference word -> utterance
    votes: dict[int, Counter] = {}
    for pair in alignment:
        if pair.ref_index is not None and pair.hyp_index is not None:
            votes.setdefault(owner[pair.ref_index], Counter())[hyp[pair.hyp_index].speaker] += 1
    right = 0
    for i, s in enumerate(segments):
        top = votes.get(i, Counter()).most_common(1)
        said = wder.mapping.get(top[0][0]) if top else None
        right += said == s.speaker
        print(f"  {'ok   ' if said == s.speaker else 'WRONG'} {s.start:6.2f}-{s.end:6.2f} {s.speaker:7s} -> {said}: {s.text}")
    print(f"utterances with the right speaker: {right} of {len(segments)}")


if __name__ == "__main__":
    main()
