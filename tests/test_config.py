"""Settings: config/default.toml documents exactly the shipped defaults; overrides are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from witness.config import Settings, apply_toml, load_settings, override
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


@pytest.mark.parametrize(
    "table, message",
    [
        ({"merge": {"gap_tolerence": 1}}, "unknown setting 'merge.gap_tolerence'"),
        ({"merge": {"repair": "yes"}}, "must be bool"),
        ({"merge": 3}, "must be a table"),
    ],
)
def test_bad_settings_name_the_key(table, message):
    with pytest.raises(InputError, match=message):
        override(Settings(), table, "cfg.toml")
