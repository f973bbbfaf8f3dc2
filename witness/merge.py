"""The merge rule: words × speaker turns → utterances. This is the one place it lives.

1. **Assign.** Each word goes to the speaker whose turns overlap it the longest in total
   (as WhisperX does, but by bisection over the sorted turns). A word that overlaps no
   turn goes to the nearest turn when it lies within ``gap_tolerance`` seconds of it;
   otherwise its speaker is None ("unattributed"): it is kept, never dropped.
2. **Repair boundaries.** Word and turn edges disagree by a few hundred milliseconds, so
   the first or last word of a sentence often lands on the neighbouring speaker, or a turn
   blip splits a sentence. Within a sentence (words up to a full stop, question or
   exclamation mark, or a long pause), a short run of another speaker (at most
   ``blip_words`` words and ``blip_seconds`` long) is given to the sentence's majority
   speaker, unless a real pause (``real_pause`` seconds) separates it from the rest and the
   diarization actually heard that speaker during those words — a pause is evidence that
   the speaker changed there, a word that merely fell into a gap next to a turn is not.
3. **Interjections** (``interjections``). Whisper often times a short sentence ("Hello?")
   late, just after the turn it was said in. A sentence of at most ``blip_words`` words and
   ``blip_seconds`` that begins within ``gap_tolerance`` after the end of another speaker's
   turn (at least ``real_pause`` long) in which no word was placed goes to that speaker.
4. **Second opinion** (``witness.opinion``, when the caller gives ``voices``). Every stretch
   (a run of one speaker's words inside a sentence, cut at pauses of ``real_pause``) is cut
   at word boundaries into pieces of about ``opinion_piece`` seconds; each piece is embedded
   and moves to the speaker whose voice (the mean of that speaker's own pieces, computed again
   as pieces move, in rounds) beats its own speaker's by ``opinion_margin``. This is what catches a sentence, or the words either side
   of a change of speaker, that the turns gave to the wrong speaker. Where then exactly three
   speakers have words and two voices are closer to each other by ``split_gap`` than either is
   to the third, they are one speaker found twice: the one with less word time goes to the
   other, in the turns too (``MergeResult.absorbed``; off where the user asked for three or more).
   Then, while three or more speakers have words, two whose pieces are as alike across the pair
   as within each (``opinion.piece_ratio`` at least ``voice_join``) are one speaker too.
5. **Group.** Consecutive words of one speaker form an utterance; an utterance also breaks
   at a pause of ``utterance_pause`` seconds. On a split stereo call (below) each party's
   words are grouped on their own, so one party's backchannel over the other's sentence
   does not cut that sentence up (``group_utterances``).

Measured and dropped (``scripts/turn_edges.py``, corpus v2 tune and dev + sample; each raised
WDER): a word given the speaker most active in segmentation-3.0's frames inside it (for all,
brief, or turn-edge words, at any margin), a word in overlap given to the speaker with the
shorter turn there, and a wordless turn taking the word it overlaps most. Most wrongly
attributed backchannels and rapid one-word turns are one voice to the segmentation model.

Measured and dropped (issue 22, session 17; corpus v3, v3-d1, v3-d2 tune 3-4-speaker calls, 16
calls, 15 counted right; ``scripts/measure_merge.py --calls DIR --cache C`` on a folder of links to
those calls, then ``scripts/attribution_errors.py --calls .../tune --cache C -v --oracle [--set
NAME=V]``; each digit a word): WDER 2.77% (221 of 7975 words), of which 73 "missing" (v3-d2
tune_013, 4 -> 3). Where the count is right, the found turns lose no more than the reference turns
do (1.78% against 1.95% merged from the reference turns, no second opinion): the merge is not what
loses the rest. Its causes: "short" 46 (rapid one-word turns and backchannels; 40 already wrong in
the plain assignment, where the found turns miss them; 3 moved wrong by the boundary repair, 3 by
the second opinion), "edge" 40 (within 0.5 s of a change of speaker; 33 wrong in the plain
assignment, 7 moved wrong by the second opinion), overlap 34, misplaced 17, mid-turn 5, no turn 3,
straddle 3. A piece shorter than ``opinion_move`` s (a field tried) keeping its speaker in the
second opinion: 3-4 speakers 221 -> 222 wrong at 0.5 s (v3 28 -> 29, v3-d1 64 -> 63, v3-d2 129 ->
130), v3 28 -> 34 at 0.75 s; 5-6 speakers (v3's 6 calls) 130 -> 131 / 138: the short pieces it
stops are right as often as wrong. ``opinion_piece`` 0.75 / 1.5 s (v3 + v3-d1): 3-4 speakers 92 ->
103 / 95 (5-6 speakers 130 -> 117 / 141): 1 s stays.

Word speakers are decided per word, never per ASR segment, so a Whisper segment that
spans two speakers is split between them. A word that arrives with its speaker (on a stereo
call with one party per channel, each channel is transcribed alone: its words are that
party's) keeps it through every step, and steps 3 and 4 are then skipped.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from witness.transcript import Turn, Utterance, Word, speakers_in_order

if TYPE_CHECKING:  # witness.opinion loads numpy: every command (--help too) imports this module
    from witness.opinion import Voices

SENTENCE_END = (".", "?", "!", "…", "。", "？", "！")


@dataclass(frozen=True)
class MergeOptions:
    """How words meet turns. Defaults are set by ``scripts/merge_benchmark.py``."""

    gap_tolerance: float = 0.5  # s: a word outside every turn joins a turn this close
    repair: bool = True  # boundary repair (step 2 above)
    blip_words: int = 3  # a run of at most this many words…
    blip_seconds: float = 1.5  # …and at most this long may be a boundary error
    real_pause: float = 0.3  # s: a pause this long at a speaker change keeps the change
    sentence_pause: float = 1.0  # s: a pause this long also ends a sentence
    utterance_pause: float = 2.0  # s: a pause this long starts a new utterance
    interjections: bool = True  # a short sentence just after a wordless turn is that turn's (step 3)
    second_opinion: bool = True  # pieces of the words are embedded and compared with each voice (step 4)
    opinion_margin: float = 0.05  # cosine: a voice must beat the piece's speaker by this much (step 4)
    opinion_piece: float = 1.0  # s: stretches are judged in pieces of about this length (step 4)
    split_gap: float = 0.2  # cosine: of three voices, two this much closer to each other than to the third are one (step 4); 0: off
    voice_join: float = 0.93  # of three or more speakers, two whose pieces score this ``opinion.piece_ratio`` are one (step 4); 0: off
    opinion_precision: str = "fp32"  # CAM++ the caller embeds the pieces with: fp32 | int8 (step 4; witness.opinion)


@dataclass(frozen=True)
class MergeResult:
    utterances: tuple[Utterance, ...]
    words: tuple[Word, ...]  # every input word, in time order, with its speaker
    unattributed: int  # words no turn could claim
    repaired: int  # words whose speaker the boundary repair changed
    interjected: int = 0  # words the interjection rule moved
    opinions: int = 0  # pieces embedded for a second opinion
    reopined: int = 0  # words the second opinion moved
    absorbed: Mapping[str, str] = field(default_factory=dict)  # speaker found twice -> the one its words went to (step 4)


def merge(words: Sequence[Word], turns: Sequence[Turn], options: MergeOptions = MergeOptions(),
          voices: Voices | None = None) -> MergeResult:
    """Assign ``words`` to the speakers of ``turns`` (exclusive turns work best) and group them.
    ``voices``: embeddings of pieces of the audio and the diarization's centroids, for the second
    opinion (step 4; None or ``options.second_opinion`` off: none)."""
    ordered = sorted(words, key=lambda w: (w.start, w.end))
    known = [w.speaker for w in ordered]
    labels, heard = _assign(ordered, turns, options.gap_tolerance)
    labels = [k or s for k, s in zip(known, labels)]
    repaired = repair_boundaries(ordered, labels, options, heard) if options.repair else list(labels)
    repaired = [k or s for k, s in zip(known, repaired)]
    counts: dict[str, int] = {}
    final = repaired
    if not any(known):
        final, counts = _second_looks(ordered, repaired, turns, options, voices)
    attributed = tuple(replace(w, speaker=s) for w, s in zip(ordered, final))
    return MergeResult(
        utterances=group_utterances(attributed, options.utterance_pause, overlapping=any(known)),
        words=attributed,
        unattributed=sum(s is None for s in final),
        repaired=sum(a != b for a, b in zip(labels, repaired)),
        **counts,
    )


def _second_looks(words: Sequence[Word], labels: list[str | None], turns: Sequence[Turn], options: MergeOptions,
                  voices: Voices | None) -> tuple[list[str | None], dict[str, Any]]:
    """Steps 3 and 4 of the module docstring on ``labels``: (new labels, words each step moved,
    and stretches embedded, by ``MergeResult`` field)."""
    spans = sentences(words, options.sentence_pause)
    turns = sorted(turns, key=lambda t: (t.start, t.end))
    counts: dict[str, Any] = {}
    if options.interjections:
        labels, counts["interjected"] = _moved(labels, interjections(words, labels, spans, turns, options))
    if voices is not None and options.second_opinion:
        from witness.opinion import second_opinion

        opinion = second_opinion(words, labels, spans, voices, options.real_pause, options.opinion_margin,
                                 options.opinion_piece, options.split_gap, options.voice_join)
        labels, counts["reopined"] = _moved(labels, opinion.labels)
        counts["opinions"], counts["absorbed"] = opinion.asked, opinion.absorbed
    return labels, counts


def _moved(old: Sequence[str | None], new: list[str | None]) -> tuple[list[str | None], int]:
    return new, sum(a != b for a, b in zip(old, new))


def _assign(words: Sequence[Word], turns: Sequence[Turn], gap_tolerance: float) -> tuple[list[str | None], list[bool]]:
    """(speaker per word, whether a turn of that speaker overlaps the word), ``words`` sorted
    by start: most total overlap, else the nearest turn within ``gap_tolerance``, else None.
    Ties go to the turn holding the word's midpoint."""
    if not turns:
        return [None] * len(words), [False] * len(words)
    turns = sorted(turns, key=lambda t: (t.start, t.end))
    starts = [t.start for t in turns]
    ends = list(accumulate((t.end for t in turns), max))  # running latest end: sorted, for bisection
    labels: list[str | None] = []
    heard: list[bool] = []
    for word in words:
        first = bisect_left(ends, word.start)
        last = bisect_right(starts, word.end)
        overlap: dict[str, float] = {}
        for t in turns[first:last]:
            shared = min(t.end, word.end) - max(t.start, word.start)
            if shared > 0 or (shared == 0 and t.start <= word.start <= t.end):
                overlap[t.speaker] = overlap.get(t.speaker, 0.0) + max(shared, 0.0)
        if overlap:
            labels.append(_best(overlap, turns[first:last], word))
        else:
            labels.append(_nearest(turns, starts, word, gap_tolerance))
        heard.append(bool(overlap))
    return labels, heard


