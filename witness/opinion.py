"""The second opinion on who said a stretch of words: its audio's voice against each speaker's.

The merge rule (``witness.merge``) gives each word the speaker whose turn it overlaps. Where
that is in doubt, a stretch of words is embedded (CAM++, the model diarization clusters
with) and compared with each speaker's centroid: the stretch moves to a voice that scores
higher than its speaker's by a margin. Only doubtful stretches are embedded, so the cost is
a few short embeddings per call. A stretch is a run of one speaker's words inside a
sentence, cut at pauses; it is doubtful when it is at most a few seconds long and begins or
ends at a change of speaker (where turns and Whisper's timings disagree most), holds a word
no turn overlapped, is unattributed, or belongs to a short sentence or one that straddles
turns.

``Voices`` is what the merge asks: scores per speaker for time regions. ``CentroidVoices``
answers from the decoded samples, an embedding function and the diarization's centroids.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np

from witness.audio import SAMPLE_RATE
from witness.transcript import Turn, Word

OPINION_MIN_SECONDS = 0.25  # s: a shorter stretch is not embedded (a single digit, "Yes", lasts about this)
OPINION_MAX_SECONDS = 1.5  # s: of a longer stretch only the middle is embedded (dev calls: as good as all of it)
OPINION_PAD_SECONDS = 0.1  # s: Whisper's word edges are often a little off (the sample call's first "Hello?")


class Voices(Protocol):
    def scores(self, regions: Sequence[tuple[float, float]]) -> list[Mapping[str, float] | None]:
        """Per (start, end) region in seconds, a score per speaker (higher: more alike), or
        None where the region cannot be judged (too short)."""


@dataclass(frozen=True)
class CentroidVoices:
    """Cosine similarity of each region's embedding with each speaker's centroid.

    samples: (n,) float32 at 16 kHz. embed: (1, samples) float32 -> (1, dim) (NaN where too
    short), e.g. ``CamPlusPlusEmbedder.embed``. centroids: (dim,) by speaker label. Each
    region is widened by ``pad`` s at both ends; one shorter than ``min_seconds`` is not
    embedded, of one longer than ``max_seconds`` only its middle ``max_seconds`` are."""

    samples: np.ndarray
    embed: Callable[[np.ndarray], np.ndarray]
    centroids: Mapping[str, np.ndarray]
    min_seconds: float = OPINION_MIN_SECONDS
    max_seconds: float = OPINION_MAX_SECONDS
    pad: float = OPINION_PAD_SECONDS

    def scores(self, regions: Sequence[tuple[float, float]]) -> list[Mapping[str, float] | None]:
        names = sorted(self.centroids)
        if not names:
            return [None] * len(regions)
        unit = np.stack([_unit(np.asarray(self.centroids[n], dtype=np.float64)) for n in names])
        out: list[Mapping[str, float] | None] = []
        for start, end in regions:
            start, end = start - self.pad, end + self.pad
            cut = max(0.0, (end - start - self.max_seconds) / 2)
            start, end = start + cut, end - cut
            piece = self.samples[max(0, round(start * SAMPLE_RATE)):max(0, round(end * SAMPLE_RATE))]
            if len(piece) < self.min_seconds * SAMPLE_RATE:
                out.append(None)
                continue
            vector = np.asarray(self.embed(piece[None, :].astype(np.float32))[0], dtype=np.float64)
            out.append(None if not np.isfinite(vector).all() else dict(zip(names, (unit @ _unit(vector)).tolist())))
        return out


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


@dataclass(frozen=True)
class Opinion:
    """New labels, one per word, and how many stretches were embedded."""

    labels: list[str | None]
    asked: int


def second_opinion(words: Sequence[Word], labels: Sequence[str | None], heard: Sequence[bool],
                   spans: Sequence[range], turns: Sequence[Turn], voices: Voices, gap: float, edge: float,
                   margin: float, short: int = 0, longest: float = float("inf")) -> Opinion:
    """Step 4 of ``witness.merge``: ``words`` sorted by start with their ``labels``; ``heard``
    per word, whether a turn of its speaker overlaps it; ``spans`` the sentences; ``turns``
    the exclusive turns, sorted by start. A stretch is cut at pauses of ``gap`` s. It is in
    doubt when it is unattributed or holds a word no turn overlapped, when its sentence has
    at most ``short`` words or lies in more than one turn, or when a change of speaker
    between turns lies within ``edge`` s of its start or end; one longer than ``longest`` s
    is trusted (at that length the turns are reliable; it keeps the cost down). A doubtful
    stretch moves to the best voice when that beats its own speaker's by ``margin``."""
    changes = [time for a, b in zip(turns, turns[1:]) if a.speaker != b.speaker for time in (a.end, b.start)]
    changes.sort()
    turn_of = _turn_of(words, turns)
    doubtful = [run for span in spans for run in _stretches(words, labels, span, gap)
                if words[run.stop - 1].end - words[run.start].start <= longest
                and _in_doubt(words, labels, heard, turn_of, span, run, changes, edge, short)]
    regions = [(words[run.start].start, words[run.stop - 1].end) for run in doubtful]
    fixed = list(labels)
    for run, scores in zip(doubtful, voices.scores(regions) if regions else []):
        if not scores:
            continue
        best = max(scores, key=scores.get)
        own = labels[run.start]
        if best != own and (own is None or (own in scores and scores[best] - scores[own] >= margin)):
            for i in run:
                fixed[i] = best
    return Opinion(fixed, len(regions))


def _stretches(words: Sequence[Word], labels: Sequence[str | None], span: range, gap: float) -> list[range]:
    """Runs of one label within ``span``, cut where a pause of ``gap`` s falls."""
    runs, start = [], span.start
    for i in span:
        if i == span.stop - 1 or labels[i + 1] != labels[i] or words[i + 1].start - words[i].end >= gap:
            runs.append(range(start, i + 1))
            start = i + 1
    return runs


def _turn_of(words: Sequence[Word], turns: Sequence[Turn]) -> list[int | None]:
    """Per word, the index of the turn (sorted by start) that holds its middle, or None."""
    starts = [t.start for t in turns]
    out: list[int | None] = []
    for word in words:
        middle = (word.start + word.end) / 2
        k = bisect_right(starts, middle) - 1
        out.append(k if k >= 0 and turns[k].end >= middle else None)
    return out


def _in_doubt(words: Sequence[Word], labels: Sequence[str | None], heard: Sequence[bool],
              turn_of: Sequence[int | None], span: range, run: range, changes: Sequence[float], edge: float,
              short: int) -> bool:
    if labels[run.start] is None or not all(heard[i] for i in run) or len(span) <= short:
        return True
    if len({turn_of[i] for i in span}) > 1:
        return True
    return any(_near(changes, t, edge) for t in (words[run.start].start, words[run.stop - 1].end))


def _near(times: Sequence[float], time: float, tolerance: float) -> bool:
    i = bisect_left(times, time - tolerance)
    return i < len(times) and times[i] <= time + tolerance
