"""Settings: config/default.toml documents exactly the shipped defaults; overrides are checked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from click.testing import CliRunner

from witness.cli import main
from witness.config import RETIRED, SCHEMA, Settings, apply_toml, load_settings, override, problem
from witness.errors import InputError

DEFAULT_TOML = Path(__file__).resolve().parents[1] / "config" / "default.toml"


def test_default_toml_equals_the_dataclass_defaults():
    assert apply_toml(Settings(), DEFAULT_TOML) == Settings()
    # …and names every setting: loading it over non-defaults restores every field.
    import tomllib

    table = tomllib.loads(DEFAULT_TOML.read_text())
    for section, values in Settings().to_dict().items():
        assert set(table[section]) == set(values), section


def test_user_file_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "witness").mkdir()
    (tmp_path / "witness" / "config.toml").write_text("[merge]\ngap_tolerance = 1\n")
    extra = tmp_path / "x.toml"
    extra.write_text('[output]\nformats = ["srt"]\n')
    s = load_settings(extra)
    assert s.merge.gap_tolerance == 1.0 and s.output.formats == ("srt",)


def test_config_file_alone_without_a_user_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing-here"))
    extra = tmp_path / "x.toml"
    extra.write_text("[diarization]\nstep = 2\n")
    assert load_settings(extra).diarization.step == 2.0


@pytest.mark.parametrize(
    "table, message",
    [
        ({"merge": {"gap_tolerence": 1}}, "unknown setting 'merge.gap_tolerence'"),
        ({"merge": {"repair": "yes"}}, "setting 'merge.repair' must be true or false, not \"yes\""),
        ({"merge": 3}, "must be a table"),
    ],
)
def test_bad_settings_name_the_key(table, message):
    with pytest.raises(InputError, match=message):
        override(Settings(), table, "cfg.toml")


@pytest.mark.parametrize("section, key", [key.split(".") for key in RETIRED])
def test_a_retired_setting_is_ignored_with_a_warning(section, key, caplog):
    """A config written for an earlier release still loads; the warning names the file and key."""
    assert override(Settings(), {section: {key: 1}}, "old.toml") == Settings()
    assert f"old.toml: setting '{section}.{key}' is ignored" in caplog.text


def test_the_schema_names_every_setting_and_allows_the_defaults():
    defaults = Settings()
    assert set(SCHEMA) == {f.name for f in dataclasses.fields(defaults)}
    for section, rules in SCHEMA.items():
        assert set(rules) == {f.name for f in dataclasses.fields(getattr(defaults, section))}, section
        assert problem(section, getattr(defaults, section)) is None, section


BAD_VALUES = [
    ("[whisper]\nthreads = -4\n", "setting 'whisper.threads' must be a whole number >= 0, not -4"),
    ("[whisper]\nbeam_size = 0\n", "setting 'whisper.beam_size' must be a whole number >= 1 and <= 8, not 0"),
    ("[whisper]\nbest_of = 9\n", "setting 'whisper.best_of' must be a whole number >= 1 and <= 8, not 9"),
    ("[whisper]\ntemperature = nan\n", "setting 'whisper.temperature' must be a number >= 0 and <= 1, not nan"),
    ("[whisper]\nchunk_seconds = 10\n", "setting 'whisper.chunk_seconds' must be a number >= 30 (or 0: unset), not 10"),
    ('[whisper]\nlanguage = "English"\n',
     "setting 'whisper.language' must be \"auto\" or a language code such as en, de, fr, not \"English\""),
    ('[whisper]\ntimestamps = "words"\n', "setting 'whisper.timestamps' must be one of token, dtw, not \"words\""),
    ('[output]\nformats = ["pdf"]\n',
     "setting 'output.formats' must be a list of one or more of txt, md, json, srt, vtt, rttm, tsv, html, not [\"pdf\"]"),
    ("[output]\nformats = []\n",
     "setting 'output.formats' must be a list of one or more of txt, md, json, srt, vtt, rttm, tsv, html, not []"),
    ('[plan]\nmode = "sideways"\n', "setting 'plan.mode' must be one of auto, parallel, serial, not \"sideways\""),
    ("[plan]\nmode = 3\n", "setting 'plan.mode' must be one of auto, parallel, serial, not 3"),
    ("[voices]\nthreshold = 7\n", "setting 'voices.threshold' must be a number >= 0 and <= 1, not 7"),
    ("[diarization]\nstep = 0\n", "setting 'diarization.step' must be a number > 0 and <= 10, not 0"),
    ('[diarization]\nembedding_device = "tpu"\n',
     "setting 'diarization.embedding_device' must be one of auto, cpu, cuda, migraphx, rocm, coreml, not \"tpu\""),
    ("[merge]\ngap_tolerance = -1\n", "setting 'merge.gap_tolerance' must be a number >= 0, not -1"),
]


@pytest.mark.parametrize("text, message", BAD_VALUES, ids=[t.split("\n")[1].split(" =")[0] for t, _ in BAD_VALUES])
def test_every_value_is_checked_as_the_file_is_read(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        apply_toml(Settings(), path)
    assert str(caught.value) == f"{path}: {message}"


def test_a_binary_config_is_one_line(tmp_path, sample_call):
    path = tmp_path / "config.toml"
    path.write_bytes((sample_call / "sample.wav").read_bytes()[:300])
    with pytest.raises(InputError, match="not a TOML file: it is not UTF-8 text"):
        apply_toml(Settings(), path)


def test_a_bad_config_stops_a_run_before_any_work(sample_call, tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[output]\nformats = ["pdf"]\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [str(sample_call / "sample.wav"), "--config", str(config), "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr == (f"witness: {config}: setting 'output.formats' must be a list of one or more of txt, md, "
                             "json, srt, vtt, rttm, tsv, html, not [\"pdf\"]\n")
    assert not out.exists()


def test_doctor_reports_a_bad_user_config_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "witness").mkdir()
    (tmp_path / "witness" / "config.toml").write_text("[whisper]\nthreads = -4\n")
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 2
    assert result.stderr == (f"witness: {tmp_path / 'witness' / 'config.toml'}: setting 'whisper.threads' must be "
                             "a whole number >= 0, not -4\n")