def _best(overlap: dict[str, float], candidates: Sequence[Turn], word: Word) -> str:
    top = max(overlap.values())
    tied = [s for s, v in overlap.items() if v >= top - 1e-9]
    if len(tied) > 1:
        mid = (word.start + word.end) / 2
        for t in candidates:
            if t.speaker in tied and t.start <= mid <= t.end:
                return t.speaker
    return tied[0]


def _nearest(turns: Sequence[Turn], starts: list[float], word: Word, tolerance: float) -> str | None:
    i = bisect_left(starts, word.start)
    best, distance = None, tolerance
    for t in turns[max(0, i - 8) : i + 1]:  # earlier turns can end late: look back a little
        gap = max(t.start - word.end, word.start - t.end, 0.0)
        if gap <= distance:
            best, distance = t.speaker, gap
    return best


def sentences(words: Sequence[Word], sentence_pause: float) -> list[range]:
    """Index ranges of sentences: a word ending in . ? ! … ends one, and so does a pause."""
    spans, start = [], 0
    for i, word in enumerate(words):
        last = i == len(words) - 1
        if last or word.text.rstrip("\"')]»”’").endswith(SENTENCE_END) or words[i + 1].start - word.end >= sentence_pause:
            spans.append(range(start, i + 1))
            start = i + 1
    return spans


