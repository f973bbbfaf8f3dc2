"""The PLDA VBx clusters CAM++ window embeddings in (``witness/diarize/vbx.py``), trained on
the tuning corpus's tune parts only (the corpus is split by speaker: no check-part speaker
is used, which this script checks against each corpus's index).

Rows: the training window embeddings (``clustering.filter_embeddings``) of every tune call,
as the pipeline computes them (segmentation-3.0 + CAM++, cached by ``measure_counting``),
centred on their call's mean (``vbx.file_centred``, as VBx sees them), those whose local
speaker's lone frames are >= 80% one reference speaker; the class of a row is its speaker in
its call (the spread VBx must tell apart is within one call). Model (deterministic: no
sampling): unit norm, centre, LDA to ``--dims`` (within-class whitened, between-class
diagonal), length norm to sqrt(dims), centre, then the two-covariance PLDA's simultaneous
diagonalisation (within-class identity, between-class diag(phi)).
(Classes of speakers across calls, without the centring, counted far worse: the band and
codec of a call then count as one speaker's spread, and VBx merged different speakers.)

    PYTHONPATH=. python scripts/train_plda.py --cache /tmp/witness-counting-cache \\
        --v2-cache /tmp/witness-counting-cache-v2 --save-rows /tmp/plda-rows.npz   # writes witness/diarize/data/campplus_plda.*
"""

from __future__ import annotations

import argparse
import json
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.linalg import eigh

from scripts.counting_sets import CORPUS, COHORT, corpus_items
from scripts.measure_counting import cached_windows, reference_labels
from witness.diarize.config import config_for
from witness.diarize.pipeline import Diarizer
from witness.diarize.vbx import Plda, file_centred
from witness.models.diarization_choice import choose_models

NAME = "campplus_plda"


def labelled_rows(corpora: list[tuple[Path, Path]], centred: bool = True) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Call-centred embeddings (n, dim) (unit-normed only, as clustering sees them, when not
    ``centred``), their classes (n,) "corpus/tune/call/speaker" and the calls they came from,
    from the tune part of each (corpus, cache) pair."""
    models = choose_models("campplus")
    diarizer = Diarizer(replace(models, vad=None), config_for(models.embedding))
    rows, names, calls = [], [], []
    for corpus, cache in corpora:
        parts = json.loads((corpus / "index.json").read_text())["parts"]
        for item in corpus_items(corpus, "tune"):
            assert set(item.speakers_in_call) <= set(parts["tune"]), f"{item.wav}: a speaker outside the tune part"
            embeddings, labels, _, speakers = reference_labels(cached_windows(diarizer, item, cache), item)
            keep = labels >= 0
            call = f"{corpus.name}/tune/{item.name}"
            x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
            rows.append((file_centred(embeddings) if centred else x.astype(np.float64))[keep])
            names += [f"{call}/{speakers[k]}" for k in labels[keep]]
            calls.append(call)
    return np.concatenate(rows), np.array(names), calls


def _scatter(x: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Within- and between-class covariances (dim, dim) of centred rows x (n, dim): the
    between one over class means (each class once), the within one over rows."""
    _, inverse = np.unique(classes, return_inverse=True)
    counts = np.bincount(inverse)
    means = np.zeros((len(counts), x.shape[1]))
    np.add.at(means, inverse, x)
    means /= counts[:, None]
    within = x - means[inverse]
    centred = means - means.mean(axis=0)
    return within.T @ within / len(x), centred.T @ centred / len(counts)


