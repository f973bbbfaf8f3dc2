"""The batch manifest: ``OUTDIR/witness-manifest.jsonl``, one JSON object per line.

A row is appended (one write, then fsync) each time a file of a batch is done, skipped or
has failed, so the file is a log of every run into OUTDIR and the last row for an input is
its state. A line cut short by a crash is ignored with a warning, and the next row starts
on a fresh line. One batch at a time writes to a manifest (a lock file beside it).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from witness.errors import UsageError

log = logging.getLogger(__name__)

MANIFEST_NAME = "witness-manifest.jsonl"
STATUSES = ("ok", "failed", "skipped")


@dataclass(frozen=True)
class ManifestRow:
    """What happened to one input in one run (the README's "Manifest" lists the fields).

    ``outputs`` are relative to OUTDIR; ``duration`` is audio seconds; ``wall_time`` the
    seconds this file was worked on (decoding, then its engines; pipelined files overlap);
    ``rtf`` is wall_time / duration; ``attempts`` counts runs of its most-tried engine (2
    after a worker died and it was retried; 0 when it never reached an engine).
    """

    input: str  # absolute path
    settings_hash: str
    status: str  # "ok", "failed" or "skipped"
    size: int | None = None  # bytes; None when the file could not be read
    sha256: str | None = None
    outputs: tuple[str, ...] = ()
    duration: float | None = None
    wall_time: float = 0.0
    rtf: float | None = None
    error: str | None = None  # the problem, one line (the file is ``input``)
    attempts: int = 0
    finished: str = ""  # UTC, ISO 8601
    words: int | None = None  # words in the transcript (ok rows)
    warning: str | None = None  # e.g. no speech found: an ``ok`` file a user should look at

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "outputs": list(self.outputs)}, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ManifestRow":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["outputs"] = tuple(values.get("outputs") or ())
        row = cls(**values)
        if row.status not in STATUSES:
            raise ValueError(f"unknown status {row.status!r}")
        return row


class Manifest:
    """The manifest file of one OUTDIR, held (locked) for one batch: ``with Manifest(path)``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = None

    def __enter__(self) -> "Manifest":
        from filelock import FileLock, Timeout

        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.path.with_name(f".{self.path.name}.lock")))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise UsageError("another witness batch is writing to this folder; wait for it to finish",
                               self.path.parent) from None
        self._lock = lock
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def rows(self) -> list[ManifestRow]:
        """Every complete row, oldest first (unreadable lines are skipped with a warning)."""
        if not self.path.exists():
            return []
        rows = []
        with open(self.path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    rows.append(ManifestRow.from_dict(json.loads(line)))
                except (ValueError, TypeError) as exc:
                    log.warning("%s: line %d ignored (%s)", self.path, number, exc)
        return rows

    def latest(self) -> dict[str, ManifestRow]:
        """The last row of each input."""
        return {row.input: row for row in self.rows()}

    def append(self, row: ManifestRow) -> None:
        """Add ``row`` as one line, on disk before this returns."""
        data = (row.to_json() + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            if _ends_mid_line(fd):
                data = b"\n" + data
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)


def _ends_mid_line(fd: int) -> bool:
    """Whether the file's last byte is not a newline (a line cut short by a crash)."""
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