def repair_boundaries(words: Sequence[Word], labels: Sequence[str | None], options: MergeOptions,
                      heard: Sequence[bool] | None = None) -> list[str | None]:
    """Boundary repair (step 2 in the module docstring); returns new labels. ``heard``:
    per word, whether a turn of its speaker overlaps it (default: all did)."""
    heard = [True] * len(words) if heard is None else heard
    fixed = list(labels)
    for span in sentences(words, options.sentence_pause):
        majority = _majority(words, fixed, span)
        if majority is None:
            continue
        for run in _runs(fixed, span):
            speaker = fixed[run.start]
            if speaker is None or speaker == majority:
                continue
            if _is_blip(words, run, span, options, any(heard[i] for i in run)):
                for i in run:
                    fixed[i] = majority
    return fixed


def _majority(words: Sequence[Word], labels: Sequence[str | None], span: range) -> str | None:
    """Speaker with most word time in ``span`` when the sentence has several; else None."""
    time: dict[str, float] = {}
    for i in span:
        if labels[i] is not None:
            time[labels[i]] = time.get(labels[i], 0.0) + max(words[i].duration, 0.01)
    if len(time) < 2:
        return None
    return max(time, key=time.get)


def _runs(labels: Sequence[str | None], span: range) -> list[range]:
    runs, start = [], span.start
    for i in span:
        if i == span.stop - 1 or labels[i + 1] != labels[i]:
            runs.append(range(start, i + 1))
            start = i + 1
    return runs


