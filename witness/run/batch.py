"""Many calls in one run: inputs found, each file's work as a unit, a resumable manifest.

``find_items`` turns the command line's files, folders and globs into ``BatchItem``s whose
outputs mirror the folders under OUTDIR. ``run_batch`` sends them through one set of
engine workers (models load once; ``witness.run.flow`` pipelines the files), writes each
file's outputs atomically as it finishes and appends one ``ManifestRow`` per file to
``OUTDIR/witness-manifest.jsonl`` (``witness.run.manifest``), so a re-run skips what is done.

The unit of work is ``BatchItem`` in, outputs and a ``ManifestRow`` out: both are frozen,
picklable and carry plain paths and strings, so a later step can hand items to another
machine with the same settings (the settings hash says which) and merge the rows it sends
back.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from witness import __version__
from witness.config import Settings
from witness.errors import InputError, WitnessError, internal_error
from witness.fileio import sha256_file
from witness.run.flow import FileJob, FileResult
from witness.run.manifest import MANIFEST_NAME, Manifest, ManifestRow
from witness.run.stop import StopSignals
from witness.writers import PageSource, output_stems, write_outputs

if TYPE_CHECKING:
    from witness.api import Witness


# What a folder is searched for (case-insensitive); files named on the command line, or
# matched by a glob, are taken as given whatever their extension.
AUDIO_EXTENSIONS = frozenset({
    ".wav", ".wave", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".spx", ".m4a", ".m4b", ".aac",
    ".mp4", ".webm", ".weba", ".mka", ".mkv", ".mov", ".wma", ".asf", ".aif", ".aiff", ".aifc",
    ".caf", ".amr", ".3gp", ".3g2", ".ac3", ".au", ".gsm", ".w64", ".wv",
})


@dataclass(frozen=True)
class BatchItem:
    """One file's work. ``input``: the path as found (it names the file in the transcript
    and in errors); ``stem``: where its outputs go, relative to OUTDIR, without extension
    (e.g. "2024-03/call-01"); ``settings_hash``: ``settings_hash()`` of the run's settings."""

    input: str
    stem: str
    settings_hash: str
    formats: tuple[str, ...]

    @property
    def outputs(self) -> tuple[str, ...]:
        """Output paths relative to OUTDIR, one per format."""
        return tuple(f"{self.stem}.{fmt}" for fmt in self.formats)


@dataclass(frozen=True)
class BatchOptions:
    force: bool = False  # redo files the manifest says are done; replace outputs it did not write
    html_audio: str = "embed"  # an html page's audio: embed or link (witness.writers.PageSource)


