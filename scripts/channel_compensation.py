"""Does a linear channel compensation of the CAM++ window embeddings make narrowband speaker
counting hold (issue 22)? Answer on the tune parts: no (measured and dropped).

Different-speaker centroids score 0.27 (mean cosine) on wideband calls but 0.60-0.63 in
telephone band and codecs: the channel adds a shared component to every voice. Each transform
is fitted on the tuning corpus's tune parts (v1 + v2; ``train_plda.labelled_rows``, not
call-centred) from their narrowband rows (telephone, AMR-NB, Opus) and applied as
``unit((x - mean) @ matrix)`` to the unit window embeddings of narrowband calls
(``band.narrowband``) before AHC and the s-norm merge, the cohort's rows likewise (the split and
later stages are untouched). Every tune call is scored with a transform fitted without its own
speakers (leave-speakers-out, as ``measure_counting``'s cohort and PLDA are).

Transforms: ``mean`` (the narrowband mean subtracted), ``napK`` (nuisance attribute projection:
the K leading directions of each speaker's per-call mean less that speaker's mean over calls
projected out), ``ldaD`` (LDA to D dims, class = speaker across calls), ``wccn`` (within-speaker
covariance whitening, 10% ridge).

    PYTHONPATH=. python scripts/channel_compensation.py --scores          # separability by band
    PYTHONPATH=. python scripts/channel_compensation.py --transform nap5 -- \\
        --sets tune --corpus ~/.cache/witness/corpus/v2 --cache /tmp/count-v2   # measure_counting.py with it

Results at e0b37ae (caches /tmp/s10/count-v1, -v2). ``--scores --transforms
raw,mean,wccn,lda128,lda64,nap5,nap10,nap20``: equal error rate of same- against different-speaker
scores between the unit means of 4 consecutive embeddings of a speaker in one call (all pairs in
a call, pooled), narrowband calls v1 / v2 (mean same / different cosine, both): raw 1.3% / 1.3%
(0.90 / 0.49), mean 0.8% / 1.5% (0.83 / 0.12), wccn 0.5% / 2.1% (0.79 / 0.08), lda128 0.5% /
2.4%, lda64 0.8% / 2.9%, nap5 1.1% / 1.1% (0.90 / 0.48), nap10 1.1% / 1.1%, nap20 1.3% / 1.2%;
wideband calls 0.0% (0.89 / 0.24), untouched. Mean, WCCN and LDA bring the narrowband scores down
to the wideband ones but separate v2's voices worse; NAP separates both a little better.

``--transform T -- --sets tune --thresholds 0.45,0.5,0.55 --snorm-thresholds 4,5,6`` (2-4-speaker
calls counted right, strict DER of the whole part; shipped: AHC 0.45, narrowband s-norm cut 5):
  raw (shipped)  v1 66/92 26.1%   v2 15/28 21.9%
  mean           v1 63/92 27.6%   v2 13/28 23.4%   (best v1: AHC 0.55 cut 5, 69 26.2%; v2 there 14 22.3%)
  lda128         v1 65/92 29.0%   v2 14/28 39.6%   (AHC 0.55 cut 6: 70 27.7%, v2 14 25.5%)
  wccn           v1 65/92 29.3%   v2 14/28 26.8%
  nap5           v1 71/92 25.9%   v2 16/28 22.4%   (cut 4.5: 67 26.6%, 16 21.4%; 5.5: 70 25.8%, 15 22.5%)
  nap10          v1 72/92 26.2%   v2 13/28 22.1%
  nap20          v1 71/92 26.1%   v2 14/28 20.8%   (cut 4.5: 70 26.5%, 14 20.6%)
  raw, AHC 0.55 cut 4: v1 64/92 29.7%, v2 18/28 17.4% (v2's best counts after NAP, 17-19 at 0.55
  cut 4, come from that cut, not from the transform).
NAP hears more of v1's similar voices apart on narrowband lines (under-counts 21 -> 17) but not
v2's over-counts (13 -> 12-15), and it splits lone voices: ``--sets onevoice-tune,muted-tune``
at the shipped cuts, v2: raw onevoice 16/20 5.5%, muted 13/20 14.9%; nap5 15/20 8.4%, 13/20
16.8%; nap10 15/20 8.6%, 13/20 17.0%; nap20 16/20 5.8%, 14/20 17.4% (v1: raw 58/61 5.4%,
55/61 15.3%; nap5 58/61 5.4%, 57/61 15.7%; nap10 58/61 5.4%, 53/61 16.1%; nap20 58/61 5.4%, 54/61
15.8%). Fitted on every band's rows (``--every-band``), nap5: v1 69/92 25.9%, v2 14/28 23.0%
(cut 5.5: 69 26.5%, 12 23.4%), its guards v2 17/20 4.9%, 13/20 15.8%; nap10: v1 67 26.9%, v2 13
22.3%. Projecting the channel directions out takes voice information they also carry: one
reader's sessions and codecs move apart. No transform wins on both parts with the guards held,
so none is shipped.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from scripts import measure_counting
from scripts.counting_sets import CORPUS, TUNING_SETS, corpus_items
from scripts.train_plda import _diagonalise, _scatter, labelled_rows
from witness.audio import load_audio
from witness.diarize import clustering as clustering_module
from witness.diarize.band import narrowband

NARROW_BANDS = ("telephone", "amr-nb", "opus")
GROUP = 4  # embeddings per unit mean in --scores


def fit(name: str, x: np.ndarray, speakers: np.ndarray, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean (dim,), matrix (dim, d)) of transform ``name`` fitted on unit rows ``x`` (n, dim),
    each row's speaker and call (n,)."""
    dim = x.shape[1]
    if name == "mean":
        return x.mean(axis=0), np.eye(dim)
    if name.startswith("nap"):
        keys = sorted(set(zip(calls, speakers)))
        means = np.stack([x[(calls == c) & (speakers == s)].mean(axis=0) for c, s in keys])
        owner = np.array([s for _, s in keys])
        spread = np.concatenate([means[owner == s] - means[owner == s].mean(axis=0) for s in set(owner)])
        nuisance = np.linalg.eigh(spread.T @ spread)[1][:, -int(name[3:]):]
        return np.zeros(dim), np.eye(dim) - nuisance @ nuisance.T
    mean = x.mean(axis=0)
    within, between = _scatter(x - mean, speakers)
    if name.startswith("lda"):
        return mean, _diagonalise(within, between, int(name[3:]))[0]
    if name == "wccn":
        values, vectors = np.linalg.eigh(within + 0.1 * np.trace(within) / dim * np.eye(dim))
        return mean, vectors @ np.diag(values ** -0.5) @ vectors.T
    raise SystemExit(f"unknown transform {name!r}")