def _is_blip(words: Sequence[Word], run: range, span: range, options: MergeOptions, heard: bool) -> bool:
    first, last = words[run.start], words[run.stop - 1]
    if len(run) > options.blip_words or last.end - first.start > options.blip_seconds:
        return False
    if not heard:  # only the nearest-turn fallback put these words there: no evidence
        return True
    before = first.start - words[run.start - 1].end if run.start > span.start else 0.0
    after = words[run.stop].start - last.end if run.stop < span.stop else 0.0
    return before < options.real_pause and after < options.real_pause


def interjections(words: Sequence[Word], labels: Sequence[str | None], spans: Sequence[range],
                  turns: Sequence[Turn], options: MergeOptions) -> list[str | None]:
    """Step 3: a short sentence (``blip_words``, ``blip_seconds``) that begins at most
    ``gap_tolerance`` s after the end of another speaker's turn (at least ``real_pause`` s
    long) in which no word lies goes to that turn's speaker; returns new labels. ``turns``
    sorted by start."""
    fixed = list(labels)
    voiced = _turns_with_words(words, labels, turns)
    starts = [t.start for t in turns]
    for span in spans:
        first, last = words[span.start], words[span.stop - 1]
        if len(span) > options.blip_words or last.end - first.start > options.blip_seconds:
            continue
        before = bisect_right(starts, first.start)
        for k in range(max(0, before - 8), before):
            turn = turns[k]
            if k not in voiced and turn.speaker != fixed[span.start] and turn.duration >= options.real_pause \
                    and 0.0 <= first.start - turn.end <= options.gap_tolerance:
                for i in span:
                    fixed[i] = turn.speaker
                voiced.add(k)
                break
    return fixed


