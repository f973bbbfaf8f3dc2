"""The second opinion on who said each piece of the words: its audio's voice against each speaker's.

The merge rule (``witness.merge``) gives each word the speaker whose turn it overlaps. The
turns come from 10 s windows whose local speakers can mix two voices, so whole sentences and
the words either side of a change of speaker land on the wrong speaker. Here every stretch
of words (a run of one speaker's words inside a sentence, cut at pauses) is cut at word
boundaries into pieces of about ``piece`` seconds; each piece is embedded (CAM++, the model
diarization clusters with) and moves to the speaker whose voice beats its own speaker's by a
margin. A speaker's voice is the mean of its own pieces' embeddings (pieces of ``piece``
seconds or more, weighted by length), which matches the call's words better than the
diarization's centroid of mixed window embeddings (that one is kept for a speaker with no such
piece); the voices are computed again once the pieces have moved, and the pieces decided again,
``OPINION_ROUNDS`` times in all.

Measured on corpus v2's tune part (``scripts/attribution_errors.py``, each digit a word, calls
whose speakers were counted right): WDER 5.90 -> 3.43% on 2-speaker calls and 3.54 -> 2.89% on
3-4-speaker calls, against the earlier rule (only doubtful stretches of up to 4 s, compared with
the diarization's centroids, margin 0.1). Of that, voices from the pieces rather than the
centroids gained 0.4 point (both kinds pooled), the second and third rounds 0.4 on 2-speaker
calls; smoothing the pieces' speakers over time (Viterbi with a change penalty) gained nothing,
and neither did cutting pieces where the plain assignment changes speaker. Judging only the
pieces that could be doubtful (within 0.5-3 s of a word of another speaker or of a change of
turn, in overlapping turns, or with no turn; with or without up to 20 pieces per speaker far
from any change, for the voices) lost at every size on the tune part, all calls (int8 pieces,
before ``split_gap``): 27-55% of the pieces gave WDER 7.66-8.41% / 8.17-8.88% (2 / 3-4
speakers), with the far pieces (65-83% of them) 6.58-6.85% / 7.58-7.86%, against 6.52 / 7.53%
for all of them: the mid-turn pieces make the voices, and some of them are on the wrong
speaker too.

The pieces are embedded with CAM++ at ``[merge] opinion_precision`` (``witness.run.jobs`` picks
the file). int8 (``witness.models.campplus_int8``) takes the merges 0.56-0.70x fp32's time; the
same words and turns merged again with each (``attribution_errors.py --cache``, all calls):
tune part 4.99 -> 4.89% on 2-speaker calls, 7.28 -> 7.53% on 3-4-speaker calls; check part 4.64
-> 4.50% and 21.97 -> 22.14%. No margin from 0.04 to 0.07 kept the 3-4-speaker calls at fp32's
on the tune part, so fp32 stays the default.

A speaker found twice (``one_voice_twice``, ``MergeOptions.split_gap``). Corpus v2 tune's
over-counted 2-speaker calls (2.59 of their 6.63 points of WDER) hold one voice split into two
clusters; the two halves' voices (means of their pieces) score 0.45-0.80 cosine, as high as
some pairs of different speakers (up to 0.78), so no fixed cosine joins them. Where exactly
three speakers have words, though, the twins beat the next-closest pair by 0.23 and 0.30
(tune_012, tune_016; tune_007's twins, 0.04, stay apart), and the closest pair of a true
3-speaker call beats the next by at most 0.11 (tune_019; tune_002 0.06, tune_011 0.01). Tune
part, each digit a word, all calls: 2-speaker WDER 6.63 -> 4.99% and 3-4-speaker 7.28%
unchanged at a gap of 0.15 or 0.2; 0.1 joins tune_019's speakers (3-4 speakers 14.07%), 0.25
misses tune_012 (6.22%). 0.2 is kept: a wrong join costs a 3-speaker call 40 points, a missed
one a 2-speaker call about 10. Joining the closest pair again and again while four or more
speakers have words changed no tune call at 0.15-0.2; only three is done, the case measured.
On the sample call with Sheila's turns from 21 s on relabelled, the pair beats Diane by 0.32
and is joined; with Diane's from 17 s on, by 0.17, and is not. On corpus v2's check part
(measured after choosing) it joins no call: its two over-counted 2-speaker calls' closest pair
beats the next by 0.03 (check_015, check_005: three close voices, like tune_007), so every
check transcript is unchanged (2-speaker WDER 4.62%, 3-4-speaker 21.97%); dev + sample too.

A voice found twice among more speakers (``one_voice_by_pieces``, ``MergeOptions.voice_join``). The
corpus's 3-4-speaker tune calls are over-counted more often than under-counted (16 against 6 of 39
calls, counting the speakers that have words): one person's words are spread over two to five
speakers, mostly small ones, where cosines between voices say little (tune calls found with three or
more: halves of one voice 0.47-0.89, two clean speakers up to 0.79). Against how alike each
speaker's own pieces are, a voice's halves stand out better: ``piece_ratio`` (the mean cosine of a
piece of one with a piece of the other, over the geometric mean of each one's own mean) is 0.96-1.18
for 14 of the 36 pairs of halves, and at most 0.91 for the 164 pairs of two clean speakers (v1
tune_013: 3 pieces against 9); a speaker that holds two people scores up to 0.98 with another, but
on the tune calls a better pair was joined first. The best pair is joined while it scores
``voice_join`` or more and three or more speakers have words. 0.96 was chosen first, on v1's 30
3-4-speaker tune calls and v2's 9 (v1 12 -> 14 of 30 counted right, WDER 19.72 -> 15.38%); the check
parts (v1, v2), read after, did not change. Measured again on today's diarization
(``scripts/measure_merge.py --calls DIR --cache CACHE``, each value merged again from the cache;
first-round pairs of the 71 tune calls found with three or more speakers with words: v1's 93
2-4-speaker calls, 31 of v3 and its draws, v4's 20, the 3-4-speaker calls of v4's draws): halves of
one voice 0.53-1.10 (22 of 37 at 0.93 or more, 12 at 0.96 or more); two people whose turns are each
at least 70% one person's at most 0.916 (v1 tune_088, tune_073), besides one at 0.98 (v1 tune_005)
whose transcript is the same at 0.93 as at 0.96. Wrong-speaker words, each digit a word, 0.96 ->
0.93: v1 tune 952 -> 886 of 8479 (6 calls better, none worse), v4 tune 445 -> 418 of 8942 (tune_010
31 -> 4), v4-d2's 3-4-speaker and over-counted calls 239 -> 214 (tune_003, 2 speakers found as 3),
v3 and draws 547 -> 530 of 14349 (tune_001, 5 speakers found as 7), v4-d1, v4-d3 and the dev calls
with the sample call unchanged. 0.92 adds v4 tune_017 (0.928; 119 -> 52); 0.90 joins two people (v1
tune_088 9 -> 34, tune_073 11 -> 34), 0.85 two on v4 tune_017 (119 -> 206); 0.93 keeps a margin over
0.916. No 2-speaker call changes unless found with three: the rule never goes below two speakers
(one or two is the second voice check's, ``witness.diarize.second_voice``). The check part (v3 and
draws, the 18 calls found with three or more, read once after 0.93 was chosen): one call changed,
v3-d1 check_028 (4 speakers found as 5) 64 -> 12 wrong of 679, found as 4 by the whole job.
Splitting a speaker whose pieces fall in two groups (spherical 2-means) has no safe cut: 0.60-0.99
where it holds two people (19 tune speakers), 0.49-0.98 where it holds one (103).

``Voices`` is what the merge asks: an embedding per time region and the diarization's
centroids. ``CentroidVoices`` answers from the decoded samples and an embedding function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np

from witness.audio import SAMPLE_RATE
from witness.diarize.embedding import embed_by_length
from witness.transcript import Word

OPINION_MIN_SECONDS = 0.25  # s: a shorter piece is not embedded (a single digit, "Yes", lasts about this)
OPINION_MAX_SECONDS = 4.0  # s: of a longer piece only the middle is embedded
OPINION_PAD_SECONDS = 0.1  # s: Whisper's word edges are often a little off (the sample call's first "Hello?")
JOIN_FLOOR = 2  # speakers: ``one_voice_by_pieces`` never joins below this (one voice or two is the second voice check's)
JOIN_MIN_PIECES = 2  # pieces a speaker needs for ``piece_ratio`` (it needs two to say how alike its own are)
OPINION_ROUNDS = 3  # voices from the pieces, pieces decided, again: tune part 1 round 3.87%, 2 3.74%, 3 and more 3.43-3.45%


class Voices(Protocol):
    centroids: Mapping[str, np.ndarray]  # the diarization's, (dim,) by speaker label

    def vectors(self, regions: Sequence[tuple[float, float]]) -> list[np.ndarray | None]:
        """Per (start, end) region in seconds, a unit embedding of its audio, or None where
        the region cannot be judged (too short)."""


@dataclass(frozen=True)
class CentroidVoices:
    """Embeddings of regions of one call's audio, and the diarization's centroids.

    samples: (n,) float32 at 16 kHz. embed: (N, samples) float32 -> (N, dim) (NaN where too
    short) by a Kaldi-filterbank model, e.g. ``CamPlusPlusEmbedder.embed``. centroids: (dim,) by speaker label. Each
    region is widened by ``pad`` s at both ends; one shorter than ``min_seconds`` is not
    embedded, of one longer than ``max_seconds`` only its middle ``max_seconds`` are.
    workers: threads that embed at once (the same vectors on any number)."""

    samples: np.ndarray
    embed: Callable[[np.ndarray], np.ndarray]
    centroids: Mapping[str, np.ndarray]
    min_seconds: float = OPINION_MIN_SECONDS
    max_seconds: float = OPINION_MAX_SECONDS
    pad: float = OPINION_PAD_SECONDS
    workers: int = 1

    def vectors(self, regions: Sequence[tuple[float, float]]) -> list[np.ndarray | None]:
        """The regions' pieces are embedded by ``embedding.embed_by_length`` (a row of a batch
        costs CAM++ about 20% less than a call of its own), on ``workers`` threads."""
        kept: list[int] = []  # region index of each piece embedded
        pieces: list[np.ndarray] = []
        for k, (start, end) in enumerate(regions):
            start, end = start - self.pad, end + self.pad
            cut = max(0.0, (end - start - self.max_seconds) / 2)
            start, end = start + cut, end - cut
            piece = self.samples[max(0, round(start * SAMPLE_RATE)):max(0, round(end * SAMPLE_RATE))]
            if len(piece) >= self.min_seconds * SAMPLE_RATE:
                kept.append(k)
                pieces.append(piece)
        out: list[np.ndarray | None] = [None] * len(regions)
        for k, vector in zip(kept, embed_by_length(self.embed, pieces, self.workers)):
            vector = np.asarray(vector, np.float64)
            out[k] = _unit(vector) if np.isfinite(vector).all() else None
        return out


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


def _scores(vector: np.ndarray, voices: Mapping[str, np.ndarray]) -> dict[str, float]:
    return {name: float(vector @ voice) for name, voice in voices.items()}


@dataclass(frozen=True)
class Opinion:
    """New labels, one per word, and how many pieces were embedded."""

    labels: list[str | None]
    asked: int
    absorbed: dict[str, str]  # speaker found twice -> the one its words went to (``one_voice_twice``)


def second_opinion(words: Sequence[Word], labels: Sequence[str | None], spans: Sequence[range], voices: Voices,
                   gap: float, margin: float, piece: float, split_gap: float = 0.0, voice_join: float = 0.0) -> Opinion:
    """Step 4 of ``witness.merge``: ``words`` sorted by start with their ``labels``; ``spans``
    the sentences. Stretches are cut at pauses of ``gap`` s and into pieces of about ``piece``
    s; a piece moves to the speaker whose voice beats its own's by ``margin`` (an unattributed
    one to the closest voice), in ``OPINION_ROUNDS`` rounds (module docstring); then, with
    ``split_gap`` > 0, ``one_voice_twice``."""
    pieces = [p for span in spans for run in _stretches(words, labels, span, gap) for p in _pieces(words, run, piece)]
    regions = [(words[p.start].start, words[p.stop - 1].end) for p in pieces]
    judged = [(p, r, v) for p, r, v in zip(pieces, regions, voices.vectors(regions) if regions else []) if v is not None]
    fixed = list(labels)
    for _ in range(OPINION_ROUNDS):
        known = _speaker_voices(fixed, judged, piece, voices.centroids)
        if not known:
            break
        before = list(fixed)
        for run, _, vector in judged:
            scores = _scores(vector, known)
            best, own = max(scores, key=scores.get), before[run.start]
            if best != own and (own not in scores or scores[best] - scores[own] >= margin):
                fixed[run.start:run.stop] = [best] * len(run)
    absorbed = one_voice_twice(words, fixed, _speaker_voices(fixed, judged, piece, voices.centroids), split_gap) \
        if split_gap > 0 else {}
    fixed = [absorbed.get(label, label) for label in fixed]
    if voice_join > 0:
        joined = one_voice_by_pieces(words, fixed, judged, piece, voice_join)
        fixed = [joined.get(label, label) for label in fixed]
        absorbed = {gone: joined.get(kept, kept) for gone, kept in absorbed.items()} | joined
    return Opinion(fixed, len(regions), absorbed)


def one_voice_by_pieces(words: Sequence[Word], labels: Sequence[str | None],
                        judged: Sequence[tuple[range, tuple[float, float], np.ndarray]], piece: float,
                        voice_join: float) -> dict[str, str]:
    """While more than ``JOIN_FLOOR`` speakers have words, the two whose pieces (``judged``:
    unit vectors; those of ``piece`` s or more, at least ``JOIN_MIN_PIECES`` a speaker) score
    a ``piece_ratio`` of ``voice_join`` or more are one: the one with less word time goes to
    the other, and the pair is sought again. {each speaker joined: the one its words went to}."""
    labels, absorbed = list(labels), {}
    while True:
        time = _word_time(words, labels)
        if len(time) <= JOIN_FLOOR:
            return absorbed
        groups = {name: [vector for _, vector in found] for name, found in _long_pieces(labels, judged, piece).items()}
        ready = sorted(name for name, vectors in groups.items() if len(vectors) >= JOIN_MIN_PIECES)
        pairs = [(piece_ratio(np.array(groups[x]), np.array(groups[y])), x, y)
                 for i, x in enumerate(ready) for y in ready[i + 1:]]
        best = max(pairs, default=None)
        if best is None or best[0] < voice_join:
            return absorbed
        (gone, kept), = _smaller_to_larger(best[1], best[2], time).items()
        absorbed = {name: kept if to == gone else to for name, to in absorbed.items()} | {gone: kept}
        labels = [kept if label == gone else label for label in labels]


def piece_ratio(a: np.ndarray, b: np.ndarray) -> float:
    """How alike two speakers' pieces are, against how alike each speaker's own are: the mean
    cosine between a piece of ``a`` and one of ``b`` (rows, unit), over the geometric mean of
    the mean cosine between two pieces of ``a`` and of ``b``. Near 1 (or above) for one voice
    found twice, whatever the call's channel and noise do to the cosines themselves."""
    own = [(float((m @ m.T).sum()) - len(m)) / (len(m) * (len(m) - 1)) for m in (a, b)]
    return float((a @ b.T).mean()) / float(np.sqrt(own[0] * own[1])) if min(own) > 0 else 0.0