def _diagonalise(within: np.ndarray, between: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """(dim, dims) basis B with B' within B = I and B' between B = diag(values), values
    (dims,) largest first; each column's sign fixed (largest entry positive)."""
    values, vectors = eigh(between, within + 1e-6 * np.trace(within) / len(within) * np.eye(len(within)))
    order = np.argsort(values)[::-1][:dims]
    vectors = vectors[:, order]
    vectors *= np.sign(vectors[np.abs(vectors).argmax(axis=0), np.arange(vectors.shape[1])])
    return vectors, np.maximum(values[order], 0.0)


def train_plda(embeddings: np.ndarray, classes: np.ndarray, dims: int) -> Plda:
    """The PLDA of call-centred ``embeddings`` (n, dim) labelled by ``classes`` (n,) (module
    docstring); ``dims`` is capped at the number of classes less one."""
    dims = min(dims, len(np.unique(classes)) - 1)
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    mean = x.mean(axis=0)
    lda, _ = _diagonalise(*_scatter(x - mean, classes), dims)
    y = (x - mean) @ lda
    y *= np.sqrt(dims) / np.linalg.norm(y, axis=1, keepdims=True)
    lda_mean = y.mean(axis=0)
    transform, phi = _diagonalise(*_scatter(y - lda_mean, classes), dims)
    return Plda(mean, lda, lda_mean, transform, phi)


def write(plda: Plda, classes: np.ndarray, calls: list[str], corpora: list[Path], dims: int) -> None:
    """witness/diarize/data/campplus_plda.npz (float32) and its provenance (.json)."""
    np.savez(COHORT / f"{NAME}.npz", **{k: getattr(plda, k).astype(np.float32)
                                         for k in ("mean", "lda", "lda_mean", "transform", "phi")})
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    names, counts = np.unique([c.rsplit("/", 1)[1] for c in classes], return_counts=True)
    indexes = {c.name: json.loads((c / "index.json").read_text()) for c in corpora}
    provenance = {
        "what": "PLDA for VBx clustering of CAM++ window embeddings (witness.diarize.vbx)",
        "made_by": f"scripts/train_plda.py --dims {dims}", "commit": commit,
        "corpora": {name: {"version": ix.get("version"), "seed": ix.get("seed"), "source": ix.get("source"),
                           "part": "tune", "generator": "scripts/make_corpus.py",
                           "check_speakers_excluded": ix["parts"]["check"]} for name, ix in indexes.items()},
        "method": ("segmentation-3.0 (fp32) + CAM++ window embeddings as the pipeline computes them; training "
                   "embeddings (clustering.filter_embeddings) whose lone frames are >= 80% one reference speaker; "
                   "each call's embeddings centred on their mean (vbx.file_centred); class = speaker in call; "
                   "unit norm, centre, LDA, length norm, centre, two-covariance PLDA"),
        "dims": int(len(plda.phi)), "rows": int(len(classes)), "classes": int(len(np.unique(classes))),
        "calls": calls,
        "speakers": {str(n): int(c) for n, c in zip(names, counts)},
        "speech_licence": "LibriSpeech (CC BY 4.0); per utterance in each call's .json",
    }
    (COHORT / f"{NAME}.json").write_text(json.dumps(provenance, indent=1) + "\n")
    print(f"PLDA: {len(plda.phi)} dims from {len(classes)} rows of {len(names)} speakers in {len(calls)} calls; "
          f"phi {plda.phi[:4].round(2)} ... {plda.phi[-2:].round(3)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-counting-cache"))
    parser.add_argument("--v2-corpus", type=Path, default=CORPUS.parent / "v2")
    parser.add_argument("--v2-cache", type=Path, default=Path("/tmp/witness-counting-cache-v2"))
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--save-rows", type=Path, help="also save the labelled rows here (.npz), for "
                                                        "measure_counting.py --plda-rows")
    args = parser.parse_args()
    corpora = [(args.corpus, args.cache), (args.v2_corpus, args.v2_cache)]
    embeddings, classes, calls = labelled_rows(corpora)
    if args.save_rows:
        np.savez(args.save_rows, embeddings=embeddings, classes=classes)
    write(train_plda(embeddings, classes, args.dims), classes, calls, [c for c, _ in corpora], args.dims)


if __name__ == "__main__":
    main()