def _turns_with_words(words: Sequence[Word], labels: Sequence[str | None], turns: Sequence[Turn]) -> set[int]:
    """Indices of ``turns`` (sorted by start) that hold the middle of a word given their speaker."""
    starts = [t.start for t in turns]
    voiced = set()
    for word, label in zip(words, labels):
        middle = (word.start + word.end) / 2
        for k in range(max(0, bisect_right(starts, middle) - 8), bisect_right(starts, middle)):
            if turns[k].speaker == label and turns[k].start <= middle <= turns[k].end:
                voiced.add(k)
    return voiced


def group_utterances(words: Sequence[Word], utterance_pause: float, overlapping: bool = False) -> tuple[Utterance, ...]:
    """Consecutive words of one speaker, broken at pauses of ``utterance_pause`` seconds.

    ``overlapping``: words of two speakers may be said at once (a split stereo call's
    channels, transcribed apart). Each speaker's words are then grouped on their own, so a
    backchannel said over someone's sentence does not cut it in pieces; an utterance still
    ends at a pause, and where another speaker said a whole word inside its pause (an answer,
    a turn taken). Utterances are in the order they start, and may overlap in time."""
    groups: list[list[Word]] = []
    if not overlapping:
        for word in words:
            if groups and groups[-1][-1].speaker == word.speaker and word.start - groups[-1][-1].end < utterance_pause:
                groups[-1].append(word)
            else:
                groups.append([word])
    else:
        current: dict[str | None, int] = {}  # speaker -> index of their open group
        answered: dict[int, float] = {}  # open group -> earliest end of another's word begun in its pause
        for word in words:
            k = current.get(word.speaker)
            if k is not None and word.start - groups[k][-1].end < utterance_pause \
                    and answered.get(k, float("inf")) > word.start:
                groups[k].append(word)
            else:
                k = current[word.speaker] = len(groups)
                groups.append([word])
            answered.pop(k, None)
            for speaker, other in current.items():
                if speaker != word.speaker and word.start >= groups[other][-1].end:
                    answered[other] = min(answered.get(other, float("inf")), word.end)
    return tuple(
        Utterance(
            speaker=g[0].speaker,
            start=g[0].start,
            end=max(w.end for w in g),
            text=" ".join(w.text.strip() for w in g if w.text.strip()),
            words=tuple(g),
        )
        for g in groups
    )


def exclusive_turns(turns: Sequence[Turn]) -> tuple[Turn, ...]:
    """One speaker per instant from turns that may overlap (e.g. a human RTTM).

    Where turns overlap, the speaker who was talking first keeps the floor until their turn
    ends: a backchannel inside someone's turn does not take their words, and a speaker who
    starts before the previous one has finished takes over only when that one stops.
    Adjacent pieces of one speaker are joined. A sweep over the turn edges: O(n log n).
    """
    events = sorted([(t.start, 1, i) for i, t in enumerate(turns)] + [(t.end, 0, i) for i, t in enumerate(turns)])
    active: set[int] = set()
    pieces: list[Turn] = []
    for k, (time, is_start, i) in enumerate(events):
        (active.add if is_start else active.discard)(i)
        following = events[k + 1][0] if k + 1 < len(events) else time
        if not active or following <= time:
            continue
        owner = turns[min(active, key=lambda j: (turns[j].start, -turns[j].duration, j))].speaker
        if pieces and pieces[-1].speaker == owner and pieces[-1].end == time:
            pieces[-1] = replace(pieces[-1], end=following)
        else:
            pieces.append(Turn(time, following, owner))
    return tuple(pieces)


def speaker_order(turns: Sequence[Turn], words: Sequence[Word]) -> tuple[str, ...]:
    """Speakers by first appearance in the turns, then any only the words name."""
    return speakers_in_order([t.speaker for t in sorted(turns, key=lambda t: t.start)] + [w.speaker for w in words])