def one_voice_twice(words: Sequence[Word], labels: Sequence[str | None], known: Mapping[str, np.ndarray],
                    split_gap: float) -> dict[str, str]:
    """Where exactly three speakers have voices (``known``, unit) and two of them are closer to
    each other by ``split_gap`` (cosine) than either is to the third, they are one speaker the
    diarization found twice: {the one with less word time: the other}; else {}."""
    if len(known) != 3:
        return {}
    a, b, c = sorted(known)
    pairs = sorted(((float(known[x] @ known[y]), x, y) for x, y in ((a, b), (a, c), (b, c))), reverse=True)
    if pairs[0][0] - pairs[1][0] < split_gap:
        return {}
    _, x, y = pairs[0]
    return _smaller_to_larger(x, y, _word_time(words, labels))


def _word_time(words: Sequence[Word], labels: Sequence[str | None]) -> dict[str, float]:
    """Seconds of words per speaker that has any."""
    time: dict[str, float] = {}
    for word, label in zip(words, labels):
        if label is not None:
            time[label] = time.get(label, 0.0) + word.end - word.start
    return time


def _smaller_to_larger(x: str, y: str, time: Mapping[str, float]) -> dict[str, str]:
    """Of two speakers found to be one, {the one with less word ``time``: the other} (a tie: to ``x``)."""
    return {y: x} if time.get(x, 0.0) >= time.get(y, 0.0) else {x: y}


