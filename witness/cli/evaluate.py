"""``witness eval der|wer``: score diarization (DER) and transcripts (WER, WDER)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from witness.evaluate.conventions import CONVENTIONS
from witness.errors import InputError

# Scoring pulls in numpy and scipy: imported inside the commands, so `witness --help` stays quick.
if TYPE_CHECKING:
    from witness.evaluate.corpus import DerReport, FilePairs
    from witness.evaluate.wder import WderResult
    from witness.evaluate.wer import WerResult


@click.group("eval")
def evaluate() -> None:
    """Score witness output against a reference: DER for speaker turns, WER and WDER for words."""


@evaluate.command("der")
@click.argument("reference", type=click.Path(path_type=Path))
@click.argument("hypothesis", type=click.Path(path_type=Path))
@click.option(
    "--convention", type=click.Choice([*CONVENTIONS, "all"]), default="all", show_default=True,
    help="strict: no collar, overlap scored; paper: ±0.25 s collar; lenient: ±0.25 s collar, "
    "overlap skipped; all: the three. E.g. --convention paper.",
)
@click.option("--uem", type=click.Path(path_type=Path), metavar="FILE", help="Score only these regions (lines: file channel start end), e.g. --uem dev.uem.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON (parts in seconds), e.g. --json | jq .conventions.paper.total.")
def der(reference: Path, hypothesis: Path, convention: str, uem: Path | None, as_json: bool) -> None:
    """Diarization error rate of HYPOTHESIS turns against REFERENCE turns.

    REFERENCE and HYPOTHESIS are RTTM files or folders of them; recordings pair by file
    id (two single-recording files pair whatever their ids). A reference recording with
    no hypothesis counts as all missed. DER = (missed + false alarm + confusion) / reference
    speech, after the optimal one-to-one speaker mapping; over several recordings the parts
    are summed (ALL row). The collar is ± seconds around each reference boundary (md-eval).

    \b
    Examples:
      witness eval der ref.rttm out/call.rttm
      witness eval der refs/ out/ --convention paper
      witness eval der refs/ out/ --uem dev.uem --json
    """
    from witness.evaluate.corpus import pair_files, read_rttm_set, read_uem, require_uem_regions, score_files

    references = read_rttm_set(reference)
    if not references:
        raise InputError("holds no SPEAKER lines", reference)
    files = pair_files(references, read_rttm_set(hypothesis))
    regions = None if uem is None else read_uem(uem)
    if regions is not None:
        require_uem_regions(regions, files.pairs, uem)
    names = list(CONVENTIONS) if convention == "all" else [convention]
    reports = {name: score_files(files, *CONVENTIONS[name], uem=regions) for name in names}
    for fid in files.missing_hypotheses:
        click.echo(f"witness: {hypothesis}: no turns for recording {fid!r}: scored as all missed", err=True)
    for fid in files.unmatched_hypotheses:
        click.echo(f"witness: {hypothesis}: recording {fid!r} is not in the reference: not scored", err=True)
    click.echo(_der_json(reports, files) if as_json else _der_table(reports), nl=False)


def _der_table(reports: dict[str, DerReport]) -> str:
    """One row per convention and recording (and ALL when several), percentages of reference speech."""
    rows = [("convention", "file", "DER", "missed", "false_alarm", "confusion", "speech_s")]
    for name, report in reports.items():
        lines = list(report.files.items())
        if len(lines) > 1:
            lines.append(("ALL", report.total))
        for fid, r in lines:
            parts = (r.missed, r.false_alarm, r.confusion)
            rows.append((name, fid, f"{100 * r.der:.2f}%", *(_percent(p, r.total) for p in parts), f"{r.total:.3f}"))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n" for row in rows)


def _percent(part: float, total: float) -> str:
    return f"{100 * part / total:.2f}%" if total > 0 else "-"


def _der_json(reports: dict[str, DerReport], files: FilePairs) -> str:
    """``{"conventions": {name: {collar, skip_overlap, files: {id: parts}, total}},
    "missing_hypotheses": [...], "unmatched_hypotheses": [...]}``; parts in seconds."""
    conventions = {
        name: {
            "collar": CONVENTIONS[name].collar,
            "skip_overlap": CONVENTIONS[name].skip_overlap,
            "files": {fid: asdict(r) for fid, r in report.files.items()},
            "total": {k: v for k, v in asdict(report.total).items() if k != "mapping"},
        }
        for name, report in reports.items()
    }
    document = {
        "conventions": conventions,
        "missing_hypotheses": list(files.missing_hypotheses),
        "unmatched_hypotheses": list(files.unmatched_hypotheses),
    }
    return json.dumps(document, indent=2) + "\n"


@evaluate.command("wer")
@click.argument("reference", type=click.Path(path_type=Path))
@click.argument("hypothesis", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON, e.g. --json | jq .wder.")
@click.option("--digits", type=click.Choice(["joined", "each"]), default="joined", show_default=True,
              help="A run of digits is one word (joined), or each digit is a word (each: a digit reader's "
                   "words count as spoken).")
def wer(reference: Path, hypothesis: Path, as_json: bool, digits: str) -> None:
    """Word error rate (WER) and word diarization error rate (WDER) of a transcript.

    REFERENCE is an STM file (file channel speaker start end text; with several
    recordings, the one named like HYPOTHESIS's audio is used) or a witness JSON.
    HYPOTHESIS is a witness JSON. Text is normalised first with Whisper's English
    normaliser (OpenAI's EnglishTextNormalizer, from the whisper-normalizer package):
    numbers and currency become digits ("twenty dollars" = "$20"), contractions are
    expanded ("won't" = "will not"), British spellings made American, "uh"/"um"
    dropped; then lowercase, punctuation dropped except apostrophes inside words, and
    runs of digits joined ("0 6 7 2" = "zero six seven two"; --digits each
    counts each digit as a word instead). WDER is the share of aligned words (hits
    and substitutions) whose speaker is wrong after the optimal speaker mapping;
    unattributed words count as wrong.

    \b
    Examples:
      witness eval wer call.stm out/call.json
      witness eval wer reviewed.json out/call.json --json
      witness eval wer call.stm out/call.json --digits each
    """
    from witness.evaluate.wder import score_words
    from witness.evaluate.words import read_reference_words, words_from_transcript
    from witness.transcript import read_transcript

    transcript = read_transcript(hypothesis)
    recording = Path(transcript.audio.path).stem
    wer_result, wder_result = score_words(read_reference_words(reference, recording), words_from_transcript(transcript),
                                          digits)
    click.echo(_wer_json(wer_result, wder_result) if as_json else _wer_text(wer_result, wder_result), nl=False)


def _wer_text(w: WerResult, d: WderResult) -> str:
    mapping = ", ".join(f"{h} -> {r}" for h, r in sorted(d.mapping.items())) or "none"
    return (
        f"WER   {100 * w.wer:6.2f}%  ({w.substitutions} substitutions, {w.deletions} deletions, "
        f"{w.insertions} insertions; {w.reference_words} reference words)\n"
        f"WDER  {100 * d.wder:6.2f}%  ({d.wrong} of {d.aligned} aligned words on the wrong speaker, "
        f"{d.unattributed} unattributed)\n"
        f"speaker mapping: {mapping}\n"
    )


def _wer_json(w: WerResult, d: WderResult) -> str:
    document: dict[str, Any] = {"wer": asdict(w), "wder": asdict(d)}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
