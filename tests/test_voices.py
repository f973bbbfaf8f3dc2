"""Known voices without models: the voice files (folder, names, round trip, damage), the
one-to-one matching on hand-built vectors, and what enrollment keeps or refuses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from witness.errors import InputError, UsageError
from witness.transcript import AudioMeta, Transcript, Turn
from witness.voices.enroll import check_mode, enrolled, enrollment_print
from witness.voices.match import match_voices
from witness.voices.store import (
    Voice, VoicePrint, check_name, load_voices, parse_use, read_voice, remove_voice, save_voice, voice_path, voices_dir,
    voices_for_run)


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def voice(name: str, *prints: np.ndarray, model: str = "campplus", sha: str = "a" * 64) -> Voice:
    return Voice(name, model, sha, tuple(VoicePrint(p, "x.wav", "b" * 64, 12.0, "2026-01-01T00:00:00+00:00")
                                         for p in prints))


def test_the_folder_follows_the_env_var_then_xdg(monkeypatch, tmp_path):
    assert voices_dir() == Path(__import__("os").environ["WITNESS_VOICES_DIR"])
    monkeypatch.delenv("WITNESS_VOICES_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert voices_dir() == tmp_path / "witness" / "voices"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert voices_dir() == Path.home() / ".local" / "share" / "witness" / "voices"


@pytest.mark.parametrize("name", ["Diane", "Zoë", "diane.smith", "O'Brien", "Agent_7"])
def test_names_a_voice_can_have(name):
    assert check_name(name) == name


@pytest.mark.parametrize("name", ["", "Diane Smith", "a,b", "../x", "a/b", ".hidden", "SPEAKER_01",
                                  "speaker_00", "none", "ALL", "x" * 65])
def test_names_refused(name):
    with pytest.raises(UsageError):
        check_name(name)


def test_a_voice_round_trips_and_is_listed_and_removed(tmp_path):
    saved = save_voice(voice("Diane", unit(1, 0, 0), unit(1, 1, 0)), tmp_path)
    assert saved == voice_path("Diane", tmp_path)
    (loaded,) = load_voices(None, tmp_path)
    assert (loaded.name, loaded.model, len(loaded.prints), loaded.path) == ("Diane", "campplus", 2, saved)
    np.testing.assert_allclose(loaded.prints[1].embedding, unit(1, 1, 0), rtol=1e-6)
    np.testing.assert_allclose(loaded.vector(), unit(1 + 2 ** -0.5, 2 ** -0.5, 0), rtol=1e-6)
    assert remove_voice("Diane", tmp_path) == saved and not saved.exists()
    with pytest.raises(UsageError, match="no enrolled voice Diane"):
        remove_voice("Diane", tmp_path)


def test_asking_for_a_voice_not_enrolled_is_a_usage_error(tmp_path):
    save_voice(voice("Diane", unit(1, 0)), tmp_path)
    assert [v.name for v in load_voices(("Diane",), tmp_path)] == ["Diane"]
    with pytest.raises(UsageError, match="no enrolled voice Sheila"):
        load_voices(("Diane", "Sheila"), tmp_path)


@pytest.mark.parametrize("text", ["not json", json.dumps({"schema": "other"}),
                                  json.dumps({"schema": "witness.voice", "schema_version": 1, "name": "D"}),
                                  json.dumps({"schema": "witness.voice", "schema_version": 1, "name": "D",
                                              "model": "campplus", "model_sha256": "a", "prints": []})])
def test_a_damaged_voice_file_is_an_input_error_naming_it(tmp_path, text):
    path = tmp_path / "D.voice.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_voice(path)
    assert caught.value.path == str(path)


def test_parse_use():
    assert parse_use("all") is None and parse_use("ALL") is None
    assert parse_use("none") == () and parse_use("") == ()
    assert parse_use("Diane, Sheila,Diane") == ("Diane", "Sheila")


def test_best_match_wins_and_no_name_is_taken_twice():
    centroids = {"SPEAKER_00": unit(1, 0.2, 0), "SPEAKER_01": unit(1, 0.1, 0), "SPEAKER_02": unit(0, 0, 1)}
    voices = [voice("Diane", unit(1, 0.1, 0)), voice("Sheila", unit(0, 1, 0))]
    matches = match_voices(centroids, voices, threshold=0.5)
    assert [(m.speaker, m.name) for m in matches] == [("SPEAKER_01", "Diane")]  # 00 is close too, 01 closer
    assert matches[0].score == pytest.approx(1.0)


def test_below_the_threshold_nobody_is_named():
    centroids = {"SPEAKER_00": unit(1, 1, 0), "SPEAKER_01": unit(0, 0, 1)}
    voices = [voice("Diane", unit(1, 0, 0)), voice("Sheila", unit(0, 0.3, 1))]
    assert [(m.speaker, m.name) for m in match_voices(centroids, voices, 0.9)] == [("SPEAKER_01", "Sheila")]
    assert match_voices(centroids, voices, 0.99) == ()
    assert match_voices({}, voices) == () and match_voices(centroids, []) == ()


def test_a_print_of_another_model_is_refused_naming_its_file(tmp_path, monkeypatch):
    model = tmp_path / "campplus.onnx"
    model.write_bytes(b"model bytes")
    saved = save_voice(voice("Diane", unit(1, 0), sha="0" * 64))
    with pytest.raises(InputError) as caught:
        voices_for_run("all", "campplus", model)
    assert caught.value.path == str(saved)
    assert "made with campplus (sha256 000000000000…)" in caught.value.message
    assert voices_for_run("none", "campplus", model) == ()


def call(*turns: tuple[float, float, str], embeddings: dict | None = None) -> Transcript:
    turns_ = tuple(Turn(s, e, k) for s, e, k in turns)
    embeddings = embeddings if embeddings is not None else {k: unit(1, i) for i, k in enumerate({t[2] for t in turns})}
    return Transcript(AudioMeta("/calls/diane.wav", 60.0, "c" * 64), exclusive_turns=turns_,
                      speaker_embeddings=embeddings)


def test_a_recording_of_one_voice_gives_its_centroid():
    transcript = call((0, 8, "SPEAKER_00"), (9, 10, "SPEAKER_01"), (11, 15, "SPEAKER_00"))  # other voice: 1 s of 13
    p = enrollment_print(transcript)
    np.testing.assert_array_equal(p.embedding, transcript.speaker_embeddings["SPEAKER_00"])
    assert (p.source, p.source_sha256, p.speech_seconds) == ("diane.wav", "c" * 64, 12.0)


def test_a_second_voice_with_a_real_share_is_refused_unless_picked():
    transcript = call((0, 8, "SPEAKER_00"), (9, 12, "SPEAKER_01"))
    with pytest.raises(InputError, match=r"2 voices here \(SPEAKER_00 8.0 s, SPEAKER_01 3.0 s\)"):
        enrollment_print(transcript)
    assert enrollment_print(transcript, "SPEAKER_00").speech_seconds == 8.0
    with pytest.raises(UsageError, match="--speaker SPEAKER_07: no such speaker"):
        enrollment_print(transcript, "SPEAKER_07")


def test_too_little_speech_is_refused():
    with pytest.raises(InputError, match="too little speech"):
        enrollment_print(call((0, 3, "SPEAKER_00")))
    with pytest.raises(InputError, match="no speech found"):
        enrollment_print(call(embeddings={}))


def test_an_enrolled_voice_is_never_replaced_silently():
    old = voice("Diane", unit(1, 0))
    new = voice("x", unit(0, 1)).prints
    with pytest.raises(UsageError, match="enrolled already.*--add.*--replace"):
        check_mode(old, "new")
    assert len(enrolled("Diane", new, "campplus", "a" * 64, old, "add").prints) == 2
    assert enrolled("Diane", new, "campplus", "a" * 64, old, "replace").prints == new
    with pytest.raises(UsageError, match="another model"):
        enrolled("Diane", new, "campplus", "f" * 64, old, "add")


def test_a_batch_redoes_its_files_when_the_enrolled_voices_change(no_enrolled_voices):
    from witness.run.batch import settings_hash
    from witness.config import Settings

    before, words_only = settings_hash(Settings()), settings_hash(Settings(), diarize=False)
    save_voice(voice("Diane", unit(1, 0)))
    after = settings_hash(Settings())
    assert after != before and settings_hash(Settings(), diarize=False) == words_only
    save_voice(voice("Diane", unit(1, 0), unit(0, 1)))
    assert settings_hash(Settings()) != after
