"""A file with no speech (silence, hold music) is not an error, but the user is told: one
line on stderr from `witness FILE`, and `words: 0` with a warning in the batch manifest."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from scripts.asr_cases import music
from tests.audio_factory import encode
from witness.cli import main
from witness.run.manifest import MANIFEST_NAME, Manifest

NOTICE = "no speech found (0 words): the audio holds only silence, music or noise"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_no_speech_is_said_on_stderr_and_in_the_manifest(tmp_path):
    calls = tmp_path / "calls"
    calls.mkdir()
    audio = np.concatenate([np.zeros(16000 * 3, np.float32), music(8.0)])
    encode(audio[None, :], 16000, calls / "hold.wav", "pcm_s16le", "wav", 16000)

    single = run("transcribe", calls / "hold.wav", "--no-diarize")
    assert single.exit_code == 0, single.stderr
    assert single.stderr.strip().splitlines()[-1] == f"witness: {calls / 'hold.wav'}: {NOTICE}"

    batch = run("batch", calls, "-o", tmp_path / "out", "--no-diarize", "-q")
    assert batch.exit_code == 0, batch.stderr
    with Manifest(tmp_path / "out" / MANIFEST_NAME) as manifest:
        (row,) = manifest.rows()
    assert (row.status, row.words, row.warning) == ("ok", 0, NOTICE)
