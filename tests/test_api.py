"""The Python API on the sample call, with the real engines: the same transcripts as the
command line for the same options, from a path, bytes or samples; nothing printed; the
progress hook; threads sharing a Witness; errors with the command line's lines; a light import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import witness
from witness.cli import main

REPO = Path(__file__).resolve().parents[1]


def content(path: Path, audio: bool = True) -> dict:
    """A transcript JSON as the tests compare it: without its timings (and without what
    names the audio, when ``audio`` is False)."""
    data = json.loads(path.read_text())
    data.pop("timings")
    if not audio:
        data.pop("audio")
    return data


@pytest.fixture(scope="module")
def api_run(sample_call, tmp_path_factory):
    """tests/api_run.py on the sample call: (its folder of outputs, its stdout, its stderr)."""
    out = tmp_path_factory.mktemp("api")
    done = subprocess.run([sys.executable, str(REPO / "tests" / "api_run.py"), str(sample_call / "sample.wav"),
                           str(out)], capture_output=True, text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return out, done.stdout, done.stderr


@pytest.fixture(scope="module")
def cli_run(sample_call, tmp_path_factory):
    """``witness FILE --num-speakers 2`` and ``witness diarize FILE`` on the sample call, as JSON."""
    out = tmp_path_factory.mktemp("cli")
    wav = str(sample_call / "sample.wav")
    for args in ([wav, "--num-speakers", "2", "-o", str(out / "transcribe"), "--format", "json"],
                 ["diarize", wav, "-o", str(out / "diarize"), "--format", "json"]):
        result = CliRunner().invoke(main, ["-q", *args])
        assert result.exit_code == 0, result.stderr
    return out


def test_the_api_and_the_cli_give_the_same_transcript(api_run, cli_run):
    out, _, _ = api_run
    assert content(out / "path.json") == content(cli_run / "transcribe" / "sample.json")
    assert content(out / "diarize.json") == content(cli_run / "diarize" / "sample.json")


def test_bytes_and_samples_give_the_same_words_and_speakers(api_run):
    out, _, _ = api_run
    from_path = content(out / "path.json", audio=False)
    assert content(out / "bytes.json", audio=False) == from_path
    assert content(out / "array.json", audio=False) == from_path
    assert json.loads((out / "bytes.json").read_text())["audio"]["path"] == "call.wav"
    assert json.loads((out / "array.json").read_text())["audio"]["path"] == "<array>"
    assert json.loads((out / "bytes.json").read_text())["audio"]["sha256"] == \
        json.loads((out / "path.json").read_text())["audio"]["sha256"]


def test_nothing_is_printed_and_logging_gets_the_warnings(api_run):
    out, stdout, stderr = api_run
    assert stdout == "" and stderr == ""
    log = json.loads((out / "report.json").read_text())["log"]
    assert any("outside [-1, 1]" in line for line in log), log  # from this process (decoding)
    assert any("more than the 1 allowed" in line for line in log), log  # from the diarization worker


def test_the_hook_hears_every_engine_stage_of_the_file(api_run, sample_call):
    out, _, _ = api_run
    steps = {tuple(s) for s in json.loads((out / "report.json").read_text())["steps"]}
    wav = str(sample_call / "sample.wav")
    assert {("transcribe", wav), ("segmentation", wav), ("embedding", wav)} <= steps


def test_threads_share_a_witness_and_a_closed_one_says_so(api_run):
    out, _, _ = api_run
    assert content(out / "thread0.json") == content(out / "thread1.json")
    assert content(out / "thread0.json", audio=False)["speakers"] == ["SPEAKER_00", "SPEAKER_01"]
    assert json.loads((out / "report.json").read_text())["closed"] == "this Witness is closed"


def test_quote_and_at_are_witness_quote(api_run, sample_call):
    out, _, _ = api_run
    transcript = witness.Transcript.read(out / "path.json")
    for args, query in ((["15"], {"at": 15.0}), (["--grep", "chicago", "-C", "1"], {"phrase": "chicago", "context": 1}),
                        (["--speaker", "speaker_01"], {"speaker": "speaker_01"})):
        cli = CliRunner().invoke(main, ["quote", str(out / "path.json"), *args])
        assert cli.exit_code == 0, cli.stderr
        hits = transcript.quote(**query)
        separator = "\n--\n" if query.get("context") else "\n"
        assert separator.join(str(q) for q in hits) + "\n" == cli.stdout
    assert transcript.at(15.0) == transcript.quote(at=15.0) and len(transcript.at(15.0)) == 1
    with pytest.raises(witness.InputError, match="past the end of the audio"):
        transcript.at(99)


def test_write_and_read(api_run, tmp_path):
    out, _, _ = api_run
    transcript = witness.Transcript.read(out / "path.json")
    assert witness.Transcript.read(transcript.write(tmp_path / "t.json")) == transcript
    transcript.write(tmp_path / "t.srt")
    transcript.write(tmp_path / "page", "html")
    assert (tmp_path / "t.srt").read_text().startswith("1\n00:00:06")
    assert (tmp_path / "page").read_text().startswith("<!doctype html>")
    with pytest.raises(witness.UsageError, match="already exists"):
        transcript.write(tmp_path / "t.json")
    transcript.write(tmp_path / "t.json", "txt", overwrite=True)
    assert (tmp_path / "t.json").read_text() == transcript.to_text("txt")
    assert transcript.to_json() == witness.Transcript.read(out / "path.json").to_json()


def test_errors_are_the_cli_lines(tmp_path):
    missing = tmp_path / "missing.wav"
    with pytest.raises(witness.InputError) as raised:
        witness.transcribe(missing)
    cli = CliRunner().invoke(main, [str(missing)])
    assert cli.exit_code == 2 and cli.stderr == f"witness: {raised.value}\n"
    assert str(raised.value).startswith(f"{missing}: ")

    not_audio = b"this is not audio"
    with pytest.raises(witness.InputError, match=r"^<bytes>: "):
        witness.transcribe(not_audio)


@pytest.mark.parametrize("options, message", [
    ({"num_speakers": 0}, "num_speakers must be a whole number >= 1, not 0"),
    ({"num_speakers": True}, "num_speakers must be a whole number >= 1, not True"),
    ({"min_speakers": 3, "max_speakers": 2}, "min_speakers 3 exceeds max_speakers 2"),
    ({"device": "tpu"}, "device must be one of auto, cpu, cuda"),
    ({"nums_speakers": 2}, "unknown option nums_speakers"),
    ({"config": {"merge": {"nope": 1}}}, "unknown setting 'merge.nope'"),
])
def test_options_are_checked_as_the_cli_checks_them(options, message):
    with pytest.raises(witness.WitnessError) as raised:
        witness.Witness(**options)
    assert message in str(raised.value)


def test_the_cli_names_the_same_contradiction_by_its_flags(sample_call):
    cli = CliRunner().invoke(main, [str(sample_call / "sample.wav"), "--min-speakers", "3", "--max-speakers", "2"])
    assert cli.exit_code == 2 and cli.stderr == "witness: --min-speakers 3 exceeds --max-speakers 2\n"


def test_samples_need_their_rate():
    import numpy as np

    with pytest.raises(witness.UsageError, match="sample_rate"):
        witness.transcribe(np.zeros(16000, np.float32))


def test_import_is_light():
    code = ("import sys, witness; witness.InputError; witness.__version__; "
            "print(sorted(m for m in ('numpy', 'onnxruntime', 'pywhispercpp', 'av', 'click', 'scipy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and done.stdout == "[]\n" and done.stderr == "", done.stderr


def test_the_package_is_typed():
    assert (REPO / "witness" / "py.typed").is_file()
    assert "py.typed" in (REPO / "pyproject.toml").read_text()
