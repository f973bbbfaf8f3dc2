"""`witness FILE` on the sample call, engines replaced by the human words and turns
(--words/--turns): every utterance gets the right speaker, and quote finds it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.stm_transcript import spread_words
from witness.cli import main
from witness.evaluate.stm import read_stm
from witness.transcript import read_transcript

NAMES = "speaker90=Diane,speaker91=Sheila"


@pytest.fixture
def words_json(sample_call, tmp_path):
    words = spread_words(read_stm(sample_call / "sample.stm"))
    path = tmp_path / "words.json"
    path.write_text(json.dumps([{"start": w.start, "end": w.end, "text": w.text} for w in words]))
    return path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_every_utterance_gets_the_right_speaker(sample_call, words_json, tmp_path):
    out = tmp_path / "out"
    result = run(sample_call / "sample.wav", "--words", words_json, "--turns", sample_call / "sample.rttm",
                 "--speaker-names", NAMES, "-o", out, "--format", "json,txt,srt")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    transcript = read_transcript(out / "sample.json")
    truth = {(round(w.start, 3), w.text): w.speaker for w in spread_words(read_stm(sample_call / "sample.stm"))}
    assert all(truth[(w.start, w.text)] == w.speaker for w in transcript.words)  # JSON times are to the ms
    assert transcript.speakers == ("Diane", "Sheila")
    assert transcript.audio.duration == pytest.approx(30.0, abs=0.01) and len(transcript.audio.sha256) == 64
    lines = (out / "sample.txt").read_text().splitlines()
    assert lines[0] == "[00:06.7] Diane: Hello?" and lines[1] == "[00:07.6] Sheila: Hello?"
    assert {p.name for p in out.iterdir()} == {"sample.json", "sample.txt", "sample.srt"}

    quote = run("quote", sample_call / "sample.wav", "-o", out, "--grep", "originally from Chicago")
    assert quote.exit_code == 0, quote.stderr
    hits = quote.stdout.splitlines()
    assert hits[0].startswith("At 00:14.4–00:17.8 Sheila says") and hits[1].startswith("At 00:17.8–00:21.5 Diane says")


def test_txt_goes_to_stdout_by_default(sample_call, words_json):
    result = run(sample_call / "sample.wav", "--words", words_json, "--turns", sample_call / "sample.rttm")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.splitlines()[0] == "[00:06.7] speaker90: Hello?"


def test_existing_outputs_are_never_overwritten_silently(sample_call, words_json, tmp_path):
    (tmp_path / "sample.json").write_text("precious")
    result = run(sample_call / "sample.wav", "--words", words_json, "-o", tmp_path, "--format", "json")
    assert result.exit_code == 2  # a usage error (README, "Exit codes")
    assert result.stderr == f"witness: {tmp_path / 'sample.json'}: already exists (pass --overwrite to replace it)\n"
    assert (tmp_path / "sample.json").read_text() == "precious"
    again = run(sample_call / "sample.wav", "--words", words_json, "-o", tmp_path, "--format", "json", "--overwrite")
    assert again.exit_code == 0 and read_transcript(tmp_path / "sample.json").words


def test_a_bad_file_is_one_line_and_leaves_no_output(sample_call, words_json, tmp_path):
    bad = tmp_path / "notes.wav"
    bad.write_text("not audio at all\n" * 20)
    out = tmp_path / "out"
    result = run(bad, sample_call / "sample.wav", "--words", words_json, "-o", out, "--format", "json")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"witness: {bad}: not an audio file") and result.stderr.count("\n") == 1
    assert [p.name for p in out.iterdir()] == ["sample.json"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--format", "doc"], "unknown format 'doc'"),
        (["--format", "txt,srt"], "several formats need -o DIR"),
        (["--speaker-names", "Diane"], "is not LABEL=NAME"),
    ],
)
def test_bad_options_are_usage_errors(sample_call, words_json, args, message):
    result = run(sample_call / "sample.wav", "--words", words_json, *args)
    assert result.exit_code == 2 and message in result.stderr


def test_rttm_with_a_bad_line(sample_call, words_json, tmp_path):
    rttm = tmp_path / "bad.rttm"
    rttm.write_text("SPEAKER sample 1 1.0 x <NA> <NA> a <NA> <NA>\n")
    result = run(sample_call / "sample.wav", "--words", words_json, "--turns", rttm)
    assert result.exit_code == 2
    assert result.stderr == f"witness: {rttm}: line 1: start and duration must be numbers, found '1.0' 'x'\n"
