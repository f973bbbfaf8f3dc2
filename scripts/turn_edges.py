#!/usr/bin/env python3
"""Short turns, backchannels and turn edges (issue 22): where the merge gives such a word the
wrong speaker, could segmentation-3.0's frame-level activity, or the overlap in our turns, have
named the right one? And do three rules built on them lower WDER (each digit a word)?

Per call it needs ``measure_merge.py``'s cache (words, turns, centroids; merged again here with
the default options, second opinion included) and a frame cache it builds itself beside it
(``--frames``: per call, each window's local speaker activity and the first clustering's global
speaker per local speaker, ``NAME.frames.npz``; about 30 s a call on 2 loaded cores).

Words are put in ``attribution_errors``' classes (short = a corpus backchannel or rapid one-word
turn, overlap, edge = within 0.5 s of a reference change of speaker, other; words Whisper timed
more than 1 s off, or on a speaker found twice or never, are left out). Per class and group:

- ``2 voices``: of the wrong words, how many most windows covering the word (+-0.5 s) hear two
  local speakers at all (no mapping needed: if one local speaker holds the whole stretch, no
  frame-level rule can split it);
- ``frames right``: the global speaker with the most frame activity inside the word, its clusters
  mapped to the reference speakers by shared frames (an oracle mapping: the best case);
- ``ref over``: the word's reference utterance overlaps the other speaker's speech.

Rules, each applied alone after today's merge and scored (WDER, each digit a word):
(a) ``frames``: a word moves to the speaker whose frame activity inside it beats its own by a
margin (clusters mapped to our speakers by our turns), for all words / brief words (up to 0.4 s) / words
within 0.5 s of one of our turn changes; (b) ``overlap``: a word where our turns hold two
speakers goes to the one whose turn there is shorter (all / in a sentence of at most 3 words);
(c) ``wordless``: a turn of at least 0.2 s in which no word was given its speaker takes the word
it overlaps most.

    python scripts/measure_merge.py --calls DIR --cache CACHE
    python scripts/turn_edges.py --calls DIR --cache CACHE [--frames FRAMES] [--only a,b]

Measured on corpus v2 tune (16 two-speaker and 9 three-to-four-speaker calls; today's merge,
second opinion included; WDER each digit a word), words the merge has wrong / right:

    class (2 speakers)   wrong  2 voices  frames right  ref over |  right  2 voices  frames right
    short                   84        30            35        17 |     85        23            48
    overlap                 26        21            13        26 |    157       114           114
    edge                    48        14            25        34 |   1157       417           944

So for most wrong short and edge words segmentation-3.0 hears one voice around the word (a
rapid "good" / "no" / "good" is one local speaker in every window), and the reference
backchannels seldom overlap the other speaker (17 of 84). Every rule raised WDER:

    rule (2 / 3-4 speakers)   tune            dev + sample
    today                     4.99 / 7.28%    0.45 / 2.20%
    (a) frames, all, 0.9      6.70 / 8.01%    0.45 / 8.29%
    (a) frames, brief, 0.9    6.46 / 8.01%    0.45 / 6.34%
    (a) frames, edge, 0.9     5.34 / 7.35%    0.45 / 3.41%   (margins 0.5 and 0.7: worse still)
    (b) overlap, all          6.90 / 8.29%    0.89 / 2.44%
    (b) overlap, standalone   5.02 / 7.28%    0.45 / 2.20%
    (c) wordless turn         5.96 / 7.94%    0.89 / 2.44%

The check part, read once afterwards (nothing chosen on it), agrees: today 4.64 / 21.97%; (a)
frames at the edges 4.61 / 22.59% at 0.9, elsewhere 5.63-6.66 / 25.5-27.9%; (b) 6.70 / 24.07%
(all) and 4.64 / 22.00% (standalone); (c) 4.84 / 22.76%.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.attribution_errors import (  # noqa: E402
    Tally, group, merged_labels, options_from, reference, score, word_causes)
from witness.audio import load_audio  # noqa: E402
from witness.diarize.aggregate import cluster_activations  # noqa: E402
from witness.diarize.windows import Segmentations, SlidingWindow  # noqa: E402
from witness.merge import _assign, sentences  # noqa: E402
from witness.transcript import Turn, Word  # noqa: E402

CLASSES = {"short": "short", "overlap": "overlap", "edge": "edge", "straddle": "other", "mid-turn": "other"}
HEARD = 0.5  # s either side of a word where the windows are asked whether they hear two voices


def build_frames(calls: list[Path], folder: Path) -> None:
    """NAME.frames.npz in ``folder`` for each call without one: segmentation activity (windows,
    frames, 3) float16, the first clustering's hard clusters (windows, 3), window and frame timing."""
    todo = [c for c in calls if not (folder / f"{c.stem}.frames.npz").exists()]
    if not todo:
        return
    from witness.config import load_settings
    from witness.diarize.clustering import cluster
    from witness.diarize.pipeline import Diarizer
    from witness.run.orchestrate import Orchestrator

    job = Orchestrator(load_settings()).engine_jobs().diarization
    diarizer = Diarizer(job.models, job.config, job.runtime, job.ge2e_variant)
    folder.mkdir(parents=True, exist_ok=True)
    for call in todo:
        windows = diarizer.embed_windows(load_audio(call).samples)
        hard = cluster(windows.embeddings, windows.segmentations, diarizer.config.clustering, job.bounds).hard
        s = windows.segmentations
        np.savez_compressed(folder / f"{call.stem}.frames.npz", data=s.data.astype(np.float16), hard=hard,
                            window=np.array([s.window.start, s.window.duration, s.window.step]),
                            frame=np.array([s.frame_step, s.frame_duration]))
        print(f"frames: {call.stem}", file=sys.stderr, flush=True)


