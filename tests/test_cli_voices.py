"""`witness enroll` and `witness voices` with real audio and the real CAM++ model: one
speaker of the sample call enrolled from her own turns (sample.rttm), then named in the
sample call's transcript; `--voices none`; a print of another model refused in one line;
list and remove; an enrolled voice never replaced silently."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from scripts.diarization_cases import solo_regions
from witness.audio import write_wav
from witness.cli import main
from witness.rttm import parse_rttm, read_rttm

SPEAKER = "speaker90"  # one of the two women in sample.rttm


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def solo_wav(samples: np.ndarray, rttm: Path, speaker: str, out: Path) -> Path:
    """``speaker``'s turns of the call, with every other speaker's turns cut out, as one wav."""
    (turns,) = read_rttm(rttm).values()
    return write_wav(out, np.concatenate([samples[round(s * 16000):round(e * 16000)]
                                          for s, e in solo_regions(tuple(turns), speaker)]))


def speaker_of(turns, reference, name: str) -> str:
    """The hypothesis label that overlaps reference speaker ``name`` most."""
    overlap: dict[str, float] = {}
    for ref in (t for t in reference if t.speaker == name):
        for hyp in turns:
            shared = max(0.0, min(ref.end, hyp.end) - max(ref.start, hyp.start))
            overlap[hyp.speaker] = overlap.get(hyp.speaker, 0.0) + shared
    return max(overlap, key=overlap.get)


@pytest.fixture(scope="module")
def diane(sample_call, tmp_path_factory) -> Path:
    from witness.audio import load_audio

    samples = load_audio(sample_call / "sample.wav").samples
    return solo_wav(samples, sample_call / "sample.rttm", SPEAKER, tmp_path_factory.mktemp("enroll") / "diane.wav")


@pytest.fixture
def enrolled(diane, no_enrolled_voices) -> Path:
    result = run("enroll", "Diane", diane)
    assert (result.exit_code, result.stdout) == (0, ""), result.stderr
    assert result.stderr.startswith("witness: enrolled Diane: 1 print (")
    return no_enrolled_voices / "Diane.voice.json"


def test_the_enrolled_speaker_is_named_in_every_format(enrolled, sample_call, tmp_path):
    out = tmp_path / "out"
    result = run("transcribe", sample_call / "sample.wav", "-o", out, "--format", "txt,json,rttm")
    assert result.exit_code == 0, result.stderr
    data = json.loads((out / "sample.json").read_text())
    (match,) = data["engines"]["diarization"]["voices"]["matches"]
    reference = read_rttm(sample_call / "sample.rttm")["sample"]
    turns = parse_rttm((out / "sample.rttm").read_text())["sample"]
    assert speaker_of(turns, reference, SPEAKER) == "Diane"
    assert match["name"] == "Diane" and match["replaced"] in ("SPEAKER_00", "SPEAKER_01")
    assert match["score"] >= data["engines"]["diarization"]["voices"]["threshold"]
    (other,) = set(data["speakers"]) - {"Diane"}  # the other woman stays a label
    assert other.startswith("SPEAKER_") and other != match["replaced"]
    assert {u["speaker"] for u in data["utterances"]} == set(data["speakers"])
    assert "Diane:" in (out / "sample.txt").read_text()


def test_voices_none_keeps_the_labels(enrolled, sample_call):
    result = run("diarize", sample_call / "sample.wav", "--voices", "none")
    assert result.exit_code == 0, result.stderr
    assert {t.speaker for t in parse_rttm(result.stdout)["sample"]} == {"SPEAKER_00", "SPEAKER_01"}
    named = run("diarize", sample_call / "sample.wav", "--voices", "Diane")
    assert "Diane" in {t.speaker for t in parse_rttm(named.stdout)["sample"]}
    unknown = run("diarize", sample_call / "sample.wav", "--voices", "Sheila")
    assert (unknown.exit_code, unknown.stdout) == (2, "")
    assert unknown.stderr.startswith("witness: --voices: no enrolled voice Sheila") and unknown.stderr.count("\n") == 1


def test_a_print_of_another_model_is_refused_in_one_line(enrolled, sample_call):
    data = json.loads(enrolled.read_text())
    enrolled.write_text(json.dumps({**data, "model_sha256": "0" * 64}))
    result = run("diarize", sample_call / "sample.wav")
    assert (result.exit_code, result.stdout) == (2, ""), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"witness: {enrolled}: voice print of Diane was made with campplus "
                                    "(sha256 000000000000…), this run embeds with campplus")
    assert run("diarize", sample_call / "sample.wav", "--voices", "none").exit_code == 0


def test_list_add_replace_remove(enrolled, diane):
    again = run("enroll", "Diane", diane)
    assert (again.exit_code, again.stdout) == (2, "")
    assert again.stderr == (f"witness: {enrolled}: voice Diane is enrolled already (1 prints): --add to add "
                            "these recordings to it, --replace to start it over\n")
    assert len(json.loads(enrolled.read_text())["prints"]) == 1
    assert run("enroll", "Diane", diane, "--add").exit_code == 0
    listed = run("voices", "list")
    header, row = listed.stdout.splitlines()
    assert header.split() == ["NAME", "MODEL", "PRINTS", "SPEECH", "FIRST", "LAST"]
    assert row.split()[:3] == ["Diane", "campplus", "2"]
    assert run("enroll", "Diane", diane, "--replace").exit_code == 0
    assert len(json.loads(enrolled.read_text())["prints"]) == 1
    removed = run("voices", "remove", "Diane")
    assert (removed.exit_code, removed.stdout) == (0, "") and not enrolled.exists()
    assert run("voices", "list").stdout == ""
    gone = run("voices", "remove", "Diane")
    assert gone.exit_code == 2 and gone.stderr.startswith("witness: no enrolled voice Diane")


def test_a_call_with_two_voices_is_refused_unless_one_is_picked(sample_call, no_enrolled_voices):
    result = run("enroll", "Diane", sample_call / "sample.wav")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"witness: {sample_call / 'sample.wav'}: 2 voices here (SPEAKER_0")
    assert result.stderr.count("\n") == 1 and not list(no_enrolled_voices.iterdir())
    picked = run("enroll", "Diane", sample_call / "sample.wav", "--speaker", "SPEAKER_00")
    assert picked.exit_code == 0, picked.stderr




def test_a_stereo_call_enrolls_from_its_mix_and_names_a_channel(shared_dir, default_models, silero_vad, tmp_path,
                                                                  no_enrolled_voices):
    """One party per channel gives channel speakers without clusters: enrollment diarizes
    the mix (two voices found, refused, as in a mono call); a run embeds each channel's own
    speech when voices are enrolled, so an enrolled party names its channel."""
    from scripts.stereo_cases import stereo_calls
    from witness.vad import SileroVad

    call = stereo_calls(SileroVad(silero_vad))[0]
    stereo = call.write(tmp_path / "stereo.wav")
    result = run("enroll", "Agent", stereo)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"witness: {stereo}: ") and " voices here (SPEAKER_0" in result.stderr, \
        result.stderr
    own = np.concatenate([call.channels[0][round(s * 16000):round(e * 16000)]
                          for s, e in solo_regions(call.reference, "CHANNEL_1")])
    assert run("enroll", "Agent", write_wav(tmp_path / "agent.wav", own)).exit_code == 0
    named = run("diarize", stereo)
    assert named.stdout.startswith(";; speakers from the stereo channels"), named.stderr
    assert {t.speaker for t in parse_rttm(named.stdout)["stereo"]} == {"Agent", "CHANNEL_2"}
