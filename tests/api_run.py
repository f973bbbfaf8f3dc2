"""A program that uses the Python API as a user's script would (run by tests/test_api.py in
a subprocess, so that its stdout and stderr can be checked to stay empty).

    python tests/api_run.py AUDIO OUTDIR

Writes OUTDIR/<what>.json for each way in (a path, the file's bytes, its samples, two
threads sharing one Witness, diarize alone) and OUTDIR/report.json with what the hook and
the logger received.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from pathlib import Path

import witness


class Records(logging.Handler):
    """The witness logger's records, kept (a caller that asked for them)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}")


def main(audio: Path, out: Path) -> None:
    from witness.audio import load_audio

    steps: list[tuple[str, str | None]] = []

    def hook(step_name, step_artifact=None, *, file=None, total=None, completed=None):
        steps.append((step_name, file))

    with witness.Witness(num_speakers=2, hook=hook) as w:
        w.transcribe(audio).write(out / "path.json")
        w.transcribe(audio.read_bytes(), name="call.wav").write(out / "bytes.json")
        w.transcribe(load_audio(audio).samples, 16000).write(out / "array.json")
        both = [None, None]
        threads = [threading.Thread(target=lambda i=i: both.__setitem__(i, w.diarize(audio))) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        both[0].write(out / "thread0.json")
        both[1].write(out / "thread1.json")
    try:
        w.transcribe(audio)
        closed = "no error"
    except witness.UsageError as exc:
        closed = str(exc)
    witness.diarize(audio).write(out / "diarize.json")

    records = Records()
    logging.getLogger("witness").addHandler(records)
    logging.getLogger("witness").setLevel(logging.WARNING)
    loud = load_audio(audio).samples * 4  # samples outside [-1, 1]: clipped, with a warning
    witness.diarize(loud, 16000, max_speakers=1)  # two voices merged into one: a warning from the worker
    (out / "report.json").write_text(json.dumps({"steps": sorted(set(map(tuple, steps)), key=str),
                                                 "closed": closed, "log": records.lines}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
