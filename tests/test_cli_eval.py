"""`witness eval der|wer` through click, on the sample call and the speakrs fixture RTTMs."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.stm_transcript import transcript_from_stm
from witness.cli import main
from witness.evaluate import CONVENTIONS, diarization_error
from witness.rttm import format_rttm, read_rttm
from witness.transcript import AudioMeta, Transcript, Turn, Utterance, Word


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(result, starts: str) -> None:
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("witness: " + starts), result.stderr


@pytest.fixture
def folders(sample_call, fixtures_dir, tmp_path) -> tuple[Path, Path]:
    """refs/: sample + 3speakers; hyps/: the sample shifted by 0.2 s, 3speakers with two speakers merged."""
    refs, hyps = tmp_path / "refs", tmp_path / "hyps"
    refs.mkdir(), hyps.mkdir()
    shutil.copy(sample_call / "sample.rttm", refs)
    shutil.copy(fixtures_dir / "3speakers_expected.rttm", refs)
    (sample,) = read_rttm(sample_call / "sample.rttm").values()
    (three,) = read_rttm(fixtures_dir / "3speakers_expected.rttm").values()
    (hyps / "a.rttm").write_text(format_rttm([Turn(t.start + 0.2, t.end + 0.2, "X" + t.speaker) for t in sample], "sample"))
    merged = [replace(t, speaker="SPEAKER_01") if t.speaker == "SPEAKER_02" else t for t in three]
    (hyps / "b.rttm").write_text(format_rttm(merged, "3speakers"))
    return refs, hyps


def test_der_of_two_files(fixtures_dir):
    result = run("eval", "der", fixtures_dir / "expected.rttm", fixtures_dir / "pipeline_expected.rttm")
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["convention", "file", "DER", "missed", "false_alarm", "confusion", "speech_s"]
    assert [line.split()[:3] for line in lines[1:]] == [[c, "file1", "0.00%"] for c in ("strict", "paper", "lenient")]


def test_der_of_folders_sums_parts(folders, sample_call, fixtures_dir):
    refs, hyps = folders
    result = run("eval", "der", refs, hyps, "--convention", "paper", "--json")
    assert result.exit_code == 0, result.stderr
    paper = json.loads(result.stdout)["conventions"]["paper"]
    assert (paper["collar"], paper["skip_overlap"]) == (0.25, False)
    assert sorted(paper["files"]) == ["3speakers", "sample"]
    (sample,) = read_rttm(sample_call / "sample.rttm").values()
    (shifted,) = read_rttm(hyps / "a.rttm").values()
    expected = diarization_error(sample, shifted, *CONVENTIONS["paper"])
    assert paper["files"]["sample"]["der"] == pytest.approx(expected.der, abs=1e-9)
    assert paper["files"]["sample"]["mapping"] == {"Xspeaker90": "speaker90", "Xspeaker91": "speaker91"}
    parts = ("missed", "false_alarm", "confusion")
    errors = sum(paper["files"][f][p] for f in paper["files"] for p in parts)
    assert paper["total"]["der"] == pytest.approx(errors / sum(f["total"] for f in paper["files"].values()))
    table = run("eval", "der", refs, hyps).stdout.splitlines()
    assert [row.split()[:2] for row in table[1:]] == [[c, f] for c in CONVENTIONS for f in ("3speakers", "sample", "ALL")]


def test_der_reports_unpaired_recordings(folders):
    refs, hyps = folders
    (hyps / "b.rttm").write_text("SPEAKER other 1 0.0 1.0 <NA> <NA> S <NA> <NA>\n")
    result = run("eval", "der", refs, hyps, "--convention", "strict", "--json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert (document["missing_hypotheses"], document["unmatched_hypotheses"]) == (["3speakers"], ["other"])
    assert document["conventions"]["strict"]["files"]["3speakers"]["der"] == 1.0
    assert result.stderr.splitlines() == [
        f"witness: {hyps}: no turns for recording '3speakers': scored as all missed",
        f"witness: {hyps}: recording 'other' is not in the reference: not scored",
    ]


def test_der_with_uem(sample_call, tmp_path):
    uem = tmp_path / "sample.uem"
    uem.write_text("sample 1 5.0 20.0\n")
    ref = sample_call / "sample.rttm"
    result = json.loads(run("eval", "der", ref, ref, "--uem", uem, "--json").stdout)
    assert result["conventions"]["strict"]["files"]["sample"]["total"] == pytest.approx(
        diarization_error(*2 * list(read_rttm(ref).values()), uem=[(5.0, 20.0)]).total
    )
    uem.write_text("other 1 0 10\n")
    one_line_error(run("eval", "der", ref, ref, "--uem", uem), f"{uem}: the UEM has no regions for recording 'sample'")
    uem.write_text("sample 1 0\n")
    one_line_error(run("eval", "der", ref, ref, "--uem", uem), f"{uem}: line 1: a UEM line has 4 fields")


def test_der_bad_inputs(sample_call, tmp_path):
    ref = sample_call / "sample.rttm"
    broken = tmp_path / "broken.rttm"
    broken.write_text(ref.read_text() + "SPEAKER sample 1 12.5 soon <NA> <NA> speaker90 <NA> <NA>\n")
    one_line_error(run("eval", "der", ref, broken), f"{broken}: line 11: start and duration must be numbers")
    one_line_error(run("eval", "der", tmp_path / "nope.rttm", ref), f"{tmp_path / 'nope.rttm'}: no such file or folder")
    one_line_error(run("eval", "der", tmp_path, ref), f"{broken}: line 11")  # the folder holds broken.rttm
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    one_line_error(run("eval", "der", ref, empty_dir), f"{empty_dir}: folder holds no .rttm file")
    blank = tmp_path / "blank.rttm"
    blank.write_text("")
    one_line_error(run("eval", "der", blank, ref), f"{blank}: holds no SPEAKER lines")


@pytest.fixture
def sample_json(sample_call, tmp_path) -> Path:
    path = tmp_path / "sample.json"
    path.write_text(transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav").to_json())
    return path


def test_wer_against_stm(sample_call, sample_json):
    result = run("eval", "wer", sample_call / "sample.stm", sample_json)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        "WER     0.00%  (0 substitutions, 0 deletions, 0 insertions; 87 reference words)",
        "WDER    0.00%  (0 of 87 aligned words on the wrong speaker, 0 unattributed)",
        "speaker mapping: Diane -> Diane, Sheila -> Sheila",
    ]


def test_wer_against_json_with_errors(sample_call, sample_json, tmp_path):
    transcript = transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")
    first, second, *rest = transcript.utterances
    # "Hello?" misheard as "Yellow?", Sheila's "Hello?" given to Diane, labels renamed.
    first = replace(first, text="Yellow?", words=(replace(first.words[0], text="Yellow?"),))
    second = replace(second, words=tuple(replace(w, speaker="Diane") for w in second.words))
    hypothesis = replace(transcript, utterances=(first, second, *rest)).rename_speakers({"Diane": "S1", "Sheila": "S2"})
    hyp = tmp_path / "hyp.json"
    hyp.write_text(hypothesis.to_json())
    result = run("eval", "wer", sample_json, hyp, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["wer"] == {"wer": 1 / 87, "substitutions": 1, "deletions": 0, "insertions": 0, "reference_words": 87, "hits": 86}
    assert document["wder"] == {"wder": 1 / 87, "wrong": 1, "aligned": 87, "unattributed": 0, "mapping": {"S1": "Diane", "S2": "Sheila"}}


def test_wer_each_digit_a_word(tmp_path):
    stm = tmp_path / "call.stm"
    stm.write_text("call 1 A 0.0 2.0 call me at\ncall 1 B 2.0 4.0 zero six seven two\n")
    text = "call me at zero six seven two."  # all on A
    words = [Word(0.2 + 0.4 * i, 0.5 + 0.4 * i, w, speaker="A") for i, w in enumerate(text.split())]
    hyp = tmp_path / "call.json"
    hyp.write_text(Transcript(AudioMeta("call.wav", 4.0), (Utterance("A", 0.2, 3.1, text, tuple(words)),),
                              ("A",)).to_json())
    joined = json.loads(run("eval", "wer", stm, hyp, "--json").stdout)["wder"]
    each = json.loads(run("eval", "wer", stm, hyp, "--json", "--digits", "each").stdout)["wder"]
    assert (joined["wrong"], joined["aligned"], each["wrong"], each["aligned"]) == (1, 4, 3, 7)


def test_wer_bad_inputs(sample_call, sample_json, tmp_path):
    stm = sample_call / "sample.stm"
    one_line_error(run("eval", "wer", stm, tmp_path / "none.json"), f"{tmp_path / 'none.json'}: no such file")
    (tmp_path / "bad.json").write_text("{")
    one_line_error(run("eval", "wer", stm, tmp_path / "bad.json"), f"{tmp_path / 'bad.json'}: not valid JSON")
    bad_stm = tmp_path / "bad.stm"
    bad_stm.write_text("sample 1 Diane 6.68\n")
    one_line_error(run("eval", "wer", bad_stm, sample_json), f"{bad_stm}: line 1: an STM line needs at least 5 fields")
    two = tmp_path / "two.stm"
    two.write_text("a 1 X 0 1 hi\nb 1 Y 0 1 yo\n")
    one_line_error(run("eval", "wer", two, sample_json), f"{two}: holds several recordings (a, b) and none is named 'sample'")


def test_help_teaches_every_option():
    der_help = run("eval", "der", "--help").stdout
    assert all(o in der_help for o in ("--convention", "--uem", "--json")) and der_help.lower().count("e.g.") >= 3
    assert "witness eval der refs/ out/ --convention paper" in der_help
    assert "witness eval wer call.stm out/call.json" in run("eval", "wer", "--help").stdout
