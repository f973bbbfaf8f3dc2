#!/usr/bin/env python3
"""Which found speakers are one person? Per call found with three or more speakers, each pair's
``opinion.piece_ratio`` and the cosine of their voices, beside whether the reference says they
are one person (each found speaker stands for the reference speaker most of its words belong
to): the study behind ``[merge] voice_join``.

The calls are merged again from ``scripts/measure_merge.py``'s cache (words, turns, centroids)
with the default merge options but ``voice_join`` 0 (``--set`` changes others); the second
opinion's pieces are embedded with CAM++ as the merge does, and each piece of ``opinion_piece``
seconds or more counts for the speaker its words end up with.

    python scripts/measure_merge.py --calls DIR --cache CACHE     # the runs, once
    python scripts/voice_pairs.py --calls DIR --cache CACHE [--only tune_001,tune_004]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.attribution_errors import options_from, reference, tokens  # noqa: E402
from witness.audio import load_audio  # noqa: E402
from witness.diarize.embedding import CamPlusPlusEmbedder  # noqa: E402
from witness.evaluate.wer import align_words  # noqa: E402
from witness.merge import merge  # noqa: E402
from witness.models.diarization_choice import choose_models  # noqa: E402
from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices, piece_ratio  # noqa: E402
from witness.transcript import read_transcript  # noqa: E402


@dataclass
class Recorded:
    """A ``Voices`` that keeps every region it embedded, with its vector."""

    inner: CentroidVoices
    seen: dict = field(default_factory=dict)

    @property
    def centroids(self):
        return self.inner.centroids

    def vectors(self, regions):
        out = self.inner.vectors(regions)
        self.seen.update({region: vector for region, vector in zip(regions, out) if vector is not None})
        return out


def pairs(call: Path, cached: Path, options, embedder) -> list[tuple[float, float, bool, str, str]]:
    """(piece_ratio, voice cosine, one person by the reference, a, b) per pair of found speakers."""
    transcript = read_transcript(cached)
    words = [replace(w, speaker=None) for w in sorted(transcript.words, key=lambda w: (w.start, w.end))]
    voices = Recorded(CentroidVoices(load_audio(call).samples, embedder.embed, dict(np.load(cached.with_suffix(".npz")))))
    labels = [w.speaker for w in merge(words, transcript.exclusive_turns, options, voices).words]
    ref = reference(call)[0]
    hyp = tokens(words, labels)
    heard = Counter((hyp[p.hyp_index][1], ref[p.ref_index][1]) for p in align_words([t[0] for t in ref], [t[0] for t in hyp])
                    if p.ref_index is not None and p.hyp_index is not None and hyp[p.hyp_index][1] is not None)
    who = {h: max((n, r) for (x, r), n in heard.items() if x == h)[1] for h, _ in heard}
    starts = {w.start: label for w, label in zip(words, labels)}
    pieces = defaultdict(list)
    for (start, end), vector in voices.seen.items():
        if end - start >= options.opinion_piece and starts.get(start) is not None:
            pieces[starts[start]].append(vector)
    if len({label for label in labels if label is not None}) < 3:
        return []
    found = sorted(name for name, vectors in pieces.items() if len(vectors) >= 2 and name in who)
    out = []
    for a, b in itertools.combinations(found, 2):
        va, vb = (np.mean(pieces[n], axis=0) for n in (a, b))
        cosine = float(va @ vb / np.linalg.norm(va) / np.linalg.norm(vb))
        out.append((piece_ratio(np.array(pieces[a]), np.array(pieces[b])), cosine, who[a] == who[b], a, b))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Path, required=True, help="the calls (.wav, .stm, .rttm, .json)")
    parser.add_argument("--cache", type=Path, required=True, help="measure_merge.py's cache for those calls")
    parser.add_argument("--only", help="comma-separated call names")
    parser.add_argument("--set", action="append", default=[], help="merge option NAME=VALUE (repeatable)")
    args = parser.parse_args()
    options = replace(options_from(args.set), voice_join=0.0)
    embedder = CamPlusPlusEmbedder(choose_models(opinion=options.opinion_precision).opinion,
                                   min_clean_seconds=OPINION_MIN_SECONDS)
    only = set(args.only.split(",")) if args.only else None
    rows = []
    for cached in sorted(args.cache.glob("*.json")):
        call = args.calls / f"{cached.stem}.wav"
        if (only and cached.stem not in only) or not call.exists():
            continue
        for ratio, cosine, same, a, b in sorted(pairs(call, cached, options, embedder), reverse=True):
            rows.append((ratio, cosine, same))
            print(f"{cached.stem:12s} {a} {b}  piece_ratio {ratio:.3f}  cosine {cosine:.3f}  {'one person' if same else ''}")
    for same, name in ((True, "one person"), (False, "two people")):
        kept = np.array([(r, c) for r, c, s in rows if s == same]).reshape(-1, 2)
        if len(kept):
            print(f"{name}: {len(kept)} pairs, piece_ratio {kept[:, 0].min():.3f}-{kept[:, 0].max():.3f}, "
                  f"cosine {kept[:, 1].min():.3f}-{kept[:, 1].max():.3f}")


if __name__ == "__main__":
    main()
