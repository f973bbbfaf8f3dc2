"""Same- vs different-speaker cosine similarity of GE2E ONNX embeddings on a call with a
human RTTM: single-speaker pieces of 1.5-3 s (overlap removed), every pair scored.

    PYTHONPATH=. python scripts/measure_ge2e_separation.py \
        ../shared/data/sample-call/sample.wav ../shared/data/sample-call/sample.rttm
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from witness.audio import load_audio
from witness.diarize.embedding import GE2EEmbedder
from witness.diarize.oracle import cut_pieces, solo_intervals
from witness.models.ge2e import ge2e_onnx_path
from witness.rttm import read_rttm


def pair_eer(same: np.ndarray, different: np.ndarray) -> float:
    """Equal error rate of the rule "same speaker when cosine >= t" over all thresholds."""
    best = 1.0
    for t in np.unique(np.concatenate([same, different])):
        miss = np.mean(same < t)
        false_alarm = np.mean(different >= t)
        best = min(best, max(miss, false_alarm))
    return float(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wav")
    parser.add_argument("rttm")
    parser.add_argument("--min", type=float, default=1.5, help="shortest piece, seconds")
    parser.add_argument("--max", type=float, default=3.0, help="longest piece, seconds")
    args = parser.parse_args()

    audio, rate = (load_audio(args.wav).samples, 16000)
    assert rate == 16000, "16 kHz mono expected"
    (turns,) = read_rttm(args.rttm).values()
    embedder = GE2EEmbedder(ge2e_onnx_path())
    vectors, labels, lengths = [], [], []
    for speaker, intervals in solo_intervals(turns).items():
        for start, end in cut_pieces(intervals, args.min, args.max):
            piece = audio[int(start * rate):int(end * rate)]
            vectors.append(embedder.embed(piece[None])[0])
            labels.append(speaker)
            lengths.append(end - start)
    emb = np.stack(vectors)
    same, different = [], []
    for i, j in itertools.combinations(range(len(emb)), 2):
        (same if labels[i] == labels[j] else different).append(float(emb[i] @ emb[j]))
    same, different = np.array(same), np.array(different)
    counts = {s: labels.count(s) for s in sorted(set(labels))}
    print(f"pieces: {len(emb)} {counts}, {np.mean(lengths):.2f} s on average")
    print(f"same speaker:      cosine {same.mean():.3f} ± {same.std():.3f} ({len(same)} pairs)")
    print(f"different speaker: cosine {different.mean():.3f} ± {different.std():.3f} ({len(different)} pairs)")
    print(f"pair EER: {100 * pair_eer(same, different):.1f}%")


if __name__ == "__main__":
    main()
