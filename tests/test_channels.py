"""Stereo calls with one party per channel (witness.channels), on real audio with the
real Silero VAD and CAM++: calls built from the dev set's single-speaker pieces with bleed at
-20 dB and a delay (scripts/stereo_cases.py) are split with DER under 2 %, and each party's
words are transcribed from its own channel; a channel holding two voices, a dual-mono file
and a mono file stay on the diarization path; and the CLI records which way the speakers
were found."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest
from click.testing import CliRunner

from witness.cli import main
from witness.channels import StereoCall, diarize_channels, parties_apart, same_voice_share
from witness.vad import SileroVad
from witness.evaluate import diarization_error
from witness.rttm import parse_rttm
from witness.transcript import Transcript


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def vad(silero_vad) -> SileroVad:
    return SileroVad(silero_vad)


@pytest.fixture(scope="module")
def voice_share(campplus_onnx):
    from witness.diarize.embedding import CamPlusPlusEmbedder

    return partial(same_voice_share, CamPlusPlusEmbedder(campplus_onnx))


@pytest.fixture(scope="module")
def calls(shared_dir, vad):
    from scripts.stereo_cases import stereo_calls

    return stereo_calls(vad)


@pytest.fixture(scope="module")
def stereo_wav(calls, tmp_path_factory):
    return calls[0].write(tmp_path_factory.mktemp("stereo") / "call.wav")


def test_split_calls_are_found_and_their_turns_are_exact(calls, vad, voice_share):
    for call in calls:
        evidence, split = diarize_channels(call.channels, vad, "auto", voice_share)
        assert evidence.split, (call.name, evidence)
        assert evidence.correlation < 0.1 and min(evidence.leads) > 0.1
        result = diarization_error(list(call.reference), list(split.turns), collar=0.0)
        assert result.der < 0.02, (call.name, result)
        assert result.confusion < 0.005 * result.total  # only where both talk at once
        assert {t.speaker for t in split.exclusive_turns} == {"CHANNEL_1", "CHANNEL_2"}


def test_a_channel_holding_two_voices_is_not_split(shared_dir, vad, voice_share):
    from scripts.stereo_cases import shared_channel_calls

    for call in shared_channel_calls(vad):
        evidence, split = diarize_channels(call.channels, vad, "auto", voice_share)
        assert split is None and "several voices" in evidence.reason, (call.name, evidence)


def bleed_only(own: np.ndarray) -> np.ndarray:
    """(2, n): ``own`` on channel 1, and on channel 2 nothing but its bleed (-20 dB, 40 ms late)."""
    bleed = np.zeros_like(own)
    bleed[640:] = own[:-640] * np.float32(0.1)
    return np.stack([own, bleed])


def test_bleed_alone_makes_no_turns(calls, vad):
    """Channel 2 carries nothing but channel 1's bleed: no turn."""
    channels = bleed_only(calls[0].channels[0])
    call = StereoCall(channels, np.stack([vad.probabilities(c) for c in channels]))
    assert vad.speech_regions(channels[1]), "the bleed alone is loud enough to be heard as speech"
    assert call.speech_regions(1) == []
    assert call.inspect().split is False and "almost no speech" in call.inspect().reason


def test_diarize_on_a_stereo_call_takes_the_channels(stereo_wav, default_models, tmp_path):
    result = run("diarize", stereo_wav)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(";; speakers from the stereo channels")
    assert {t.speaker for t in parse_rttm(result.stdout)["call"]} == {"CHANNEL_1", "CHANNEL_2"}
    out = tmp_path / "out"
    result = run("diarize", stereo_wav, "--format", "json", "-o", out)
    assert result.exit_code == 0, result.stderr
    info = json.loads((out / "call.json").read_text())["engines"]["diarization"]
    assert info["method"] == "channels" and info["channels"]["split"] is True
    assert set(info["channels"]) == {"correlation", "separated", "leads", "one_voice", "split", "reason"}


def test_each_party_is_transcribed_from_its_own_channel(calls, stereo_wav, default_models, tmp_path):
    """Whisper decodes each channel where its party speaks: every word is that party's, the
    other party's bleed is not transcribed twice, and a backchannel does not cut a sentence."""
    from scripts.measure_stereo import scored

    out = tmp_path / "out"
    result = run(stereo_wav, "--format", "json", "-o", out)
    assert result.exit_code == 0, result.stderr
    transcript = Transcript.from_dict(json.loads((out / "call.json").read_text()))
    assert transcript.engines["asr"]["channels_decoded"] == 2
    assert transcript.engines["diarization"]["method"] == "channels"
    wer, wder = scored(calls[0], list(transcript.words))
    assert wder < 1.0 and wer < 12.0, (wer, wder)  # measured: 7.5 % and 0.0 % (tiny.en)
    for u in transcript.utterances:
        assert {w.speaker for w in u.words} == {u.speaker}