class Frames:
    """One call's frame cache: ``share`` (frames, clusters) is the share of the windows covering
    each frame in which each global speaker of the first clustering is active."""

    def __init__(self, path: Path):
        z = np.load(path)
        self.data = z["data"].astype(np.float32)
        window, frame = SlidingWindow(*map(float, z["window"])), z["frame"]
        segmentations = Segmentations(self.data, window, float(frame[0]), float(frame[1]))
        hard = z["hard"]
        active = cluster_activations(segmentations, hard, int(hard.max(initial=-1)) + 1)
        ones = Segmentations(np.ones(self.data.shape[:2] + (1,), np.float32), window, float(frame[0]), float(frame[1]))
        covered = cluster_activations(ones, np.zeros((len(self.data), 1), int), 1)[:, 0]
        self.share = active / np.maximum(covered, 1)[:, None]
        grid = segmentations.frames
        self.middles = grid.start + grid.step * np.arange(len(self.share)) + grid.duration / 2
        self.window, self.frame_step = window, float(frame[0])

    def span(self, start: float, end: float) -> slice:
        first = int(np.searchsorted(self.middles, start))
        return slice(first, max(first + 1, int(np.searchsorted(self.middles, end))))

    def mapping(self, turns: list[Turn]) -> dict[int, str]:
        """Each cluster -> the speaker of ``turns`` sharing most of its active frames."""
        names = sorted({t.speaker for t in turns})
        held = np.zeros((len(self.middles), len(names)), bool)
        for t in turns:
            held[self.span(t.start, t.end), names.index(t.speaker)] = True
        shared = (self.share[:, :, None] >= 0.5).astype(np.int64).transpose(1, 0, 2) * held[None]
        return {k: names[int(shared[k].sum(axis=0).argmax())] for k in range(self.share.shape[1])}

    def activity(self, word: Word, mapping: dict[int, str]) -> dict[str, float]:
        """Speaker -> mean share of the word's frames (the most active of its clusters)."""
        inside = self.share[self.span(word.start, word.end)].mean(axis=0)
        out: dict[str, float] = {}
        for k, speaker in mapping.items():
            out[speaker] = max(out.get(speaker, 0.0), float(inside[k]))
        return out

    def two_voices(self, word: Word) -> bool:
        """Whether most windows covering the word (+-``HEARD`` s) hear two local speakers there."""
        start, end, votes = word.start - HEARD, word.end + HEARD, []
        for c in range(len(self.data)):
            first = self.window.start + c * self.window.step
            if first <= start and end <= first + self.window.duration:
                rows = self.data[c, int((start - first) / self.frame_step):int((end - first) / self.frame_step) + 1]
                votes.append((rows > 0.5).any(axis=0).sum() >= 2)
        return bool(votes) and float(np.mean(votes)) >= 0.5


