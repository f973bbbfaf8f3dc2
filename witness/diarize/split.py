"""A second look at each speaker, turn by turn: a speaker who is two voices is split in two,
and a turn closer to another speaker's turns than to its own speaker's moves there.

The segmentation model gives a 10 s window at most three local speakers, and two voices that
take turns in one window can share one of them (two digit readers on one telephone line did:
every window embedding mixed them, so clustering saw one speaker). Here each exclusive turn of
at least ``min_turn`` seconds is embedded on its own (its middle ``turn_seconds``), and the
turns of each speaker are clustered as the window embeddings are (AHC, then the s-norm merge
against the cohort). A group of at least ``min_turns`` turns, ``min_speech`` seconds and
``min_share`` of the speaker's embedded speech, whose centroid's cosine with every larger kept
group is under ``max_cosine``, becomes a speaker of its own; so does a single turn of at least
``lone_turn`` seconds whose cosine with every larger kept group and with the mean of every
other speaker's turns is under ``lone_cosine`` (a voice the clustering never gave a speaker,
heard in one turn inside another's), and a single turn of at least ``short_turn`` seconds
under the lower ``short_cosine`` in a call of at most ``short_speakers`` speakers (a lost
voice whose turns are all short; not in a many-speaker meeting); other groups join the
closest kept one. Shorter turns, and the overlapped stretches
of the regular turns, follow the nearest embedded turn of their speaker in time. None is
added past the largest count the user allows. Then each embedded turn whose cosine with the
mean of another speaker's embedded turns beats that with the mean of its own speaker's other
ones by ``move_margin`` goes to that speaker (the window embeddings had given a whole turn to
the wrong voice: 2.2-2.4 s turns on three of the four dev calls), unless all of its speaker's
embedded turns would leave: speakers are never merged, by a split or by moves.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Mapping

import numpy as np

from witness.diarize.clustering import ScoreMerge, ahc, merge_by_snorm, normalized
from witness.diarize.config import SplitConfig
from witness.diarize.embedding import embed_by_length
from witness.diarize.features import SAMPLE_RATE
from witness.transcript import Turn, speakers_in_order

Embed = Callable[[np.ndarray], np.ndarray]  # (N, samples) float32 -> (N, dim) float32, NaN rows if too short


@dataclass(frozen=True)
class SplitTurns:
    """turns, exclusive_turns: relabelled, speakers renumbered SPEAKER_00... in order of first
    appearance when any was split; centroids by those labels (a split speaker's parts: the
    mean of their turns' embeddings); added: speakers made by splitting; moved: turns moved;
    long, normed: the embedded long turns (time order, each by its final speaker) and their
    (n, dim) unit embeddings (``scripts/turn_pair_scores.py`` scores speakers by them)."""

    turns: tuple[Turn, ...]
    exclusive_turns: tuple[Turn, ...]
    centroids: Mapping[str, np.ndarray]
    added: int
    moved: int
    long: tuple[Turn, ...]
    normed: np.ndarray


def voice_groups(embeddings: np.ndarray, seconds: np.ndarray, merge: ScoreMerge, config: SplitConfig,
                 others: np.ndarray) -> np.ndarray:
    """(n,) group of each of one speaker's embedded turns ((n, dim), their (n,) durations):
    0 for the group with the most speech, 1... for the others kept (``SplitConfig``); a group
    not kept joins the kept group with the closest centroid. ``others``: (k, dim) unit means
    of the other speakers' embedded turns, which a group of one turn must be far from too (a
    turn of a voice found elsewhere is the moves' to give back); a short one only while k is
    under ``short_speakers``."""
    normed = normalized(embeddings)
    labels = merge_by_snorm(normed, ahc(normed, config.threshold), merge)
    k = int(labels.max()) + 1
    speech = np.bincount(labels, weights=seconds, minlength=k)
    counts = np.bincount(labels, minlength=k)
    centroids = normalized(np.stack([normed[labels == g].mean(axis=0) for g in range(k)]))
    order = np.argsort(-speech, kind="stable")
    kept = [int(order[0])]
    for g in order[1:]:
        cosine = (centroids[kept] @ centroids[g]).max()
        apart = max(cosine, (others @ centroids[g]).max(initial=-1.0))  # from the other speakers too
        lone = counts[g] == 1 and (speech[g] >= config.lone_turn and apart < config.lone_cosine
                                   or speech[g] >= config.short_turn and apart < config.short_cosine
                                   and len(others) < config.short_speakers)
        if lone or (counts[g] >= config.min_turns and speech[g] >= max(config.min_speech, config.min_share * speech.sum())
                    and cosine < config.max_cosine):
            kept.append(int(g))
    closest = np.array(kept)[np.argmax(centroids @ centroids[kept].T, axis=1)]
    rank = {g: i for i, g in enumerate(kept)}
    return np.array([rank[int(closest[g])] for g in labels], dtype=np.int64)


def middle(turn: Turn, seconds: float) -> tuple[float, float]:
    """(start, end) seconds of the middle ``seconds`` of ``turn`` (all of it when shorter)."""
    trim = max(0.0, turn.duration - seconds) / 2
    return turn.start + trim, turn.end - trim


def cut_turn(turn: Turn, seconds: float) -> list[Turn]:
    """``turn`` cut in the fewest equal pieces of at most ``seconds``."""
    n = max(1, int(np.ceil(turn.duration / seconds - 1e-9)))
    step = turn.duration / n
    return [Turn(turn.start + i * step, turn.start + (i + 1) * step, turn.speaker) for i in range(n)]


def embedded_turns(exclusive: tuple[Turn, ...], signal: np.ndarray, embed: Embed, config: SplitConfig,
                   known: dict[tuple[float, float], np.ndarray] | None = None,
                   workers: int = 1) -> tuple[list[Turn], np.ndarray]:
    """The exclusive turns of at least ``min_turn`` seconds that could be embedded (in time
    order) and their (n, dim) unit embeddings, each of its ``middle``; ``known`` (piece ->
    embedding) saves embedding a piece twice and gains the new ones. The new pieces are
    embedded on ``workers`` threads (``embedding.embed_by_length``: the same vectors as one
    by one)."""
    known = {} if known is None else known
    long = sorted((t for t in exclusive if t.duration >= config.min_turn), key=lambda t: t.start)
    pieces = [middle(t, config.turn_seconds) for t in long]
    new = [p for p in dict.fromkeys(pieces) if p not in known]
    audio = [signal[int(a * SAMPLE_RATE):int(b * SAMPLE_RATE)] for a, b in new]
    known.update(zip(new, embed_by_length(embed, audio, workers)))
    if not long:
        return [], np.empty((0, 0))
    vectors = np.stack([known[p] for p in pieces])
    ok = np.isfinite(vectors).all(axis=1)
    return [t for t, good in zip(long, ok) if good], normalized(vectors[ok])


def relabel(turns: tuple[Turn, ...], speaker: str, runs: list[Turn], groups: np.ndarray,
             names: list[str]) -> tuple[Turn, ...]:
    """``turns`` with those of ``speaker`` cut halfway between consecutive embedded turns
    (``runs``, in time order) of different groups, each piece named after its nearest one."""
    middles = [0.5 * (a.end + b.start) for a, b in zip(runs, runs[1:])]
    cuts = [m for m, a, b in zip(middles, groups, groups[1:]) if a != b]
    out = []
    for t in turns:
        if t.speaker != speaker:
            out.append(t)
            continue
        edges = [t.start] + [c for c in cuts if t.start < c < t.end] + [t.end]
        out += [Turn(a, b, names[groups[int(np.searchsorted(middles, 0.5 * (a + b)))]])
                for a, b in zip(edges, edges[1:])]
    return tuple(out)


def _moved(turns: tuple[Turn, ...], span: Turn, to: str) -> tuple[Turn, ...]:
    """``turns`` with the pieces of ``span.speaker``'s turns inside ``span`` given to ``to``;
    turns of one speaker that then overlap or touch are joined."""
    out = []
    for t in turns:
        if t.speaker != span.speaker or t.end <= span.start or t.start >= span.end:
            out.append(t)
            continue
        a, b = max(t.start, span.start), min(t.end, span.end)
        out += [Turn(t.start, a, t.speaker)] * (a > t.start) + [Turn(a, b, to)] + [Turn(b, t.end, t.speaker)] * (t.end > b)
    return joined(out)


def joined(turns) -> tuple[Turn, ...]:
    """``turns`` with the turns of one speaker that overlap or touch made one, by speaker then
    start."""
    out: list[Turn] = []
    for t in sorted(turns, key=lambda t: (t.speaker, t.start)):
        if out and out[-1].speaker == t.speaker and t.start <= out[-1].end:
            out[-1] = Turn(out[-1].start, max(out[-1].end, t.end), t.speaker)
        else:
            out.append(t)
    return tuple(out)


def _moves(normed: np.ndarray, labels: list[str], margin: float) -> list[tuple[int, str]]:
    """(turn, speaker) for each embedded turn (``normed`` (n, dim) unit rows, ``labels`` its
    speaker) closer to another speaker's mean by more than ``margin`` than to the mean of its own
    speaker's other turns (a speaker with one embedded turn keeps it), less those of a speaker
    all of whose turns would move (``_kept_speakers``)."""
    names = sorted(set(labels))
    owner = np.array([names.index(label) for label in labels])
    sums = np.stack([normed[owner == k].sum(axis=0) for k in range(len(names))])
    counts = np.bincount(owner, minlength=len(names))
    out = []
    for i in np.flatnonzero(counts[owner] >= 2):
        means = sums.copy()
        means[owner[i]] -= normed[i]
        scores = normalized(means) @ normed[i]
        best = int(np.argmax(scores))
        if best != owner[i] and scores[best] - scores[owner[i]] > margin:
            out.append((int(i), names[best]))
    return _kept_speakers(out, labels)


def _kept_speakers(moves: list[tuple[int, str]], labels: list[str]) -> list[tuple[int, str]]:
    """``moves`` without those that would take every embedded turn of a speaker (``labels``):
    moving them all would merge that speaker into others after its count was decided. With
    two turns, a speaker's "other turns" are one turn, and both moved: a voice with one long
    turn of its own went to another (v2 tune_011: 4 speakers, 5 found, one real voice and a
    piece of another under one speaker; after the moves one found speaker held two people), as
    did a real speaker's two turns (v1 tune_062, tune_101)."""
    leaving = Counter(labels[i] for i, _ in moves)
    owned = Counter(labels)
    return [(i, to) for i, to in moves if leaving[labels[i]] < owned[labels[i]]]


@dataclass
class _Look:
    """The turns being relabelled, the embedded long turns and their current speakers."""

    turns: tuple[Turn, ...]
    exclusive: tuple[Turn, ...]
    long: list[Turn]
    normed: np.ndarray
    labels: list[str]


def _split(look: _Look, speaker: str, merge: ScoreMerge, config: SplitConfig, room: float) -> list[str]:
    """Split ``speaker`` in ``look`` (at most ``room`` new speakers); the names of its parts."""
    index = [i for i, label in enumerate(look.labels) if label == speaker]
    if len(index) < 2 * config.min_turns or room < 1:
        return [speaker]
    runs = [look.long[i] for i in index]
    others = [normalized(look.normed[[label == name for label in look.labels]].mean(axis=0))
              for name in dict.fromkeys(look.labels) if name != speaker]
    groups = voice_groups(look.normed[index], np.array([t.duration for t in runs]), merge, config,
                          np.reshape(others, (len(others), look.normed.shape[1])))
    groups = np.minimum(groups, min(int(groups.max()), room)).astype(np.int64)
    names = [speaker] + [f"{speaker}.{g}" for g in range(1, int(groups.max()) + 1)]
    if len(names) > 1:
        look.turns = relabel(look.turns, speaker, runs, groups, names)
        look.exclusive = relabel(look.exclusive, speaker, runs, groups, names)
        for i, g in zip(index, groups):
            look.labels[i] = names[g]
    return names


def split_speakers(turns: tuple[Turn, ...], exclusive: tuple[Turn, ...], centroids: Mapping[str, np.ndarray],
                   signal: np.ndarray, embed: Embed, merge: ScoreMerge, config: SplitConfig = SplitConfig(),
                   most: float = float("inf"), known: dict[tuple[float, float], np.ndarray] | None = None,
                   workers: int = 1) -> SplitTurns:
    """Split each speaker whose long exclusive turns are separate voices, then move the turns
    that are closer to another speaker (module docstring).

    turns, exclusive: the diarization's regular and exclusive turns; centroids by label;
    signal: (n,) float32 16 kHz; merge: the clustering's s-norm rule; most: the largest number
    of speakers allowed; known: pieces embedded before, workers: threads that embed
    (``embedded_turns``).
    """
    speakers = speakers_in_order(t.speaker for t in turns)
    long, normed = embedded_turns(exclusive, signal, embed, config, known, workers)
    look = _Look(turns, exclusive, long, normed, [t.speaker for t in long])
    centroids, split = dict(centroids), []
    for speaker in speakers:
        names = _split(look, speaker, merge, config, most - len(speakers) - sum(map(len, split)))
        if len(names) > 1:
            split.append(names[1:])
            centroids.update({name: normalized(normed[[label == name for label in look.labels]].mean(axis=0))
                              .astype(np.float32) for name in names})
    moves = _moves(normed, look.labels, config.move_margin) if len(long) else []
    for i, to in moves:
        look.turns = _moved(look.turns, Turn(long[i].start, long[i].end, look.labels[i]), to)
        look.exclusive = _moved(look.exclusive, Turn(long[i].start, long[i].end, look.labels[i]), to)
        look.labels[i] = to
    if config.move_pieces:
        runs = sorted((p for t in look.exclusive if t.duration >= config.min_turn
                       for p in cut_turn(t, config.move_pieces)), key=lambda t: t.start)
        spans, vectors = embedded_turns(tuple(runs), signal, embed, replace(config, min_turn=0.0, turn_seconds=1e9),
                                        known, workers)
        pieces = _moves(vectors, [t.speaker for t in spans], config.move_margin) if len(spans) else []
        for i, to in pieces:
            look.turns = _moved(look.turns, spans[i], to)
            look.exclusive = _moved(look.exclusive, spans[i], to)
        moves = moves + pieces
    added = sum(map(len, split))
    rename = _names(look.turns) if added else {}
    voices = tuple(Turn(t.start, t.end, rename.get(label, label)) for t, label in zip(long, look.labels))
    if not added:
        return SplitTurns(_ordered(look.turns), _ordered(look.exclusive), centroids, 0, len(moves), voices, normed)
    return SplitTurns(*renumbered(look.turns, look.exclusive, centroids), added, len(moves), voices, normed)


def _ordered(turns) -> tuple[Turn, ...]:
    return tuple(sorted(turns, key=lambda t: (t.start, t.end, t.speaker)))


def renumbered(turns: tuple[Turn, ...], exclusive: tuple[Turn, ...], centroids: Mapping[str, np.ndarray]
               ) -> tuple[tuple[Turn, ...], tuple[Turn, ...], dict[str, np.ndarray]]:
    """``turns``, ``exclusive`` and ``centroids`` with the labels SPEAKER_00, SPEAKER_01, ... in
    order of first appearance in ``turns``."""
    rename = _names(turns)

    def renamed(seq: tuple[Turn, ...]) -> tuple[Turn, ...]:
        return _ordered(Turn(t.start, t.end, rename[t.speaker]) for t in seq)

    return renamed(turns), renamed(exclusive), {rename[k]: v for k, v in centroids.items() if k in rename}


def _names(turns: tuple[Turn, ...]) -> dict[str, str]:
    """{label: SPEAKER_00, SPEAKER_01, ... in order of first appearance in ``turns``}."""
    return {old: f"SPEAKER_{i:02d}" for i, old in enumerate(speakers_in_order(t.speaker for t in _ordered(turns)))}