def test_bleed_on_a_forced_split_is_never_transcribed(calls, default_models, tmp_path):
    """Channel 2 holds only channel 1's bleed and the split is forced: channel 1's words,
    none for channel 2, though the bleed alone is audible speech."""
    from scripts.stereo_cases import StereoCall as Built

    path = Built("bleed", bleed_only(calls[0].channels[0][: 20 * 16000]), (), (), ()).write(tmp_path / "bleed.wav")
    out = tmp_path / "out"
    result = run(path, "--channels", "split", "--format", "json", "-o", out)
    assert result.exit_code == 0, result.stderr
    transcript = Transcript.from_dict(json.loads((out / "bleed.json").read_text()))
    assert transcript.engines["asr"]["channels_decoded"] == 2
    assert len(transcript.words) > 10 and {w.speaker for w in transcript.words} == {"CHANNEL_1"}


def test_channels_are_transcribed_apart_wherever_they_may_name_the_speakers(calls, vad, sample_audio):
    """Whisper's decision skips only the voice check: a superset of the diarization's."""
    from scripts.stereo_cases import shared_channel_calls

    assert all(parties_apart(call.channels, vad, "auto") is not None for call in calls)
    assert all(parties_apart(call.channels, vad, "auto") is not None for call in shared_channel_calls(vad))
    dual = np.stack([sample_audio, sample_audio])
    assert parties_apart(dual, vad, "auto") is None
    assert parties_apart(dual, vad, "split") is not None


def test_mono_and_dual_mono_stay_on_the_diarization_path(sample_call, sample_audio, default_models, tmp_path):
    from scripts.stereo_cases import StereoCall as Built

    dual = Built("dual", np.stack([sample_audio, sample_audio]), (), (), ()).write(tmp_path / "dual.wav")
    out = tmp_path / "out"
    result = run("diarize", sample_call / "sample.wav", dual, "--format", "json",
                 "-o", out, "--step", "2")
    assert result.exit_code == 0, result.stderr
    mono = json.loads((out / "sample.json").read_text())["engines"]["diarization"]
    assert mono["method"] == "model" and "channels" not in mono
    both = json.loads((out / "dual.json").read_text())["engines"]["diarization"]
    assert both["method"] == "model" and both["channels"]["split"] is False
    assert both["channels"]["correlation"] > 0.99 and "copies" in both["channels"]["reason"]


def test_split_is_forced_and_a_bad_mode_is_one_line(sample_audio, default_models, tmp_path):
    from scripts.stereo_cases import StereoCall as Built

    dual = Built("dual", np.stack([sample_audio, sample_audio]), (), (), ()).write(tmp_path / "dual.wav")
    result = run("diarize", dual, "--channels", "split")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(";; speakers from the stereo channels")
    config = tmp_path / "c.toml"
    config.write_text('[diarization]\nchannels = "both"\n')
    result = run("diarize", dual, "--config", config)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"witness: {config}: setting 'diarization.channels' must be one of auto, mix, split, "
                             'not "both"\n')


@pytest.mark.parametrize("mode", ["auto", "split"])
def test_a_stereo_file_of_a_few_samples_is_no_error(mode, default_models, tmp_path):
    """Fewer 32 ms frames than the level smoothing spans (a 50 ms stereo file)."""
    from scripts.stereo_cases import StereoCall as Built

    noise = np.random.default_rng(0).normal(0, 0.1, (2, 800)).astype(np.float32)
    path = Built("tiny", noise, (), (), ()).write(tmp_path / "tiny.wav")
    result = run(path, "--channels", mode, "--format", "json", "-o", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "out" / "tiny.json").exists()


def test_where_both_speak_words_go_to_the_louder_channel():
    """Hand-made levels, no model: channel 1 speaks 0-2 s, channel 2 (6 dB louder) 1.5-3 s."""
    rng = np.random.default_rng(0)
    n = 4 * 16000
    channels = np.zeros((2, n), dtype=np.float32)
    channels[0, :2 * 16000] = rng.normal(0, 0.05, 2 * 16000)
    channels[1, 24000:48000] = rng.normal(0, 0.1, 24000)
    frames = -(-n // 512)
    times = np.arange(frames) * 512 / 16000
    speech = np.stack([(times < 2.0), (times >= 1.5) & (times < 3.0)]).astype(np.float32)
    split = StereoCall(channels, speech).turns()
    assert [(t.speaker, round(t.start, 1), round(t.end, 1)) for t in split.turns] == [
        ("CHANNEL_1", 0.0, 2.0), ("CHANNEL_2", 1.5, 3.0)]
    assert [(t.speaker, round(t.start, 1), round(t.end, 1)) for t in split.exclusive_turns] == [
        ("CHANNEL_1", 0.0, 1.5), ("CHANNEL_2", 1.5, 3.0)]
