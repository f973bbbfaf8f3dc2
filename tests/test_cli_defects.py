"""What a real `python -m witness` process does at the edges a user meets: a cache it cannot
write, a pipe closed early, Ctrl-C, a FIFO as input, a bad model, too many threads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import wave
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.processes import hear_ctrl_c
from witness.run import shm
from witness.cli import main

CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, PR_CAPBSET_DROP = 1, 2, 24


def witness(*args, env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "witness", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600, **kwargs)


def fresh_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a user whose HOME is ``home`` and whose caches and configs are its own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "WITNESS_MODELS_DIR", "WITNESS_OFFLINE"))}
    return {**env, "HOME": str(home), **extra}


def without_permission_override() -> None:
    """For ``preexec_fn`` when root runs the tests: root ignores file permissions through
    two capabilities; with them dropped from the bounding set, the command (still uid 0,
    so it can run the interpreter under /root) meets a read-only folder as any user does."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            os._exit(77)


def test_a_read_only_home_names_the_cache_and_what_to_set(sample_call, tmp_path):
    """A fresh user (no model in the cache) with a read-only HOME: the converted Whisper model
    has nowhere to go. Root runs the command without the capabilities that let it write anyway."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o555)
    root = os.geteuid() == 0
    result = witness(sample_call / "sample.wav", env=fresh_env(home),
                     preexec_fn=without_permission_override if root else None)
    home.chmod(0o755)
    if result.returncode == 77 and root:
        pytest.skip("cannot drop root's permission override (no CAP_SETPCAP) to meet a read-only folder")
    assert result.returncode == 2, result.stderr
    cache = home / ".cache" / "witness" / "models"
    assert result.stderr == (
        f"witness: {cache}: cannot write the model cache (Permission denied: {home / '.cache'}); set XDG_CACHE_HOME "
        "to a writable folder, or pass --models-dir DIR (or WITNESS_MODELS_DIR) with the models in it "
        "(`witness models pull` on a machine that can write puts them in its cache)\n")
    assert result.stdout == "" and list(home.iterdir()) == []


def test_a_cache_under_a_file_is_one_line_with_exit_2(sample_call, tmp_path):
    """XDG_CACHE_HOME under a regular file: no user, root included, can make the cache there."""
    (tmp_path / "file").write_text("not a folder")
    cache = tmp_path / "file" / "cache"
    result = witness(sample_call / "sample.wav", env=fresh_env(tmp_path, XDG_CACHE_HOME=str(cache)))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"witness: {cache / 'witness' / 'models'}: cannot write the model cache (Not a directory")
    assert "set XDG_CACHE_HOME to a writable folder, or pass --models-dir DIR" in result.stderr
    assert result.stderr.count("\n") == 1 and "onnxruntime" not in result.stderr


class Clock:
    """Wall time the test moves on by hand (the bar's arithmetic, not the machine's speed)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_batch_eta_counts_down_and_its_speed_is_the_summarys(monkeypatch, tmp_path):
    """Six files of 1000 bytes = 100 s of audio each, one done every 10 s: between two files
    the ETA falls with the clock (it grew with it), at each file it is the audio left at the
    speed so far, and the last speed shown is the summary's (audio over the same wall time)."""
    import io

    from witness.cli.progress import ProgressView

    files = [str(tmp_path / f"{name}.wav") for name in "abcdef"]
    for f in files:
        Path(f).write_bytes(bytes(1000))
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    clock = Clock()
    bar = ProgressView(files, on=True, clock=clock)

    def shown() -> str:
        bar.file(files[-1], "transcribe", 100, 100)  # a stage's end redraws (the last file is in flight)
        return err.getvalue().replace("\r", "\n").strip().splitlines()[-1]

    etas = []
    for n, f in enumerate(files[:3], start=1):
        clock.now = bar.started + 10 * n
        bar.file_done(f, transcribed=True, audio_seconds=100.0)
        etas.append(shown())
        clock.now += 5  # halfway to the next file
        etas.append(shown())
    assert "3/6 files" in etas[-1] and "5.0 audio min" in etas[-1] and "10.0x real time" in etas[-1]
    assert [line.split("ETA ")[1].split(" ")[0] for line in etas] == [
        "00:50", "00:45", "00:40", "00:35", "00:30", "00:25"]  # 10 s a file, 5 s after each
    for n, f in enumerate(files[3:], start=4):
        clock.now = bar.started + 10 * n
        bar.file_done(f, transcribed=True, audio_seconds=100.0)
    clock.now += 2  # the workers close
    wall = bar.finish()
    bar.close()
    last = err.getvalue().replace("\r", "\n").strip().splitlines()[-1]
    assert wall == pytest.approx(62.0) and "ETA" not in last
    assert f"{600 / wall:.1f}x real time" in last  # the summary's 1 / rtf


