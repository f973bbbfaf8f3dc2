"""Same- vs different-speaker cosine similarity of speaker embeddings (GE2E or CAM++) on
recordings with reference RTTMs: single-speaker pieces of 1.5-3 s (overlap removed), every pair
of pieces of the same recording scored, pooled over the recordings; prints the cosine
statistics and the pair EER (overall and per recording).

    PYTHONPATH=. python scripts/measure_separation.py --embedding campplus
    PYTHONPATH=. python scripts/measure_separation.py --embedding ge2e \\
        ../shared/data/sample-call/sample.rttm

With no RTTM given: the sample call and every dev-set recording (sim/*.rttm, ami/*.rttm), each
read from the .wav beside its .rttm.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

from witness.audio import SAMPLE_RATE, load_audio
from witness.evaluate.oracle import cut_pieces, solo_intervals
from witness.rttm import read_rttm

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def default_rttms() -> list[Path]:
    dev = SHARED_DATA / "dev-set"
    return [SHARED_DATA / "sample-call" / "sample.rttm", *sorted(dev.glob("sim/*.rttm")), *sorted(dev.glob("ami/*.rttm"))]


def make_embedder(name: str):
    """The embedder ``name`` (ge2e or campplus) on its converted model, CPU, 1 thread."""
    if name == "ge2e":
        from witness.diarize.embedding import GE2EEmbedder
        from witness.models.ge2e import ge2e_onnx_path

        return GE2EEmbedder(ge2e_onnx_path())
    from witness.diarize.embedding import CamPlusPlusEmbedder
    from witness.models.campplus_onnx import campplus_onnx_path

    return CamPlusPlusEmbedder(campplus_onnx_path())


def pair_eer(same: np.ndarray, different: np.ndarray) -> tuple[float, float]:
    """(equal error rate, threshold) of the rule "same speaker when cosine >= t" over all t."""
    best = (1.0, 0.0)
    for t in np.unique(np.concatenate([same, different])):
        rate = max(np.mean(same < t), np.mean(different >= t))
        if rate < best[0]:
            best = (float(rate), float(t))
    return best


def recording_pairs(embedder, rttm: Path, shortest: float, longest: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(same-speaker cosines, different-speaker cosines, pieces) of one recording."""
    audio = load_audio(rttm.with_suffix(".wav")).samples
    (turns,) = read_rttm(rttm).values()
    pieces, labels = [], []
    for speaker, intervals in solo_intervals(turns).items():
        for start, end in cut_pieces(intervals, shortest, longest):
            pieces.append(audio[int(start * SAMPLE_RATE):int(end * SAMPLE_RATE)])
            labels.append(speaker)
    vectors = [embedder.embed(piece[None])[0] for piece in pieces]
    same, different = [], []
    for i, j in itertools.combinations(range(len(vectors)), 2):
        if np.isfinite(vectors[i]).all() and np.isfinite(vectors[j]).all():
            (same if labels[i] == labels[j] else different).append(float(vectors[i] @ vectors[j]))
    return np.array(same), np.array(different), len(pieces)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rttms", nargs="*", type=Path, help="reference RTTMs, each beside its .wav")
    parser.add_argument("--embedding", choices=("ge2e", "campplus"), default="ge2e")
    parser.add_argument("--min", type=float, default=1.5, help="shortest piece, seconds")
    parser.add_argument("--max", type=float, default=3.0, help="longest piece, seconds")
    args = parser.parse_args()

    embedder = make_embedder(args.embedding)
    all_same, all_different = [], []
    for rttm in args.rttms or default_rttms():
        same, different, count = recording_pairs(embedder, rttm, args.min, args.max)
        eer = f"{100 * pair_eer(same, different)[0]:.1f}%" if len(same) and len(different) else "n/a"
        print(f"{rttm.stem:>12}: {count} pieces, {len(same)} same / {len(different)} different pairs, EER {eer}")
        all_same.append(same)
        all_different.append(different)
    same, different = np.concatenate(all_same), np.concatenate(all_different)
    eer, threshold = pair_eer(same, different)
    print(f"{args.embedding}: same speaker      cosine {same.mean():.3f} ± {same.std():.3f} ({len(same)} pairs)")
    print(f"{args.embedding}: different speaker cosine {different.mean():.3f} ± {different.std():.3f} "
          f"({len(different)} pairs)")
    print(f"{args.embedding}: pair EER {100 * eer:.1f}% at cosine {threshold:.3f} "
          f"(unit-vector distance {np.sqrt(2 - 2 * threshold):.3f})")


if __name__ == "__main__":
    main()
