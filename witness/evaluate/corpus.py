"""DER over several recordings: RTTM files or folders, UEM files, pairing by file id.

Pairing rule: every recording of the reference is scored. A reference recording with no
hypothesis turns is scored against an empty hypothesis (all its speech missed) and listed
in ``missing_hypotheses``; hypothesis recordings absent from the reference are not scored
and are listed in ``unmatched_hypotheses``. When each side holds exactly one recording
they are paired whatever their ids (the reference id names the pair).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from witness.errors import InputError
from witness.fileio import read_input_text, records
from witness.evaluate.der import DerResult, combine, diarization_error
from witness.evaluate.regions import Interval
from witness.rttm import read_rttm
from witness.transcript import Turn


@dataclass(frozen=True)
class FilePairs:
    """Reference and hypothesis turns per scored recording (file id → (reference, hypothesis))."""

    pairs: Mapping[str, tuple[tuple[Turn, ...], tuple[Turn, ...]]]
    missing_hypotheses: tuple[str, ...] = ()
    unmatched_hypotheses: tuple[str, ...] = ()


@dataclass(frozen=True)
class DerReport:
    """DER per recording (in file-id order) and over all of them (parts summed)."""

    files: Mapping[str, DerResult]
    total: DerResult


def read_rttm_set(path: str | Path) -> dict[str, list[Turn]]:
    """Turns per file id from an RTTM file, or from every ``*.rttm`` in a folder.

    InputError when the path is missing, a folder holds no RTTM, or two files of a folder
    hold the same recording.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.rttm"))
        if not files:
            raise InputError("folder holds no .rttm file", path)
    elif path.exists():
        files = [path]
    else:
        raise InputError("no such file or folder", path)
    merged: dict[str, list[Turn]] = {}
    seen_in: dict[str, Path] = {}
    for file in files:
        for file_id, turns in read_rttm(file).items():
            if file_id in merged:
                raise InputError(f"recording {file_id!r} is also in {seen_in[file_id]}", file)
            merged[file_id], seen_in[file_id] = turns, file
    return merged


def read_uem(path: str | Path) -> dict[str, list[Interval]]:
    """Scored regions per file id from a UEM file (``<file-id> <channel> <start> <end>`` lines)."""
    text = read_input_text(path, "UEM")
    regions: dict[str, list[Interval]] = {}
    for number, fields in records(text):
        if len(fields) != 4:
            raise InputError(f"line {number}: a UEM line has 4 fields (file channel start end), found {len(fields)}", path)
        try:
            start, end = float(fields[2]), float(fields[3])
        except ValueError:
            raise InputError(f"line {number}: start and end must be numbers, found {fields[2]!r} {fields[3]!r}", path) from None
        if not (0 <= start <= end):
            raise InputError(f"line {number}: times must satisfy 0 <= start <= end, found {fields[2]} {fields[3]}", path)
        regions.setdefault(fields[0], []).append((start, end))
    return regions


def pair_files(reference: Mapping[str, Sequence[Turn]], hypothesis: Mapping[str, Sequence[Turn]]) -> FilePairs:
    """Pair recordings by file id (see the module docstring for the rule)."""
    if len(reference) == 1 and len(hypothesis) == 1:
        (ref_id, ref_turns), (hyp_turns,) = next(iter(reference.items())), hypothesis.values()
        return FilePairs({ref_id: (tuple(ref_turns), tuple(hyp_turns))})
    pairs = {fid: (tuple(turns), tuple(hypothesis.get(fid, ()))) for fid, turns in reference.items()}
    return FilePairs(
        pairs=pairs,
        missing_hypotheses=tuple(fid for fid in reference if fid not in hypothesis),
        unmatched_hypotheses=tuple(fid for fid in hypothesis if fid not in reference),
    )


def score_files(
    files: FilePairs,
    collar: float = 0.0,
    skip_overlap: bool = False,
    uem: Mapping[str, Sequence[Interval]] | None = None,
) -> DerReport:
    """DER per recording and in total. With a ``uem``, every scored recording must have
    regions in it (InputError otherwise)."""
    if uem is not None:
        require_uem_regions(uem, files.pairs)
    results = {
        fid: diarization_error(ref, hyp, collar, skip_overlap, None if uem is None else uem[fid])
        for fid, (ref, hyp) in files.pairs.items()
    }
    return DerReport(files=results, total=combine(list(results.values())))


def require_uem_regions(uem: Mapping[str, Sequence[Interval]], file_ids: Iterable[str], source: str | Path | None = None) -> None:
    """InputError (naming ``source``, the UEM file) when a recording to score has no UEM regions."""
    lacking = [fid for fid in file_ids if fid not in uem]
    if lacking:
        raise InputError(f"the UEM has no regions for recording {lacking[0]!r}", source)
