"""Can CAM++ hear the speakers the diarization loses at all? (issue 22, oracle cut)

For each call, the final turns (``stage_confusion.stages``, replayed from ``measure_counting.py``'s
cache) are paired with the reference speakers (``stage_confusion.matched``); a reference speaker
paired with nobody is lost, and its host is the found speaker that holds most of its speech.
Every reference speaker's exclusive speech (the .rttm: only they talk) is cut into pieces of
``--min``-``--max`` seconds (a stretch of L s into ceil(L / max) equal pieces), each embedded
alone by CAM++. Per piece, ``apart``: its highest cosine with the found speakers' centroids (what
a rule that knows only the found speakers could ask); ``host_ref_cos`` (lost pieces): its cosine
with the mean of the host's own person's pieces (a perfect model of the host); ``own_rest``
(same-voice pieces): with the mean of its own person's other pieces. Per voice: the mean of its
pieces against its host's centroid and its host person's mean; ``halves``: the cosine of the
means of its even and odd pieces (one voice against itself). One JSON line per piece and voice.

    PYTHONPATH=. python scripts/lost_voices.py --corpus ~/.cache/witness/corpus/v1 \\
        --cache /tmp/count-v1 --out /tmp/lost.jsonl [--calls tune_026,tune_035]

Answer (issue 22, main eb241c2, every 2-4-speaker tune call of v1, v2, v3 and v3-d1..d5: 245
calls; 1-2 s pieces): 590 voices paired with a found speaker (13212 pieces) and 28 lost voices
with an exclusive stretch of at least 1 s (205 pieces; the lost voices of v3-d2 tune_009 and
v3-d5 tune_003, tune_016 have none). Percentiles 5/10/25/50/75/90:

    piece: highest cosine with the found centroids   same  0.62 0.66 0.72 0.77 0.81 0.85
                                                     lost  0.52 0.56 0.63 0.70 0.76 0.81
    piece: with its own person's other pieces        same  0.62 0.65 0.71 0.76 0.80 0.83
           with the host person's pieces (oracle)    lost  0.44 0.48 0.55 0.62 0.69 0.74

    cut   voices with 1 / 2 pieces under it: lost (of 28), same (of 590); calls with a same voice flagged
          highest cosine with the found centroids        host person's mean (oracle; same: own others)
    0.40        1 / 0      4 / 2    4 / 2 calls                4 / 0      5 / 1    4 / 1 calls
    0.45        2 / 0     26 / 3   24 / 3                      9 / 3     17 / 5   16 / 5
    0.50        6 / 1     49 / 15  44 / 13                    16 / 4     49 / 14  43 / 11
    0.55       12 / 3    105 / 35  85 / 30                    20 / 11   120 / 45  94 / 41

So a 1-2 s piece of a lost voice is not heard apart from the found voices: at the cut where a
piece rule would give a new speaker to 24 of the 245 calls' real voices, it would find 2 of the
28 lost voices (v3-d5 tune_012's 1.5 s turn at 0.29, v3-d1 tune_011's 1.6 s at 0.42); even
against a perfect model of the host person it finds 9 for 16 calls' false ones. A lost voice's
own mean is not its host's either (against the host's centroid, which holds it: median 0.84;
same voices against their own 0.97), and against the host person's mean it scores 5/25/50/75%
0.37 0.63 0.70 0.79, where one voice's two halves score 0.69 0.77 0.82 0.86 (voices of 4-8
pieces; 0.91 and up with 16 or more): about half the lost voices would stand apart as groups, but
only once their pieces were grouped, which the pieces' own cosines cannot do. Hence no second
look inside a found speaker's track by 1-2 s pieces: the split's turns cut into pieces of at most
2 s or 3 s, each embedded instead of each turn's middle 3 s (a ``SplitConfig.piece_seconds`` not
kept, ``measure_counting.py --sets tune -v --split piece_seconds=2,3 --dump``), counted 179 and
182 of the 245 calls right (188 before; under-counted 30, 28 against 26), strict DER 18.5%, 18.2%
(19.0%): the pieces part the speakers' own turns more finely, and find no lost voice.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from scripts.counting_sets import set_items
from scripts.stage_confusion import replay_diarizer, write_call_rows, matched, seconds_table, stages
from witness.audio import load_audio
from witness.diarize.clustering import normalized
from witness.diarize.embedding import embed_by_length
from witness.diarize.features import SAMPLE_RATE
from witness.diarize.pipeline import Diarizer
from witness.diarize.split import cut_turn
from witness.evaluate.oracle import solo_intervals
from witness.transcript import Turn


def exclusive_pieces(reference, low: float, high: float) -> dict[str, list[tuple[float, float]]]:
    """{reference speaker: (start, end) pieces of its exclusive speech}: each stretch of at
    least ``low`` s where only that speaker talks, cut in the fewest equal pieces of at most
    ``high`` s."""
    return {speaker: [(piece.start, piece.end)
                      for start, end in stretches if end - start >= low
                      for piece in cut_turn(Turn(start, end, speaker), high)]
            for speaker, stretches in solo_intervals(list(reference)).items()}


def call_rows(diarizer: Diarizer, item, cache: Path, low: float, high: float) -> list[dict]:
    """One row per piece of ``item``: speaker, role (lost/same), apart, host and own cosines."""
    final = stages(diarizer, item, cache)[-1]
    table = seconds_table(item.reference, final.turns)
    pairs = matched(table)
    refs = sorted({t.speaker for t in item.reference})
    hyps = sorted({t.speaker for t in final.turns})
    labels = [h for h in hyps if h in final.centroids]
    centroids = normalized(np.stack([final.centroids[h] for h in labels]))
    signal = load_audio(item.wav).samples
    pieces = exclusive_pieces(item.reference, low, high)
    rows, means = [], {}
    for r, name in enumerate(refs):
        if not pieces[name]:
            continue
        audio = [signal[int(a * SAMPLE_RATE):int(b * SAMPLE_RATE)] for a, b in pieces[name]]
        vectors = np.stack(embed_by_length(diarizer.embedder.embed, audio))
        ok = np.isfinite(vectors).all(axis=1)
        spans = [p for p, good in zip(pieces[name], ok) if good]
        if spans:
            means[name] = (normalized(vectors[ok]), spans)
    call = f"{item.wav.parent.parent.name}/{item.name}"
    for r, name in enumerate(refs):
        if name not in means:
            continue
        normed, spans = means[name]
        host = hyps[pairs[r]] if r in pairs else hyps[int(np.argmax(table[:, r]))]
        host_ref = next((refs[q] for q, f in pairs.items() if hyps[f] == host), None)
        scores = normed @ centroids.T
        own, total = normalized(normed.mean(axis=0)), normed.sum(axis=0)
        base = {"call": call, "speakers": item.speakers, "band": item.band, "ref": name,
                "role": "same" if r in pairs else "lost", "host": host, "host_ref": host_ref, "found": len(hyps)}
        other = means.get(host_ref) if host_ref and host_ref != name else None
        other_mean = None if other is None else normalized(other[0].mean(axis=0))
        for i, (a, b) in enumerate(spans):
            rest = normalized(total - normed[i]) if len(spans) > 1 else None
            rows.append({**base, "kind": "piece", "start": a, "end": b, "apart": float(scores[i].max()),
                         "host_cos": float(scores[i][labels.index(host)]) if host in labels else None,
                         "own_rest": None if rest is None else float(rest @ normed[i]),
                         "host_ref_cos": None if other_mean is None else float(other_mean @ normed[i])})
        halves = (float(normalized(normed[::2].mean(axis=0)) @ normalized(normed[1::2].mean(axis=0)))
                  if len(spans) > 1 else None)
        rows.append({**base, "kind": "speaker", "pieces": len(spans), "seconds": sum(b - a for a, b in spans),
                     "own_vs_host": float(own @ centroids[labels.index(host)]) if host in labels else None,
                     "own_vs_host_ref": None if other_mean is None else float(own @ other_mean),
                     "halves": halves})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--set", default="tune")
    parser.add_argument("--calls", help="comma-separated call names (default: every 2-4-speaker call)")
    parser.add_argument("--min", type=float, default=1.0)
    parser.add_argument("--max", type=float, default=2.0)
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, one per piece (appended)")
    args = parser.parse_args()
    diarizer, pieces = replay_diarizer(args.cache)
    items = [i for i in set_items(args.set, args.corpus, args.cache) if 2 <= i.speakers <= 4]
    write_call_rows(items, args.calls, pieces, args.out,
                    lambda item: call_rows(diarizer, item, args.cache, args.min, args.max))


if __name__ == "__main__":
    main()