def gone(pgid: int) -> bool:
    """Whether no process of group ``pgid`` is left, not even one that ended unreaped."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_reader_that_goes_away_ends_the_command_quietly():
    """`witness models list | head -1`: no BrokenPipeError, the status of a tool SIGPIPE ended."""
    proc = subprocess.Popen([sys.executable, "-m", "witness", "models", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # before it writes a row: every row meets a closed pipe
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 128 + signal.SIGPIPE
    assert stderr.startswith("witness: search order: ") and stderr.count("\n") == 1, stderr


@pytest.mark.parametrize("stop, to_group, code", [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143)],
                         ids=["ctrl-c", "sigterm"])
def test_a_stopped_run_says_so_exits_128_plus_the_signal_and_leaves_nothing(sample_call, tmp_path, stop, to_group,
                                                                            code):
    """Ctrl-C (to the terminal's whole process group) or SIGTERM (to witness) while Whisper works
    on the call: one line, no traceback, no decoded audio, no output, no process left."""
    audio, out = tmp_path / "shm", tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "witness", "-v", sample_call / "sample.wav", "--no-diarize",
                             "-o", out], env={**os.environ, shm.FOLDER_ENV: str(audio)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=hear_ctrl_c)
    said = []
    for line in proc.stderr:  # the worker says this as it starts on the call
        said.append(line)
        if "DTW timestamps on" in line:
            break
    assert proc.poll() is None, "".join(said)
    (os.killpg if to_group else os.kill)(proc.pid, stop)
    stdout, rest = proc.communicate(timeout=120)
    stderr = "".join(said) + rest
    assert proc.returncode == code, stderr
    assert stderr.endswith("witness: interrupted\n") and "Traceback" not in stderr and "Aborted" not in stderr
    assert stdout == "" and list(audio.iterdir()) == [] and list(out.iterdir()) == []
    assert gone(proc.pid), "a process of the run outlived it"


def test_the_run_reaps_every_process_it_started(sample_call, tmp_path):
    """A harness that waits on the process group finds nothing once witness has exited (the
    resource tracker of multiprocessing's spawn start method ended after it, unreaped)."""
    clip = tmp_path / "clip.wav"
    with wave.open(str(sample_call / "sample.wav")) as src, wave.open(str(clip), "wb") as dst:
        dst.setparams(src.getparams())
        dst.writeframes(src.readframes(src.getframerate() * 12))
    proc = subprocess.Popen([sys.executable, "-m", "witness", clip, "--no-diarize"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    assert "know you were there" in stdout
    assert gone(proc.pid), "a process of the run outlived it"


def test_a_named_pipe_is_read_as_a_stream(sample_call, tmp_path):
    """`witness <(cat call.wav)` or a FIFO was "is empty" (its size is 0): read like `-`, named as given."""
    fifo = tmp_path / "call.wav"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", 'cat "$0" > "$1"', sample_call / "sample.wav", fifo])
    try:
        result = witness(fifo, "--no-diarize", "-o", tmp_path / "out", "--format", "json,txt")
    finally:
        writer.kill()
        writer.wait()
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    text = (tmp_path / "out" / "call.txt").read_text()
    assert "know you were there" in text
    assert f'"path": "{fifo}"' in (tmp_path / "out" / "call.json").read_text()


def test_an_unknown_model_is_a_usage_error(sample_call):
    result = CliRunner().invoke(main, [str(sample_call / "sample.wav"), "--model", "huge"])
    assert result.exit_code == 2
    assert result.stderr.startswith("witness: unknown Whisper model 'huge'; known names: tiny, ")


def test_a_truncated_model_says_what_to_do(sample_call, tmp_path):
    from witness.models.whisper_models import resolve_model

    cut = tmp_path / "ggml-cut.bin"
    with open(resolve_model("tiny.en").path, "rb") as src:  # the model a user has (converted once)
        cut.write_bytes(src.read(1_000_000))
    result = CliRunner().invoke(main, [str(sample_call / "sample.wav"), "--model", str(cut)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"witness: {cut}: not a complete ggml Whisper model (truncated?): file ends inside the data of tensor "
        "'encoder.positional_embedding'; get a whole copy again (download or convert it), or choose another --model\n")


@pytest.mark.parametrize("command", [["models", "list"], ["models", "pull"], ["models", "path"], ["models", "import"],
                                     ["voices", "list"], ["voices", "remove"]], ids=" ".join)
def test_every_subcommand_help_has_examples(command):
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0
    examples = [line.strip() for line in result.stdout.split("Examples:\n")[1].splitlines() if line.strip()]
    assert examples and any(line.startswith(f"witness {' '.join(command)}") for line in examples)
