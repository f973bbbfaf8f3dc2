#!/usr/bin/env python3
"""Where a long call's time goes outside the engines' models: decoding into shared memory,
Silero VAD (read in lanes and in one go), the merge (its second opinion embeds pieces of the
words with CAM++ in the parent) and the writers, wall and CPU seconds, in this one process.

    python scripts/outside_engines.py ~/.cache/witness/corpus/v1/check/check_long.wav

Both engines run once on FILE (as their workers would) and their results are kept in
``--cache`` (default /tmp/witness-outside-engines), so later runs time only the rest. The
merge runs ``--repeats`` times, with numpy's BLAS pool at one thread as Witness runs it
and left at its default (as before), interleaved; the transcripts must be equal.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import resource
import sys
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from witness.audio import load_audio  # noqa: E402
from witness.config import load_settings  # noqa: E402
from witness.run.engines import FACTORIES  # noqa: E402
from witness.run.orchestrate import Orchestrator, decode_shared  # noqa: E402


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def timed(name: str):
    wall, used = time.perf_counter(), cpu()
    yield
    print(f"{name:28s} wall {time.perf_counter() - wall:7.2f} s   cpu {cpu() - used:7.2f} s", flush=True)


def engine_results(orchestrator: Orchestrator, path: Path, cache: Path):
    key = hashlib.sha256(f"{path.resolve()}:{path.stat().st_mtime_ns}".encode()).hexdigest()[:16]
    saved = cache / f"{path.stem}-{key}.pkl"
    if saved.is_file():
        return pickle.loads(saved.read_bytes())
    jobs = orchestrator.engine_jobs().by_name()
    meta, audio = decode_shared(str(path))
    try:
        results = {}
        for name in orchestrator.names:
            with timed(f"{name} (load and run, once)"):
                results[name] = FACTORIES[name](jobs[name])(audio, None)
    finally:
        audio.unlink()
    cache.mkdir(parents=True, exist_ok=True)
    saved.write_bytes(pickle.dumps((meta, results)))
    return meta, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/witness-outside-engines"))
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    orchestrator = Orchestrator(load_settings())
    meta, results = engine_results(orchestrator, args.file, args.cache)
    with timed("decode (shared memory)"):
        _, audio = decode_shared(str(args.file))
    try:
        from witness.models.whisper_models import resolve_vad
        from witness.vad import SileroVad

        vad, samples = SileroVad(resolve_vad()), load_audio(args.file).samples
        vad.probabilities(samples[:16000])  # the session is made
        for lanes in (1, 4):
            with timed(f"vad, lanes={lanes}"):
                vad.probabilities(samples, lanes=lanes)
        texts = {}
        for _ in range(args.repeats):
            for pool in ("one BLAS thread", "default BLAS pool"):
                limit = mock.patch("witness.run.orchestrate.blas_threads", lambda n: nullcontext()) \
                    if pool == "default BLAS pool" else nullcontext()
                with limit, timed(f"merge, {pool}"):
                    transcript = orchestrator.transcript(meta, results, {"decode": 0.0, "engines": 0.0}, audio)
                texts.setdefault(pool, transcript.to_dict()["utterances"])
        print("same transcript either way:", len({repr(t) for t in texts.values()}) == 1)
        from witness.writers import WRITERS, render

        for fmt in WRITERS:
            with timed(f"writer {fmt}"):
                render(fmt, transcript)
    finally:
        audio.unlink()


if __name__ == "__main__":
    main()