def settings_hash(settings: Settings, diarize: bool = True) -> str:
    """16 hex digits naming everything that shapes a transcript: the Witness version,
    ``diarize``, the settings, less those that only change how it runs ([plan], [output],
    ``models.offline``), and the enrolled voices a diarized run uses."""
    shaping = settings.to_dict()
    for section in ("plan", "output"):
        shaping.pop(section)
    shaping["models"].pop("offline")
    if diarize:  # the voices enrolled now name speakers too: enrolling one redoes the files
        from witness.voices.store import parse_use, voices_digest

        shaping["voices"]["enrolled"] = voices_digest(parse_use(settings.voices.use))
    text = json.dumps({"witness": __version__, "diarize": diarize, "settings": shaping}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- finding the inputs -----------------------------------------------------------------


def find_items(inputs: Sequence[str], formats: Sequence[str], settings_digest: str) -> list[BatchItem]:
    """Items for ``inputs`` (files, folders searched recursively for audio, globs), in
    order, each file once. Outputs mirror the folders below the inputs' common root;
    files whose names differ only in extension keep it ("call.wav.json"). InputError when
    an input does not exist or a glob matches nothing."""
    found: list[tuple[str, str]] = []  # (path as found, root it is relative to)
    for text in inputs:
        found.extend(_expand(text))
    first: dict[str, tuple[str, str]] = {}  # the same file found twice (or through a link) counts once
    for path, root in found:
        first.setdefault(os.path.realpath(path), (path, root))
    unique = list(first.values())
    if not unique:
        raise InputError("no audio files found (folders are searched for wav, flac, mp3, ogg, opus, m4a, "
                         "webm… files; name other files directly)", inputs[0] if len(inputs) == 1 else None)
    roots = [os.path.abspath(root) for _, root in unique]
    base = os.path.commonpath(roots)
    stems = output_stems([os.path.relpath(os.path.abspath(p), base) for p, _ in unique])
    return [BatchItem(p, stem, settings_digest, tuple(formats)) for (p, _), stem in zip(unique, stems)]


def _expand(text: str) -> list[tuple[str, str]]:
    """(file, root) pairs for one input: a folder's audio files (sorted, hidden ones left
    out) relative to the folder, or a file (or each glob match) relative to its folder."""
    path = Path(text)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in AUDIO_EXTENSIONS and p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        return [(str(p), text) for p in files]
    if path.exists():
        return [(text, str(path.parent))]
    if glob.has_magic(text):
        matches = sorted(glob.glob(text, recursive=True))
        if not matches:
            raise InputError("matches no files", text)
        return [pair for match in matches for pair in _expand(match)]
    raise InputError("no such file or folder", text)


# --- running ----------------------------------------------------------------------------


def run_batch(items: Sequence[BatchItem], out_dir: str | Path, engine: Witness,
              options: BatchOptions = BatchOptions(), report: Callable[[ManifestRow], None] | None = None,
              stop: StopSignals | None = None) -> tuple[ManifestRow, ...]:
    """Transcribe ``items`` into ``out_dir`` through ``engine`` (its ``run``: local workers or
    a Ray cluster, its progress hook) and return one row per item (also appended to the
    manifest and passed to ``report`` as each file finishes). Models load once, on the first
    file that needs them. Ctrl-C or SIGTERM (KeyboardInterrupt; ``stop`` says which came) or
    any error stops at once: finished files keep their outputs and rows, workers are
    killed, the exception goes on. This process writes every output and row."""
    stop = stop if stop is not None else StopSignals()
    with stop.listening(), Manifest(Path(out_dir) / MANIFEST_NAME) as manifest:
        batch = _Batch(items, Path(out_dir), manifest, options, report, stop)
        todo = batch.triage()
        with contextlib.closing(engine.run(batch.jobs(todo))) as results:
            for result in results:
                batch.finish(result)
        stop.check()
    return tuple(batch.rows)


class _Batch:
    """Per-run bookkeeping: what the manifest says is done, the files on their way through
    the engines (with their size and hash), and the rows written so far; ``stop`` holds
    Ctrl-C and SIGTERM while a file's outputs and row are written."""

    def __init__(self, items: Sequence[BatchItem], out_dir: Path, manifest: Manifest, options: BatchOptions,
                 report: Callable[[ManifestRow], None] | None, stop: StopSignals):
        self.items, self.out_dir, self.manifest, self.stop = items, out_dir, manifest, stop
        self.force, self.html_audio, self.report = options.force, options.html_audio, report
        rows = manifest.rows()  # read once: a damaged line is warned about once
        self.previous = {row.input: row for row in rows}  # the last row of each input
        self.ours = {out for row in rows if row.status == "ok" for out in row.outputs}
        self.pending: dict[str, tuple[BatchItem, ManifestRow]] = {}  # by input path, as found
        self.rows: list[ManifestRow] = []

    def triage(self) -> list[BatchItem]:
        """The items worth starting. The others fail here, before any engine work, so a
        file that fails at once is reported at once, not after the files ahead of it: not
        audio (missing, empty, no audio stream: its header is enough, ``audio.probe``), or
        outputs the batch did not write in the way."""
        todo = []
        for item in self.items:
            error = self._quick_check(item)
            if error is None:
                todo.append(item)
                continue
            row = ManifestRow(input=os.path.abspath(item.input), settings_hash=item.settings_hash, status="failed")
            with contextlib.suppress(OSError):
                row = replace(row, size=os.path.getsize(item.input), sha256=sha256_file(item.input))
            self._record(replace(row, error=error, finished=_now()))
        return todo

    def _quick_check(self, item: BatchItem) -> str | None:
        """Why ``item`` fails before it starts, or None."""
        from witness.audio import probe

        try:
            probe(item.input)
        except InputError as exc:
            return exc.message
        except Exception as exc:  # a bug or a decoder's failure: this file fails, the others go on
            return internal_error(exc, item.input).message
        foreign = [out for out in item.outputs if out not in self.ours and (self.out_dir / out).exists()]
        if foreign and not self.force:
            return (f"{self.out_dir / foreign[0]} already exists and was not written by witness batch "
                    "(pass --force to replace it)")
        return None

    def jobs(self, items: Sequence[BatchItem]) -> Iterator[FileJob]:
        """The files to transcribe; on the way, files done before are recorded as skipped,
        and files that cannot be read as failed."""
        for item in items:
            row = ManifestRow(input=os.path.abspath(item.input), settings_hash=item.settings_hash, status="failed")
            try:
                row = replace(row, size=os.path.getsize(item.input), sha256=sha256_file(item.input))
            except OSError as exc:
                self._record(replace(row, error=f"cannot read ({exc.strerror or exc})", finished=_now()))
                continue
            done = self.previous.get(row.input)
            if not self.force and done is not None and _same_work(done, row, item.outputs, self.out_dir):
                self._record(replace(done, status="skipped", wall_time=0.0, rtf=None, error=None, attempts=0,
                                     finished=_now()))
                continue
            self.pending[item.input] = (item, row)
            yield FileJob(item.input, row.sha256 or "")
            self.stop.check()  # the flow is back for the next file, having decoded this one

    def finish(self, result: FileResult) -> None:
        """Write a finished file's outputs and its row together (Ctrl-C or SIGTERM wait for both)."""
        item, row = self.pending.pop(result.path)
        row = replace(row, attempts=result.attempts, wall_time=round(result.seconds, 3), finished=_now())
        if result.error is not None:
            self.stop.check()  # an error that follows a stop signal native code swallowed is the stop
            self._record(replace(row, error=result.error.message))
            return
        duration = result.transcript.audio.duration
        row = replace(row, status="ok", outputs=item.outputs, duration=duration,
                      rtf=round(result.seconds / duration, 4) if duration else None,
                      words=len(result.transcript.words), warning=result.transcript.empty_warning)
        with self.stop.held():
            try:
                write_outputs(result.transcript, [self.out_dir / out for out in item.outputs],
                              PageSource(Path(item.input), self.html_audio))
            except WitnessError as exc:
                row = replace(row, status="failed", outputs=(), error=exc.message)
            except Exception as exc:  # a bug in a writer: this file fails, the others go on
                row = replace(row, status="failed", outputs=(), error=internal_error(exc, item.input).message)
            self._record(row)

    def _record(self, row: ManifestRow) -> None:
        with self.stop.held():
            self.manifest.append(row)
            self.rows.append(row)
            if self.report is not None:
                self.report(row)


def _same_work(done: ManifestRow, row: ManifestRow, outputs: tuple[str, ...], out_dir: Path) -> bool:
    """Whether ``done`` (the input's last row) already holds ``outputs`` for this content
    and these settings, with every output still there."""
    return (done.status in ("ok", "skipped") and done.sha256 == row.sha256
            and done.settings_hash == row.settings_hash and set(outputs) <= set(done.outputs)
            and all((out_dir / out).exists() for out in outputs))


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True)
class BatchSummary:
    """What a batch did: counts by status, audio transcribed (ok files), wall time of the
    run, its real-time factor (wall / audio) and the failures (input, error)."""

    ok: int
    failed: int
    skipped: int
    audio_seconds: float
    wall_time: float
    failures: tuple[tuple[str, str], ...]

    @property
    def rtf(self) -> float | None:
        return self.wall_time / self.audio_seconds if self.audio_seconds else None


def summarize(rows: Sequence[ManifestRow], wall_time: float) -> BatchSummary:
    count = Counter(row.status for row in rows)
    return BatchSummary(
        ok=count["ok"], failed=count["failed"], skipped=count["skipped"],
        audio_seconds=sum(row.duration or 0.0 for row in rows if row.status == "ok"),
        wall_time=wall_time,
        failures=tuple((row.input, row.error or "") for row in rows if row.status == "failed"),
    )
