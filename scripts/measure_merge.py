#!/usr/bin/env python3
"""Which merge steps help? WDER per call for each step of ``witness.merge`` on its own, and
what the second opinion costs.

Each call runs once through witness (in this process's orchestrator, default settings); its
words, turns and the diarization's centroids are kept in a cache folder, then merged again
with each variant: today's merge (assignment + boundary repair), + interjections, + second
opinion, both. WDER is given with digit runs joined and with each digit a word. The second
opinion's seconds (CAM++ on the CPU, one thread, model load excluded) are given beside the
diarization's seconds for the same call, both measured in this process (``--cost``: the
diarization runs again here, with the plan's threads, so that the two share the machine's load).

    python scripts/measure_merge.py                    # sample call + devcall_01..04
    python scripts/measure_merge.py --calls DIR        # every DIR/*.wav with an .stm beside it
    python scripts/measure_merge.py --cache DIR        # keep (and reuse) the runs in DIR
    python scripts/measure_merge.py --cost             # and time a diarization beside the opinion
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.end_to_end import CALLS  # noqa: E402
from witness.audio import load_audio  # noqa: E402
from witness.config import load_settings  # noqa: E402
from witness.diarize.embedding import CamPlusPlusEmbedder  # noqa: E402
from witness.evaluate.stm import read_stm  # noqa: E402
from witness.evaluate.wder import score_words  # noqa: E402
from witness.evaluate.words import words_from_stm, words_from_transcript  # noqa: E402
from witness.run.flow import FileJob  # noqa: E402
from witness.merge import MergeOptions, merge  # noqa: E402
from witness.models.diarization_choice import choose_models  # noqa: E402
from witness.opinion import OPINION_MIN_SECONDS, CentroidVoices  # noqa: E402
from witness.run.orchestrate import run  # noqa: E402
from witness.transcript import Transcript, read_transcript  # noqa: E402

BEFORE = MergeOptions(interjections=False, second_opinion=False)
VARIANTS = {  # name: (options, whether the second opinion is asked)
    "today": (BEFORE, False),
    "+interjections": (replace(BEFORE, interjections=True), False),
    "+second opinion": (replace(BEFORE, second_opinion=True), True),
    "both (default)": (MergeOptions(), True),
}


def runs(calls: list[Path], cache: Path) -> None:
    """Run witness on the calls not yet in ``cache``: NAME.json and NAME.npz (centroids)."""
    todo = [c for c in calls if not (cache / f"{c.stem}.npz").exists()]
    settings = load_settings()
    settings = replace(settings, merge=BEFORE)
    for result in run([FileJob(str(c)) for c in todo], settings):
        if result.error is not None:
            raise SystemExit(f"{result.path}: {result.error}")
        stem = Path(result.path).stem
        (cache / f"{stem}.json").write_text(result.transcript.to_json())
        np.savez(cache / f"{stem}.npz", **{k: np.asarray(v) for k, v in result.transcript.speaker_embeddings.items()})


def diarization_timer():
    """``samples -> seconds`` of one diarization with the default settings' models and threads."""
    from witness.diarize.pipeline import Diarizer
    from witness.run.orchestrate import Orchestrator

    job = Orchestrator(load_settings()).engine_jobs().diarization
    diarizer = Diarizer(job.models, job.config, job.runtime, job.ge2e_variant)
    diarizer.open_sessions()

    def seconds(samples: np.ndarray) -> float:
        start = time.perf_counter()
        diarizer.run(samples, job.bounds)
        return time.perf_counter() - start

    return seconds


def _group(speakers: int) -> str:
    return "2 speakers" if speakers <= 2 else "3-4 speakers" if speakers <= 4 else "5+ speakers"


def wder(transcript: Transcript, stm: Path, utterances) -> tuple[float, float]:
    reference = words_from_stm(read_stm(stm))
    hypothesis = words_from_transcript(replace(transcript, utterances=utterances))
    return score_words(reference, hypothesis)[1].wder, score_words(reference, hypothesis, digits="each")[1].wder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Path, help="every .wav in this folder with an .stm beside it")
    parser.add_argument("--cache", type=Path, help="folder for the runs (default: a temporary one)")
    parser.add_argument("--cost", action="store_true", help="diarize each call again here, for the time ratio")
    args = parser.parse_args()
    calls = sorted(w for w in args.calls.glob("*.wav") if w.with_suffix(".stm").exists()) if args.calls else CALLS
    cache = args.cache or Path(tempfile.mkdtemp(prefix="witness-merge-"))
    cache.mkdir(parents=True, exist_ok=True)
    runs(calls, cache)
    model = choose_models(opinion=MergeOptions().opinion_precision).opinion
    embedder = CamPlusPlusEmbedder(model, min_clean_seconds=OPINION_MIN_SECONDS)
    embedder.embed(np.full((1, 16000), 0.01, dtype=np.float32))  # the session loads here, not in a timing
    diarize = diarization_timer() if args.cost else None
    print(f"{'call':14s} " + " ".join(f"{name:>17s}" for name in VARIANTS) + "   opinion s / diarization s")
    groups: dict[str, dict[str, list]] = {}  # "2 speakers" / "3-4 speakers" / "5+ speakers" -> variant -> rows
    for call in calls:
        transcript = read_transcript(cache / f"{call.stem}.json")
        words = [replace(w, speaker=None) for w in transcript.words]
        samples = load_audio(call).samples
        voices = CentroidVoices(samples, embedder.embed, dict(np.load(cache / f"{call.stem}.npz")))
        cells, seconds = [], 0.0
        group = _group(len({s.speaker for s in read_stm(call.with_suffix(".stm"))}))
        for name, (options, ask) in VARIANTS.items():
            start = time.perf_counter()
            merged = merge(words, transcript.exclusive_turns, options, voices if ask else None)
            seconds = time.perf_counter() - start if ask else seconds
            joined, each = wder(transcript, call.with_suffix(".stm"), merged.utterances)
            groups.setdefault(group, {n: [] for n in VARIANTS})[name].append((joined, each))
            cells.append(f"{100 * joined:7.2f}/{100 * each:6.2f}%")
        print(f"{call.stem:14s} " + " ".join(f"{c:>17s}" for c in cells)
              + (f"   {seconds:.2f} / {diarize(samples):.2f}" if diarize else f"   {seconds:.2f} / -"))
    for group, totals in sorted(groups.items()):
        print(f"{'mean ' + group:14s} " + " ".join(
            f"{100 * np.mean([j for j, _ in v]):7.2f}/{100 * np.mean([e for _, e in v]):6.2f}%" for v in totals.values())
            + f"   ({len(next(iter(totals.values())))} calls)")
    print("(WDER: digit runs joined / each digit a word)")


if __name__ == "__main__":
    main()
