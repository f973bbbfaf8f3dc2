"""`witness quote` through click: stdout carries quotes only, errors are one stderr line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.stm_transcript import transcript_from_stm
from witness.cli import main


@pytest.fixture
def sample_json(sample_call, tmp_path) -> Path:
    path = tmp_path / "sample.json"
    path.write_text(transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav").to_json())
    return path


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_grep_originally_from_chicago(sample_json):
    """Done-when: Sheila at 14.4–17.8 s, Diane at 17.8 s."""
    result = run("quote", str(sample_json), "--grep", "originally from Chicago")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        'At 00:14.4–00:17.8 Sheila says "And I\'m Sheila in Texas, originally from Chicago."',
        'At 00:17.8–00:20.1 Diane says "Oh, I\'m originally from Chicago also."',
    ]
    assert result.stderr == ""
    as_json = json.loads(run("quote", str(sample_json), "--grep", "ORIGINALLY from chicago", "--json").stdout)
    found = [(q["speaker"], round(q["start"], 1), round(q["end"], 1)) for q in as_json["quotes"]]
    assert found == [("Sheila", 14.4, 17.8), ("Diane", 17.8, 20.1)]


def test_at_range_speaker_context(sample_json):
    assert run("quote", str(sample_json), "9.5").stdout == 'At 00:09.5 Diane says "I didn\'t know you were there."\n'
    assert run("quote", str(sample_json), "00:00:09.5").stdout == run("quote", str(sample_json), "0:09.5").stdout
    ranged = run("quote", str(sample_json), "--from", "0:20", "--to", "0:25", "--speaker", "SHEILA")
    assert ranged.stdout.splitlines() == [
        'At 00:21.9–00:24.0 Sheila says "Well, there isn\'t that much difference."',
        'At 00:24.1–00:28.4 Sheila says "At least you know, they all call me a Yankee down here, so what can I say?"',
    ]
    context = run("quote", str(sample_json), "15", "-C", "1").stdout.splitlines()
    assert context == [
        "  [00:12.5] Diane: This is Diane in New Jersey.",
        'At 00:15.0 Sheila says "And I\'m Sheila in Texas, originally from Chicago."',
        "  [00:17.8] Diane: Oh, I'm originally from Chicago also.",
    ]


def test_audio_path_finds_its_json(sample_json, tmp_path):
    beside = run("quote", str(tmp_path / "sample.wav"), "7")
    assert (beside.exit_code, beside.stdout) == (0, 'At 00:07.0 Diane says "Hello?"\n')
    elsewhere = tmp_path / "calls"
    elsewhere.mkdir()
    in_dir = run("quote", str(elsewhere / "sample.mp3"), "7", "--output-dir", str(tmp_path))
    assert (in_dir.exit_code, in_dir.stdout) == (0, beside.stdout)
    missing = run("quote", str(elsewhere / "other.wav"), "7", "-o", str(tmp_path))
    assert missing.exit_code == 2
    assert missing.stderr.startswith(f"witness: {elsewhere / 'other.wav'}: no transcript found (looked for {tmp_path / 'other.json'} or ")


def test_nothing_matches_exits_1(sample_json):
    gap = run("quote", str(sample_json), "3")  # before anyone speaks
    assert (gap.exit_code, gap.stdout, gap.stderr) == (1, "", f"witness: {sample_json}: nothing matches\n")
    as_json = run("quote", str(sample_json), "--grep", "Kansas", "--json")
    assert as_json.exit_code == 1 and json.loads(as_json.stdout)["quotes"] == []


def bad(path: Path, content: str) -> Path:
    path.write_text(content)
    return path


@pytest.mark.parametrize(
    "case, expected",
    [
        ("missing", "no such file"),
        ("empty", "not valid JSON (line 1, column 1: Expecting value)"),
        ("truncated", "not valid JSON"),
        ("not-a-transcript", 'not a witness transcript (no "schema": "witness.transcript")'),
        ("version-2", "transcript schema version 2 is not supported (this witness reads 1)"),
        ("malformed", "malformed transcript (KeyError: 'audio')"),
    ],
)
def test_bad_transcripts_exit_2_with_one_line(sample_json, tmp_path, case, expected):
    good = json.loads(sample_json.read_text())
    files = {
        "missing": tmp_path / "absent.json",
        "empty": bad(tmp_path / "empty.json", ""),
        "truncated": bad(tmp_path / "cut.json", sample_json.read_text()[:500]),
        "not-a-transcript": bad(tmp_path / "list.json", "[1, 2]"),
        "version-2": bad(tmp_path / "v2.json", json.dumps({**good, "schema_version": 2})),
        "malformed": bad(tmp_path / "noaudio.json", json.dumps({k: v for k, v in good.items() if k != "audio"})),
    }
    result = run("quote", str(files[case]), "10")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"witness: {files[case]}: {expected}")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["0:31"], "{json}: time 00:31.0 is past the end of the audio (00:30.0)"),
        (["1:02:03:04"], "AT: '1:02:03:04' is not a time: use ss, mm:ss or hh:mm:ss(.f)"),
        (["--from", "soon"], "--from: 'soon' is not a time"),
        (["--from", "0:20", "--to", "0:10"], "{json}: the range ends before it starts (00:20.0 to 00:10.0)"),
        (["--grep", "?!"], "{json}: the phrase '?!' has no words to look for"),
    ],
)
def test_bad_queries_exit_2_with_one_line(sample_json, args, expected):
    result = run("quote", str(sample_json), *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("witness: " + expected.format(json=sample_json))


def test_help_teaches_every_option():
    text = run("quote", "--help").stdout
    for option in ("--from", "--to", "--speaker", "--grep", "--context", "--json", "--output-dir"):
        assert option in text
    assert text.count("e.g.") >= 7 and "witness quote call.json 9:32.4" in text


def test_debug_on_the_group_lets_the_error_through(tmp_path):
    from witness.errors import InputError

    result = CliRunner().invoke(main, ["--debug", "quote", str(tmp_path / "absent.json"), "1"])
    assert isinstance(result.exception, InputError)