def _long_pieces(labels: Sequence[str | None], judged: Sequence[tuple[range, tuple[float, float], np.ndarray]],
                 piece: float) -> dict[str, list[tuple[float, np.ndarray]]]:
    """(seconds, unit vector) of each speaker's pieces of at least ``piece`` s, in order."""
    found: dict[str, list[tuple[float, np.ndarray]]] = {}
    for run, (start, end), vector in judged:
        if labels[run.start] is not None and end - start >= piece:
            found.setdefault(labels[run.start], []).append((end - start, vector))
    return found


def _speaker_voices(labels: Sequence[str | None], judged: Sequence[tuple[range, tuple[float, float], np.ndarray]],
                    piece: float, centroids: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Unit voice per speaker that has words: the length-weighted mean of its pieces of at
    least ``piece`` s, else its diarization centroid (a speaker with neither has no voice)."""
    sums: dict[str, np.ndarray] = {}
    for name, found in _long_pieces(labels, judged, piece).items():
        for seconds, vector in found:
            sums[name] = sums.get(name, 0.0) + seconds * vector
    for name in {label for label in labels if label is not None} - set(sums):
        if name in centroids:
            sums[name] = np.asarray(centroids[name], dtype=np.float64)
    return {name: _unit(total) for name, total in sums.items()}


def _stretches(words: Sequence[Word], labels: Sequence[str | None], span: range, gap: float) -> list[range]:
    """Runs of one label within ``span``, cut where a pause of ``gap`` s falls."""
    runs, start = [], span.start
    for i in span:
        if i == span.stop - 1 or labels[i + 1] != labels[i] or words[i + 1].start - words[i].end >= gap:
            runs.append(range(start, i + 1))
            start = i + 1
    return runs


def _pieces(words: Sequence[Word], run: range, piece: float) -> list[range]:
    """``run`` cut at word boundaries into pieces of at least ``piece`` s; a tail shorter than
    half of that joins the piece before it."""
    out, start = [], run.start
    for i in run:
        if words[i].end - words[start].start >= piece:
            out.append(range(start, i + 1))
            start = i + 1
    if start < run.stop:
        if out and words[run.stop - 1].end - words[start].start < piece / 2:
            out[-1] = range(out[-1].start, run.stop)
        else:
            out.append(range(start, run.stop))
    return out