def apply(transform: tuple[np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Unit rows of ``(unit(x) - mean) @ matrix`` for rows ``x`` (n, dim)."""
    y = (x / np.linalg.norm(x, axis=1, keepdims=True) - transform[0]) @ transform[1]
    return y / np.linalg.norm(y, axis=1, keepdims=True)


class Rows:
    """The tune parts' labelled rows (unit, not call-centred): speaker, call and band of each."""

    def __init__(self, corpora: list[tuple[Path, Path]], every_band: bool = False):
        self.x, classes, _ = labelled_rows(corpora, centred=False)
        self.every_band = every_band
        self.calls = np.array([c.rsplit("/", 1)[0] for c in classes])
        self.speakers = np.array([c.rsplit("/", 1)[1] for c in classes])
        bands = {f"{corpus.name}/tune/{item.name}": item.band
                 for corpus, _ in corpora for item in corpus_items(corpus, "tune")}
        self.narrow = np.isin([bands[c] for c in self.calls], NARROW_BANDS)
        self._fits: dict = {}

    def fitted(self, name: str, without: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
        """Transform ``name`` fitted on the narrowband rows (every row with ``every_band``) of
        speakers not in ``without``."""
        if (name, without) not in self._fits:
            keep = (self.narrow | self.every_band) & ~np.isin(self.speakers, list(without))
            self._fits[name, without] = fit(name, self.x[keep], self.speakers[keep], self.calls[keep])
        return self._fits[name, without]


def _eer(same: np.ndarray, different: np.ndarray) -> float:
    labels = np.concatenate([np.ones(len(same)), np.zeros(len(different))])[np.argsort(np.concatenate([same, different]))]
    miss = np.concatenate([[0], np.cumsum(labels)]) / len(same)
    false = 1 - np.concatenate([[0], np.cumsum(1 - labels)]) / len(different)
    i = np.argmin(np.abs(miss - false))
    return 0.5 * (miss[i] + false[i])


def print_scores(rows: Rows, names: list[str]) -> None:
    """Per transform: EER (mean same / different cosine) of group-mean pairs in one call, by band."""
    for name in names:
        pooled: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
        for call in dict.fromkeys(rows.calls):
            mine = rows.calls == call
            x = rows.x[mine]
            if name != "raw" and rows.narrow[mine][0]:
                x = apply(rows.fitted(name, frozenset(rows.speakers[mine])), x)
            groups, owners = [], []
            for speaker in dict.fromkeys(rows.speakers[mine]):
                own = x[rows.speakers[mine] == speaker]
                for part in np.array_split(own, max(1, len(own) // GROUP)):
                    if len(part) >= GROUP // 2:
                        groups.append(part.mean(axis=0) / np.linalg.norm(part.mean(axis=0)))
                        owners.append(speaker)
            if len(groups) < 2:
                continue
            scores, owners = np.stack(groups) @ np.stack(groups).T, np.array(owners)
            i, j = np.triu_indices(len(owners), 1)
            same = owners[i] == owners[j]
            band = "narrowband" if rows.narrow[mine][0] else "wideband"
            for key in (band, f"{call.split('/')[0]} {band}"):
                pooled[key][0].extend(scores[i, j][same])
                pooled[key][1].extend(scores[i, j][~same])
        print(f"{name:8s} " + "  ".join(f"{key} {_eer(np.array(s), np.array(d)):5.1%} ({np.mean(s):.2f} / {np.mean(d):.2f})"
                                        for key, (s, d) in sorted(pooled.items())))


def replay(rows: Rows, name: str, argv: list[str]) -> None:
    """measure_counting.py ``argv`` with transform ``name`` before AHC and the s-norm merge of
    narrowband calls (each tuning call's fitted without its speakers)."""
    current: list = [None]
    narrow: dict[Path, bool] = {}
    plda_without, found = measure_counting._plda_without, clustering_module.ahc_clusters_found

    @contextlib.contextmanager
    def with_transform(item, clustering, plda_rows, dims=128):
        own = frozenset(t.speaker for t in item.reference) if item.set in TUNING_SETS else frozenset()
        if item.wav not in narrow:
            narrow[item.wav] = narrowband(load_audio(item.wav).samples)
        current[0] = rows.fitted(name, own) if narrow[item.wav] else None
        try:
            with plda_without(item, clustering, plda_rows, dims):
                yield
        finally:
            current[0] = None

    def transformed(embeddings, threshold, method="centroid", min_cluster_size=1, bounds=None, merge=None, rivals=None):
        if current[0] is not None:
            embeddings = apply(current[0], np.asarray(embeddings, dtype=np.float64))
            merge = merge and replace(merge, cohort=apply(current[0], merge.cohort))
        return found(embeddings, threshold, method, min_cluster_size, bounds or clustering_module.SpeakerBounds(),
                     merge, rivals)

    measure_counting._plda_without, clustering_module.ahc_clusters_found = with_transform, transformed
    sys.argv = [measure_counting.__file__, *argv]
    measure_counting.main()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/s10/count-v1"))
    parser.add_argument("--v2-corpus", type=Path, default=CORPUS.parent / "v2")
    parser.add_argument("--v2-cache", type=Path, default=Path("/tmp/s10/count-v2"))
    parser.add_argument("--scores", action="store_true", help="separability of each transform by band")
    parser.add_argument("--transforms", default="raw,mean,wccn,lda128,lda64,nap10,nap20", help="with --scores")
    parser.add_argument("--every-band", action="store_true", help="fit on every band's rows, not narrowband only")
    parser.add_argument("--transform", help="mean, napK, ldaD or wccn: run measure_counting.py with the "
                                            "arguments after -- and this transform")
    args, rest = parser.parse_known_args()
    rows = Rows([(args.corpus, args.cache), (args.v2_corpus, args.v2_cache)], args.every_band)
    if args.scores:
        print_scores(rows, args.transforms.split(","))
    if args.transform:
        replay(rows, args.transform, [a for a in rest if a != "--"])


if __name__ == "__main__":
    main()