def by_frames(words, labels, frames: Frames, turns, margin: float, gate: str, changes: list[float]) -> list:
    """Rule (a): a word passing ``gate`` moves to the speaker whose frame activity beats its own by ``margin``."""
    mapping, out = frames.mapping(list(turns)), list(labels)
    for i, word in enumerate(words):
        if (gate == "brief" and word.duration > 0.4) or \
                (gate == "edge" and not any(word.start - 0.5 <= c <= word.end + 0.5 for c in changes)):
            continue
        heard = frames.activity(word, mapping)
        best = max(heard, key=heard.get)
        if out[i] is not None and best != out[i] and heard[best] - heard.get(out[i], 0.0) >= margin:
            out[i] = best
    return out


def by_overlap(words, labels, turns, standalone: bool) -> list:
    """Rule (b): where our turns hold two speakers, a word goes to the one whose turn is shorter."""
    size = {i: len(span) for span in sentences(words, 1.0) for i in span}
    out = list(labels)
    for i, word in enumerate(words):
        middle = (word.start + word.end) / 2
        here = [t for t in turns if t.start <= middle <= t.end]
        if len({t.speaker for t in here}) < 2 or (standalone and size[i] > 3):
            continue
        out[i] = min(here, key=lambda t: t.duration).speaker
    return out


def by_wordless(words, labels, exclusive) -> list:
    """Rule (c): a turn (>= 0.2 s) holding no word of its speaker takes the word it overlaps most."""
    out = list(labels)
    for turn in exclusive:
        shared = {i: min(w.end, turn.end) - max(w.start, turn.start) for i, w in enumerate(words)
                  if w.end > turn.start and w.start < turn.end}
        if turn.duration >= 0.2 and shared and all(labels[i] != turn.speaker for i in shared):
            out[max(shared, key=shared.get)] = turn.speaker
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Path, required=True, help="corpus folder (NAME.wav, .stm, .rttm, .json)")
    parser.add_argument("--cache", type=Path, required=True, help="measure_merge.py's cache for those calls")
    parser.add_argument("--frames", type=Path, help="frame cache (default: CACHE/frames)")
    parser.add_argument("--only", help="comma-separated call names")
    parser.add_argument("--set", action="append", default=[], help="merge option NAME=VALUE (repeatable)")
    args = parser.parse_args()
    options = options_from(args.set)
    only = set(args.only.split(",")) if args.only else None
    calls = [args.calls / f"{c.stem}.wav" for c in sorted(args.cache.glob("*.json"))
             if (only is None or c.stem in only) and (args.calls / f"{c.stem}.wav").exists()]
    folder = args.frames or args.cache / "frames"
    build_frames(calls, folder)
    from witness.diarize.embedding import CamPlusPlusEmbedder
    from witness.models.diarization_choice import choose_models
    from witness.opinion import OPINION_MIN_SECONDS

    embedder = CamPlusPlusEmbedder(choose_models(opinion=options.opinion_precision).opinion,
                                   min_clean_seconds=OPINION_MIN_SECONDS)
    seen: Counter = Counter()
    rules: dict[str, dict[str, Tally]] = defaultdict(lambda: defaultdict(Tally))
    for call in calls:
        cached = args.cache / f"{call.stem}.json"
        transcript, words, labels, _ = merged_labels(cached, call, options, embedder, None)
        exclusive = sorted(transcript.exclusive_turns, key=lambda t: (t.start, t.end))
        plain, heard = _assign(words, exclusive, options.gap_tolerance)
        ref, segments, kinds, ref_turns = reference(call)
        g = group(len({s.speaker for s in segments}))
        frames = Frames(folder / f"{call.stem}.frames.npz")
        _tally_classes(seen, g, word_causes(ref, segments, kinds, ref_turns, words, labels, heard)[0], words,
                       segments, kinds, ref_turns, frames)
        variants = _variants(words, labels, transcript.turns, exclusive, frames)
        for name, variant in variants.items():
            rules[name][g].add(score(ref, segments, kinds, ref_turns, words, variant, plain, heard)[0])
        print(f"{call.stem} done", file=sys.stderr, flush=True)
    _report(seen, rules)


