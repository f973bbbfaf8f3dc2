"""The command group itself: help, the default command, and importing nothing heavy."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from witness.cli import main


def test_help_lists_every_command():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("transcribe", "batch", "quote", "eval", "diarize", "models", "doctor", "warmup"):
        assert command in result.stdout


def test_help_loads_neither_engine_nor_numpy():
    code = ("import sys; from click.testing import CliRunner; from witness.cli import main; "
            "CliRunner().invoke(main, ['--help']); CliRunner().invoke(main, ['transcribe', '--help']); CliRunner().invoke(main, ['batch', '--help']); "
            "print([m for m in ('onnxruntime', '_pywhispercpp', 'av', 'scipy', 'numpy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_missing_file_is_one_line_with_exit_2(tmp_path):
    result = CliRunner().invoke(main, [str(tmp_path / "nope.wav")])
    assert result.exit_code == 2
    assert result.stderr == f"witness: {tmp_path / 'nope.wav'}: no such file\n"