def _tally_classes(seen: Counter, g: str, causes, words, segments, kinds, ref_turns, frames: Frames) -> None:
    """Adds one call's words to ``seen``: (group, class, rightly attributed, measure) -> words."""
    to_ref = frames.mapping(list(ref_turns))
    for r, h, cause in causes:
        word, said = words[h[2]], segments[r[2]]
        cls = CLASSES.get(cause) if cause is not None else _class_of_right(word, segments, kinds[r[2]], ref_turns)
        if cls is None:
            continue
        heard_by = frames.activity(word, to_ref)
        key = (g, cls, cause is None)
        seen[key + ("words",)] += 1
        seen[key + ("2 voices",)] += frames.two_voices(word)
        seen[key + ("frames right",)] += max(heard_by, key=heard_by.get) == r[1]
        seen[key + ("ref over",)] += any(u.speaker != said.speaker and u.start < said.end and u.end > said.start
                                         for u in segments)


def _variants(words, labels, turns, exclusive, frames: Frames) -> dict[str, list]:
    """Today's labels and each rule's, by name."""
    changes = [b.start for a, b in zip(exclusive, exclusive[1:]) if a.speaker != b.speaker]
    variants = {"today": labels, "(b) overlap, all": by_overlap(words, labels, turns, False),
                "(b) overlap, standalone": by_overlap(words, labels, turns, True),
                "(c) wordless turn": by_wordless(words, labels, exclusive)}
    for gate in ("all", "brief", "edge"):
        for margin in (0.5, 0.7, 0.9):
            variants[f"(a) frames {gate} {margin}"] = by_frames(words, labels, frames, turns, margin, gate, changes)
    return variants


def _class_of_right(word: Word, segments, kind: str, ref_turns) -> str:
    """A rightly attributed word's class, as ``word_causes`` would name it were it wrong."""
    middle = (word.start + word.end) / 2
    changes = [t for a, b in zip(segments, segments[1:]) if a.speaker != b.speaker for t in (a.end, b.start)]
    if kind in ("backchannel", "rapid"):
        return "short"
    if len({t.speaker for t in ref_turns if t.start <= middle <= t.end}) > 1:
        return "overlap"
    if any(word.start - 0.5 <= c <= word.end + 0.5 for c in changes):
        return "edge"
    return "other"


def _report(seen: Counter, rules: dict[str, dict[str, Tally]]) -> None:
    groups = sorted({k[0] for k in seen})
    print(f"{'group, class':24s} {'wrong':>6s} {'2 voices':>9s} {'frames right':>13s} {'ref over':>9s}   "
          f"{'right':>6s} {'2 voices':>9s} {'frames right':>13s}")
    for g in groups:
        for cls in ("short", "overlap", "edge", "other"):
            w = [seen[(g, cls, False, m)] for m in ("words", "2 voices", "frames right", "ref over")]
            r = [seen[(g, cls, True, m)] for m in ("words", "2 voices", "frames right")]
            print(f"{g + ', ' + cls:24s} {w[0]:6d} {w[1]:9d} {w[2]:13d} {w[3]:9d}   {r[0]:6d} {r[1]:9d} {r[2]:13d}")
    print(f"\n{'rule':28s} " + " ".join(f"{g:>22s}" for g in groups))
    for name, tallies in rules.items():
        print(f"{name:28s} " + " ".join(
            f"{100 * tallies[g].wrong / max(1, tallies[g].aligned):6.2f}% ({tallies[g].wrong:4d}/{tallies[g].aligned:5d})"
            for g in groups))


if __name__ == "__main__":
    main()
