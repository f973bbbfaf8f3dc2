"""What a careless or unlucky user feeds Witness (issue 13), on real audio and real models.

The matrix: each row is the input, the exit code, the one line on stderr, and what exists
in the output folder afterwards. Rows run the merge-only path (``--words``/``--turns``: the
real decoder and writers, no engines) unless the engines are what is tested; the few real
engine runs use a 4-second cut of the sample call with ``--no-diarize`` where they can.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import srt
from click.testing import CliRunner

from tests.audio_factory import encode
from tests.processes import group_alive
from tests.stm_transcript import spread_words
from witness.run import shm
from witness.audio import load_audio
from witness.cli import main
from witness.config import AsrSettings
from witness.evaluate.stm import read_stm
from witness.run.manifest import MANIFEST_NAME, Manifest

REPO = Path(__file__).resolve().parents[1]
RATE = 16000


@dataclass
class Env:
    """The real inputs of a row: the sample call, its words and turns, a scratch folder and
    the output folder."""

    tmp: Path
    sample: Path
    words: Path
    turns: Path

    @property
    def out(self) -> Path:
        return self.tmp / "out"

    def merge_only(self, *audio) -> list:
        return [*audio, "--words", self.words, "--turns", self.turns]

    def wav(self, name: str, samples: np.ndarray) -> Path:
        return encode(samples[None, :].astype(np.float32), RATE, self.tmp / name, "pcm_f32le", "wav", RATE)

    def copy(self, name: str) -> Path:
        return Path(shutil.copy(self.sample, self.tmp / name))


@pytest.fixture
def env(sample_call, tmp_path) -> Env:
    words = spread_words(read_stm(sample_call / "sample.stm"))
    path = tmp_path / "words.json"
    path.write_text(json.dumps([{"start": w.start, "end": w.end, "text": w.text} for w in words]))
    return Env(tmp_path, sample_call / "sample.wav", path, sample_call / "sample.rttm")


def run(*args, env: dict | None = None, input: bytes | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, input=input)


@dataclass(frozen=True)
class Row:
    """``args(env)``: the command line; ``code``: its exit code; ``line``: a regex the
    single stderr line must match in full (``witness: `` and all); ``files``: what the
    output folder holds afterwards (None: it must not exist)."""

    args: Callable[[Env], list]
    code: int
    line: str
    files: frozenset[str] | None = None
    environ: dict = field(default_factory=dict)
    patch: Callable[[Env, pytest.MonkeyPatch], None] | None = None  # a fake probe (free space) for the row


def _huge(e: Env, value: float) -> Path:
    samples = load_audio(e.sample).samples.copy()
    samples[80000] = value
    return e.wav("loud.wav", samples)


def _read_only(e: Env) -> list:
    e.out.mkdir()
    e.out.chmod(0o555)
    return [*e.merge_only(e.sample), "-o", e.out]


def _taken(e: Env) -> list:
    e.out.mkdir()
    (e.out / "sample.txt").write_text("precious")
    return [*e.merge_only(e.sample), "-o", e.out]


def _long_name(e: Env, length: int) -> list:
    name = "x" * (length - len(".wav")) + ".wav"
    return [*e.merge_only(e.copy(name)), "-o", e.out, "--format", "json"]


_IS_INPUT = (r"witness: \S+/out/{out}: is an input \({input}\): an output never replaces an input, whatever "
             r"--overwrite or --force say; choose another -o folder")


NAME = 250  # bytes: an input name this long gets "x…x.json" (251) and a temp name of ~265
ROWS = {
    # --- what already worked, and must keep working
    "missing file": Row(lambda e: [*e.merge_only(e.tmp / "nope.wav"), "-o", e.out], 2,
                        r"witness: \S+/nope\.wav: no such file", frozenset()),
    "empty file": Row(lambda e: e.merge_only(e.tmp.joinpath("empty.wav").touch() or e.tmp / "empty.wav"), 2,
                      r"witness: \S+/empty\.wav: is empty \(0 bytes\)"),
    "truncated wav": Row(lambda e: e.merge_only(_truncated(e)), 2,
                         r"witness: \S+/cut\.wav: is truncated: the header says 30\.0 s but only 9\.4 s decode"),
    "text named .wav": Row(lambda e: e.merge_only(_text(e)), 2, r"witness: \S+/notes\.wav: not an audio file \(.*\)"),
    "NaN samples": Row(lambda e: [*e.merge_only(_nan(e)), "-o", e.out], 0,
                       r"witness: \S+/nan\.wav: 3 NaN/Inf samples replaced by silence",
                       frozenset({"nan.txt", "nan.json"})),
    "unknown format": Row(lambda e: [*e.merge_only(e.sample), "--format", "doc"], 2,
                          r"witness: Invalid value for '-f' / '--format': unknown format 'doc'; choose from .*"),
    # --- 1: one huge sample
    "a 1e30 sample": Row(lambda e: [*e.merge_only(_huge(e, 1e30)), "-o", e.out], 0,
                         r"witness: \S+/loud\.wav: 1 samples outside \[-1, 1\] clipped to it",
                         frozenset({"loud.txt", "loud.json"})),
    # --- 2: output problems, found before the work
    "read-only -o": Row(_read_only, 2, r"witness: \S+/out: cannot write outputs here \(.*\)", frozenset()),
    "-o under a file": Row(lambda e: [*e.merge_only(e.sample), "-o", e.copy("call.wav") / "x"], 2,
                           r"witness: \S+/call\.wav/x: cannot be an output folder: it, or a folder above it, is a file"),
    "a 250-byte name": Row(lambda e: _long_name(e, NAME), 0, "", frozenset({"x" * (NAME - 4) + ".json"})),
    "an output name over the limit": Row(
        lambda e: _long_name(e, 255), 2,
        r"witness: \S+/out/x+\.json: file name too long \(256 bytes; this file system allows 255\)", frozenset()),
    "an output there already": Row(_taken, 2, r"witness: \S+/sample\.txt: already exists \(pass --overwrite to replace it\)",
                                   frozenset({"sample.txt"})),
    # --- 4: same stem, one folder
    "same stem, two extensions": Row(lambda e: [*e.merge_only(e.copy("call.wav"), _flac(e)), "-o", e.out], 0, "",
                                     frozenset({"call.wav.txt", "call.wav.json", "call.flac.txt", "call.flac.json"})),
    "the same name twice": Row(lambda e: [*e.merge_only(e.sample, e.sample), "-o", e.out], 2,
                               r"witness: sample\.wav: two inputs would write the same outputs \(sample\.wav\.\*\); rename one",
                               frozenset()),
    # --- 5: speaker counts
    "--num-speakers above --max-speakers": Row(
        lambda e: [*e.merge_only(e.sample), "--num-speakers", "2", "--max-speakers", "1"], 2,
        r"witness: --num-speakers 2 exceeds --max-speakers 1"),
    "--num-speakers below --min-speakers": Row(
        lambda e: [*e.merge_only(e.sample), "--num-speakers", "2", "--min-speakers", "3"], 2,
        r"witness: --num-speakers 2 is below --min-speakers 3"),
    # --- 6: explicit choices
    "--device cuda without CUDA": Row(lambda e: [*e.merge_only(e.sample), "--device", "cuda"], 2,
                                      r"witness: --device cuda: this onnxruntime build has no CUDAExecutionProvider "
                                      r"\(it offers .*\); see the README .*, or use --device auto"),
    "--device migraphx without MIGraphX": Row(lambda e: [*e.merge_only(e.sample), "--device", "migraphx"], 2,
                                              r"witness: --device migraphx: this onnxruntime build has no "
                                              r"MIGraphXExecutionProvider .*"),
    "--models-dir that does not exist": Row(lambda e: [*e.merge_only(e.sample), "--models-dir", e.tmp / "none"], 2,
                                            r"witness: --models-dir \S+/none: no such folder"),
    "WITNESS_MODELS_DIR that does not exist": Row(lambda e: e.merge_only(e.sample), 2,
                                                  r"witness: WITNESS_MODELS_DIR /nonexistent/models: no such folder",
                                                  environ={"WITNESS_MODELS_DIR": "/nonexistent/models"}),
    "diarize --models-dir that does not exist": Row(lambda e: ["diarize", e.sample, "--models-dir", e.tmp / "none"], 2,
                                                    r"witness: --models-dir \S+/none: no such folder"),
    # issue 23, 6: every command that takes a models folder, either way
    "batch --models-dir that does not exist": Row(lambda e: ["batch", e.sample, "-o", e.out, "--models-dir", e.tmp / "none"],
                                                  2, r"witness: --models-dir \S+/none: no such folder", None),
    "doctor with WITNESS_MODELS_DIR that does not exist": Row(
        lambda e: ["doctor"], 2, r"witness: WITNESS_MODELS_DIR /nonexistent/models: no such folder",
        environ={"WITNESS_MODELS_DIR": "/nonexistent/models"}),
    "enroll --models-dir that does not exist": Row(lambda e: ["enroll", "Diane", e.sample, "--models-dir", e.tmp / "none"],
                                                   2, r"witness: --models-dir \S+/none: no such folder"),
    "models path --models-dir that does not exist": Row(
        lambda e: ["models", "path", "tiny.en", "--models-dir", e.tmp / "none"], 2,
        r"witness: --models-dir \S+/none: no such folder"),
    "a config's [models] dir that does not exist": Row(
        lambda e: [*e.merge_only(e.sample), "--config", _config(e, '[models]\ndir = "/nonexistent/models"\n')], 2,
        r"witness: the config's \[models\] dir /nonexistent/models: no such folder"),
    "models list with WITNESS_MODELS_DIR that does not exist": Row(
        lambda e: ["models", "list"], 2, r"witness: WITNESS_MODELS_DIR /nonexistent/models: no such folder",
        environ={"WITNESS_MODELS_DIR": "/nonexistent/models"}),
    "--speaker-names for nobody": Row(lambda e: [*e.merge_only(e.sample), "-o", e.out, "--speaker-names",
                                                 "SPEAKER_05=Bob"], 0,
                                      r"witness: \S+/sample\.wav: --speaker-names: no speaker SPEAKER_05 here "
                                      r"\(speakers: speaker90, speaker91\)", frozenset({"sample.txt", "sample.json"})),
    # --- 8: options where users put them
    "-q after the file": Row(lambda e: [*e.merge_only(_nan(e)), "-o", e.out, "-q", "--format", "txt"], 0,
                             r"witness: \S+/nan\.wav: 3 NaN/Inf samples replaced by silence", frozenset({"nan.txt"})),
    # --- issue 23, 2: shared memory too small for the decoded audio (a 64 MB Docker /dev/shm)
    "shared memory without room": Row(lambda e: [*e.merge_only(e.sample), "-o", e.out], 0, "",
                                      frozenset({"sample.txt", "sample.json"}), patch=lambda e, m: _room(e, m, 1, None)),
    "no room for the decoded audio anywhere": Row(
        lambda e: [*e.merge_only(e.sample), "-o", e.out], 1,
        r"witness: \S+/sample\.wav: no room for its decoded audio \(2\.0 MB needed\): \S+/shm has 1\.0 MB free, "
        r"\S+/disk has 1\.0 MB free; free some, or set WITNESS_SHARED_AUDIO_DIR to a folder with room", frozenset(),
        patch=lambda e, m: _room(e, m, 1, 1)),
    # --- issue 23, 3: an output that is an input, whatever the flags
    "an output that is the input (--overwrite)": Row(
        lambda e: [*e.merge_only(_in_out(e, "call.txt")), "-o", e.out, "--format", "txt", "--overwrite"], 2,
        _IS_INPUT.format(out="call.txt", input=r"\S+/out/call\.txt"), frozenset({"call.txt"})),
    "an output hard-linked to the input": Row(
        lambda e: [*e.merge_only(_in_out(e, "call.txt", os.link)), "-o", e.out, "--format", "txt", "--overwrite"], 2,
        _IS_INPUT.format(out="call.txt", input=r"\S+/call\.wav"), frozenset({"call.txt"})),
    "an output that is a symlink to the input": Row(
        lambda e: [*e.merge_only(_in_out(e, "call.txt", os.symlink)), "-o", e.out, "--format", "txt", "--overwrite"],
        2, _IS_INPUT.format(out="call.txt", input=r"\S+/call\.wav"), frozenset({"call.txt"})),
    "--words that is an output (--overwrite)": Row(
        lambda e: [e.sample, "--words", _in_out(e, "sample.json", source=e.words), "--turns", e.turns, "-o", e.out,
                   "--format", "json", "--overwrite"], 2,
        _IS_INPUT.format(out="sample.json", input=r"\S+/out/sample\.json"), frozenset({"sample.json"})),
    "batch: an output that is the input (--force)": Row(
        lambda e: ["batch", _in_out(e, "call.txt"), "-o", e.out, "--format", "txt", "--force"],
        2, _IS_INPUT.format(out="call.txt", input=r"\S+/out/call\.txt"), frozenset({"call.txt"})),
}


def _in_out(e: Env, name: str, link: Callable | None = None, source: Path | None = None) -> Path:
    """An input that is also the output ``e.out/name``: that file, a copy of ``source`` (the
    sample call); or with ``link``, a copy of the call outside (call.wav) that
    ``e.out/name`` links to (``os.link``, ``os.symlink``)."""
    e.out.mkdir()
    if link is None:
        return Path(shutil.copy(source or e.sample, e.out / name))
    link(e.copy("call.wav"), e.out / name)
    return e.tmp / "call.wav"


def _config(e: Env, text: str) -> Path:
    path = e.tmp / "witness.toml"
    path.write_text(text)
    return path


def _room(e: Env, monkeypatch, shared_mb: float | None, disk_mb: float | None) -> None:
    """Decoded audio goes to ``e.tmp/shm`` (shared memory) or ``e.tmp/disk`` (the temp
    folder), which the free-space probe says hold ``shared_mb`` and ``disk_mb`` MB (None:
    what they really hold); the files are real."""
    monkeypatch.setenv(shm.FOLDER_ENV, str(e.tmp / "shm"))
    (e.tmp / "disk").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(e.tmp / "disk"))
    real = shm.free_bytes
    faked = {e.tmp / "shm": shared_mb, e.tmp / "disk": disk_mb}
    monkeypatch.setattr(shm, "free_bytes", lambda folder: real(folder) if faked.get(folder) is None
                        else int(faked[folder] * shm.MB))


def _truncated(e: Env) -> Path:
    path = e.tmp / "cut.wav"
    path.write_bytes(e.sample.read_bytes()[:300_000])
    return path


def _text(e: Env) -> Path:
    path = e.tmp / "notes.wav"
    path.write_text("meeting notes, not audio\n" * 40)
    return path


def _nan(e: Env) -> Path:
    samples = load_audio(e.sample).samples.copy()
    samples[[100, 200, 300]] = [np.nan, np.inf, -np.inf]
    return e.wav("nan.wav", samples)


def _flac(e: Env) -> Path:
    return encode(load_audio(e.sample).samples[None, :], RATE, e.tmp / "call.flac", "flac", "flac", RATE)


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_matrix(row: Row, env: Env, monkeypatch):
    _refuse_read_only_folders_as_root(monkeypatch)
    if row.patch is not None:
        row.patch(env, monkeypatch)
    result = run(*row.args(env), env=row.environ)
    assert result.exit_code == row.code, result.stderr
    lines = result.stderr.splitlines()
    if row.line:
        assert len(lines) == 1 and re.fullmatch(row.line, lines[0]), result.stderr
    else:
        assert lines == []
    if row.files is None:
        return
    found = {p.name for p in env.out.iterdir()} if env.out.exists() else set()
    assert found == row.files  # nothing half-written, no temp or probe files left


def _refuse_read_only_folders_as_root(monkeypatch) -> None:
    """Root writes into a 0555 folder anyway: there, refuse as a read-only file system would."""
    if os.geteuid() != 0:
        return
    import tempfile

    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and not os.stat(dir).st_mode & 0o222:
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def test_a_full_disk_leaves_no_output_and_says_so(env: Env, monkeypatch):
    real_write = Path.write_text

    def full_disk(self, data, *args, **kwargs):
        if ".json." in self.name:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    result = run(*env.merge_only(env.sample), "-o", env.out)
    assert result.exit_code == 1
    assert result.stderr == f"witness: {env.out}: cannot write outputs (No space left on device); none were written\n"
    assert list(env.out.iterdir()) == []


def test_overwrite_never_replaces_one_input_with_another(env: Env):
    first = run(*env.merge_only(env.copy("call.wav"), _flac(env)), "-o", env.out, "--overwrite", "--format", "json")
    assert first.exit_code == 0, first.stderr
    paths = [json.loads((env.out / name).read_text())["audio"]["path"] for name in ("call.wav.json", "call.flac.json")]
    assert paths == [str(env.tmp / "call.wav"), str(env.tmp / "call.flac")]


def test_standard_input_is_audio(env: Env):
    result = run(*env.merge_only("-"), "-o", env.out, "--format", "json", input=env.sample.read_bytes())
    assert result.exit_code == 0, result.stderr
    transcript = json.loads((env.out / "stdin.json").read_text())
    assert transcript["audio"]["path"] == "-" and transcript["utterances"]
    bad = run(*env.merge_only("-"), input=b"not audio at all\n" * 50)
    assert bad.exit_code == 2 and re.fullmatch(r"witness: -: not an audio file \(.*\)\n", bad.stderr)


def test_outputs_escape_names_wrap_cues_and_round_times(env: Env):
    names = "speaker90=Diane Smith,speaker91=Sheila <b>O'Neil</b> & AT&T"
    result = run(*env.merge_only(env.sample), "-o", env.out, "--format", "rttm,vtt,srt,json", "--speaker-names", names)
    assert result.exit_code == 0, result.stderr
    rttm = (env.out / "sample.rttm").read_text().splitlines()
    assert {len(line.split()) for line in rttm} == {10} and " Diane_Smith " in rttm[0]
    vtt = (env.out / "sample.vtt").read_text()
    assert "<v Sheila &lt;b&gt;O'Neil&lt;/b&gt; &amp; AT&amp;T>" in vtt and "<v Sheila <b>" not in vtt
    assert max(len(block.splitlines()) for block in vtt.split("\n\n")[1:]) == 3  # timing + 2 lines
    subtitles = list(srt.parse((env.out / "sample.srt").read_text()))
    assert max(len(s.content.splitlines()) for s in subtitles) == 2
    times = re.findall(r'"(?:start|end|duration)": (-?[0-9.e-]+)', (env.out / "sample.json").read_text())
    assert times and all(len(t.partition(".")[2]) <= 3 for t in times)


def test_quote_lists_the_speakers_when_none_matches(env: Env):
    assert run(*env.merge_only(env.sample), "-o", env.out, "--format", "json").exit_code == 0
    result = run("quote", env.out / "sample.json", "--speaker", "Sheila")
    assert result.exit_code == 1
    assert result.stderr == (f"witness: {env.out / 'sample.json'}: nothing matches: no speaker 'Sheila' "
                             "(speakers: speaker90, speaker91)\n")


def test_quote_of_audio_suggests_a_command_that_writes_the_json(env: Env):
    call = env.copy("call.wav")
    result = run("quote", call, "-o", env.out, "75")
    assert result.exit_code == 2
    suggested = re.search(r"make it with `witness (.*)`", result.stderr).group(1).split()
    assert suggested == [str(call), "-o", str(env.out), "--format", "json"]
    made = run(*suggested, "--words", env.words, "--turns", env.turns)  # what it suggests, merge-only here
    assert made.exit_code == 0 and run("quote", call, "-o", env.out, "15").exit_code == 0


def test_models_path_says_offline_only_when_offline(env: Env, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("WITNESS_OFFLINE", raising=False)
    online = run("models", "path", "medium.en")
    assert online.exit_code == 1 and "offline" not in online.stderr.replace(str(tmp_path), "")
    assert online.stderr.startswith("witness: model medium.en is not here: put ggml-medium.en.bin")
    offline = run("models", "path", "medium.en", env={"WITNESS_OFFLINE": "1"})
    assert "is not here and witness is offline" in offline.stderr


def test_a_damaged_model_is_one_line(env: Env):
    tiny = run("models", "path", "tiny.en")
    assert tiny.exit_code == 0, tiny.stderr
    damaged = env.tmp / "ggml-tiny-cut.bin"
    damaged.write_bytes(Path(tiny.stdout.strip()).read_bytes()[:1_000_000])  # a download cut short
    result = run(env.sample, "--model", damaged, "--no-diarize")
    assert result.exit_code == 1
    assert result.stderr == (f"witness: {damaged}: not a complete ggml Whisper model (truncated?): file ends "
                             "inside the data of tensor 'encoder.positional_embedding'; get a whole copy again "
                             "(download or convert it), or choose another --model\n")


# --- batch -------------------------------------------------------------------------------


def test_a_busy_batch_folder_is_a_usage_error(env: Env):
    with Manifest(env.out / MANIFEST_NAME):
        result = run("batch", env.sample, "-o", env.out)
    assert result.exit_code == 2
    assert result.stderr == (f"witness: {env.out}: another witness batch is writing to this folder; "
                             "wait for it to finish\n")


def test_a_batch_into_a_file_is_a_usage_error(env: Env):
    result = run("batch", env.sample, "-o", env.sample / "out")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"witness: {env.sample / 'out'}: cannot be an output folder")


def test_a_damaged_manifest_line_is_warned_about_once(env: Env):
    env.out.mkdir()
    (env.out / MANIFEST_NAME).write_text('{"input": "/x/a.wav", "status"\n')
    (env.tmp / "empty.wav").touch()
    result = run("batch", env.tmp / "empty.wav", "-o", env.out, "-q")  # fails before any engine starts
    assert result.exit_code == 2
    assert result.stderr.count("line 1 ignored") == 1


# --- real engine runs ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def clip(tmp_path_factory, sample_call) -> Path:
    """4 s of the sample call (Diane's "Oh, hello. I didn't know you were there.")."""
    samples = load_audio(sample_call / "sample.wav").samples[6 * RATE: 10 * RATE]
    return encode(samples[None, :].copy(), RATE, tmp_path_factory.mktemp("clip") / "clip.wav", "pcm_f32le", "wav", RATE)


def witness(*args, environ: dict | None = None) -> subprocess.CompletedProcess:
    """A real ``witness`` process (its workers' stderr is its stderr)."""
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(environ or {})}
    return subprocess.run([sys.executable, "-m", "witness", *map(str, args)], env=environ, capture_output=True,
                          text=True, timeout=600)


def test_a_1e30_sample_is_clipped_and_whisper_still_hears_the_call(clip, tmp_path):
    samples = load_audio(clip).samples.copy()
    samples[RATE] = 1e30
    loud = encode(samples[None, :], RATE, tmp_path / "loud.wav", "pcm_f32le", "wav", RATE)
    result = witness(loud, "--no-diarize", "--language", "de", "-q")  # -q after the file
    assert result.returncode == 0, result.stderr
    assert "know you were there" in result.stdout
    assert result.stderr.splitlines() == [
        f"witness: {loud}: 1 samples outside [-1, 1] clipped to it",
        f"witness: {loud}: model {AsrSettings().model} is English-only: language 'de' ignored",  # by the worker
    ]


def test_more_speakers_asked_for_than_found_is_said_naming_the_file(clip, default_models):
    result = witness(clip, "--num-speakers", "20", "-q")
    assert result.returncode == 0, result.stderr
    speakers = len({line.split("]")[1].split(":")[0] for line in result.stdout.splitlines()})
    assert result.stderr == (f"witness: {clip}: asked for 20 speakers, but only {speakers} could be told apart "
                             "(too little speech from the others)\n")


def test_a_batch_reports_files_that_fail_at_once_before_the_files_ahead_of_them(clip, tmp_path):
    (tmp_path / "empty.wav").touch()
    (tmp_path / "cut.wav").write_bytes(clip.read_bytes()[:100_000])  # a WAV shorter than its header says
    out = tmp_path / "out"
    result = run("batch", clip, tmp_path / "cut.wav", tmp_path / "empty.wav", "-o", out, "--no-diarize",
                 "--jobs", "1", "-q")
    assert result.exit_code == 2
    with Manifest(out / MANIFEST_NAME) as manifest:
        assert [(Path(r.input).name, r.status) for r in manifest.rows()] == [
            ("cut.wav", "failed"), ("empty.wav", "failed"), ("clip.wav", "ok")]
    assert result.stderr.splitlines() == [
        f"witness: {tmp_path / 'cut.wav'}: is truncated: the header says 4.0 s but only 1.6 s decode",
        f"witness: {tmp_path / 'empty.wav'}: is empty (0 bytes)"]


def _at_work(pid: int, audio: Path) -> bool:
    """Whether a worker of ``pid`` has mapped the decoded audio in ``audio``: past its start-up,
    working on the file (whose outputs the parent writes only after the worker is done)."""
    import psutil

    try:
        return any(m.path.startswith(str(audio)) for child in psutil.Process(pid).children()
                   for m in child.memory_maps())
    except psutil.Error:  # the run, or that child, already gone
        return False


@pytest.mark.parametrize("command", [[], ["batch"]], ids=["witness FILE", "witness batch"])
def test_a_killed_run_leaves_no_audio_and_no_partial_output(command, clip, tmp_path):
    """SIGKILL of the main process alone (its workers must notice), then the next run."""
    audio, out = tmp_path / "shm", tmp_path / "out"
    environ = {**os.environ, "PYTHONPATH": str(REPO), shm.FOLDER_ENV: str(audio)}
    args = [*command, str(clip), "--no-diarize", "-o", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "witness", *args], env=environ, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not _at_work(proc.pid, audio):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.01)
    proc.kill()  # Whisper is at work on the clip: its words cannot be back and written yet
    stderr = proc.communicate(timeout=60)[1]
    assert not group_alive(proc.pid, 60.0), "a worker outlived its killed parent"
    assert stderr == ""  # no traceback from a worker, no leaked-semaphore warning
    assert [p.name for p in out.iterdir() if p.name != MANIFEST_NAME and not p.name.startswith(".")] == []

    again = run(*args, env={shm.FOLDER_ENV: str(audio)})
    assert again.exit_code == 0, again.stderr
    assert list(audio.iterdir()) == []  # what the killed run left was reaped
    assert sorted(p.name for p in out.iterdir() if p.suffix != ".jsonl" and not p.name.startswith(".")) == [
        "clip.json", "clip.txt"]



# --- issue 23 ------------------------------------------------------------------------------


class _FillsUp:
    """An open file in a folder that has ``room`` bytes left: a write past them fails as a
    full tmpfs's does."""

    def __init__(self, file, room: int):
        self.file, self.room = file, room

    def write(self, data) -> int:
        self.room -= len(data)
        if self.room < 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.file.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()


def test_decoded_audio_shared_memory_cannot_hold_goes_to_disk_and_the_transcript_is_the_same(env: Env, monkeypatch):
    """The free-space probe says shared memory has 1 MB (the call needs 2): the audio goes to
    the temp folder, -v says so, and the outputs are those of a run with room. Then a
    shared memory that the probe says has room but fills up while the audio is written."""
    roomy = run(*env.merge_only(env.sample), "-o", env.tmp / "roomy", "--format", "txt,json")
    assert roomy.exit_code == 0, roomy.stderr
    _room(env, monkeypatch, 1, None)
    shared, disk = env.tmp / "shm", env.tmp / "disk"
    moved = run("-v", *env.merge_only(env.sample), "-o", env.out, "--format", "txt,json")
    assert moved.exit_code == 0, moved.stderr
    assert (f"witness: {env.sample}: {shared} has no room for its decoded audio (2.0 MB needed, 1.0 MB free): "
            f"using {disk}") in moved.stderr.splitlines()
    assert (env.out / "sample.txt").read_text() == (env.tmp / "roomy" / "sample.txt").read_text()
    utterances = [json.loads((folder / "sample.json").read_text())["utterances"] for folder in (env.out, env.tmp / "roomy")]
    assert utterances[0] == utterances[1]
    assert list(shared.glob("*.f32")) == list(disk.glob("*.f32")) == []

    import witness.audio

    monkeypatch.setattr(shm, "free_bytes", lambda folder: 10**9)  # room, says the probe
    monkeypatch.setattr(witness.audio, "open", lambda path, mode="r": _FillsUp(open(path, mode), 10**6)
                        if Path(path).parent == shared else open(path, mode), raising=False)
    full = run("-v", *env.merge_only(env.sample), "-o", env.tmp / "full", "--format", "txt")
    assert full.exit_code == 0, full.stderr
    assert f"witness: {env.sample}: {shared} filled up while its decoded audio was written" in full.stderr
    assert (env.tmp / "full" / "sample.txt").read_text() == (env.tmp / "roomy" / "sample.txt").read_text()
    assert list(shared.glob("*.f32")) == list(disk.glob("*.f32")) == []


def test_a_batch_puts_the_audio_shared_memory_cannot_hold_on_disk(clip, tmp_path, monkeypatch):
    """Shared memory that holds one decoded file of the two in flight, as a 64 MB /dev/shm
    holds one of two 10-minute calls (the probe counts what is in the folder against a
    limit; the files are real): the second goes to disk, and both are done."""
    shared, disk, calls = tmp_path / "shm", tmp_path / "disk", tmp_path / "calls"
    for folder in (disk, calls):
        folder.mkdir()
    monkeypatch.setenv(shm.FOLDER_ENV, str(shared))
    monkeypatch.setattr(tempfile, "tempdir", str(disk))
    limit = 400_000  # bytes: one 4 s clip decoded (256 kB; 323 kB with the estimate's margin), not two
    real = shm.free_bytes
    monkeypatch.setattr(shm, "free_bytes", lambda folder: limit - sum(p.stat().st_size for p in shared.glob("*.f32"))
                        if folder == shared else real(folder))
    for name in ("a.wav", "b.wav"):
        shutil.copy(clip, calls / name)
    result = run("-v", "batch", calls, "-o", tmp_path / "out", "--no-diarize")
    assert result.exit_code == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if "no room" in line] == [
        f"witness: {calls / 'b.wav'}: {shared} has no room for its decoded audio (0.3 MB needed, 0.1 MB free): "
        f"using {disk}"]
    with Manifest(tmp_path / "out" / MANIFEST_NAME) as manifest:
        assert [(Path(r.input).name, r.status) for r in manifest.rows()] == [("a.wav", "ok"), ("b.wav", "ok")]
    assert list(shared.glob("*.f32")) == list(disk.glob("*.f32")) == []


def _enroll_diane(sample_call) -> None:
    result = run("enroll", "Diane", sample_call / "sample.wav", "--speaker", "SPEAKER_00")
    assert result.exit_code == 0, result.stderr


def test_a_very_short_file_with_a_voice_enrolled_is_transcribed_and_does_not_stop_a_batch(
        clip, sample_call, default_models, tmp_path):
    """0.3 s (and 0.1 s) of speech: too short for an embedding, so its speaker has no print
    to score against the voice (it scored NaN, and the batch stopped at that file)."""
    _enroll_diane(sample_call)
    speech = load_audio(sample_call / "sample.wav").samples[10 * RATE:]
    short = encode(speech[None, : int(0.3 * RATE)].copy(), RATE, tmp_path / "short.wav", "pcm_f32le", "wav", RATE)
    single = run(short, "-q")
    assert single.exit_code == 0, single.stderr
    calls = tmp_path / "calls"
    calls.mkdir()
    shutil.copy(clip, calls / "a.wav")
    encode(speech[None, : int(0.1 * RATE)].copy(), RATE, calls / "b.wav", "pcm_f32le", "wav", RATE)
    shutil.copy(clip, calls / "c.wav")
    result = run("batch", calls, "-o", tmp_path / "out", "-q")
    assert result.exit_code == 0, result.stderr
    with Manifest(tmp_path / "out" / MANIFEST_NAME) as manifest:
        assert [(Path(r.input).name, r.status) for r in manifest.rows()] == [
            ("a.wav", "ok"), ("b.wav", "ok"), ("c.wav", "ok")]


def test_an_unexpected_error_in_one_file_is_recorded_and_the_batch_goes_on(clip, tmp_path, monkeypatch):
    """A bug that shows on one file only (injected into the merge, where the NaN scores
    were): that file's row, its line and the summary say so, its traceback is in the debug
    log, the files after it are done, and the exit code says a file failed."""
    from witness.run.orchestrate import Orchestrator

    real = Orchestrator.transcript

    def transcript(self, meta, results, timings, audio=None):
        if Path(meta.path).name == "b.wav":
            raise RuntimeError("a bug that shows on b.wav")
        return real(self, meta, results, timings, audio)

    monkeypatch.setattr(Orchestrator, "transcript", transcript)
    calls = tmp_path / "calls"
    calls.mkdir()
    for name in ("a.wav", "b.wav", "c.wav"):
        shutil.copy(clip, calls / name)
    result = run("--debug", "batch", calls, "-o", tmp_path / "out", "--no-diarize")
    assert result.exit_code == 2, result.stderr
    error = "internal error: RuntimeError: a bug that shows on b.wav (run with --debug for details)"
    with Manifest(tmp_path / "out" / MANIFEST_NAME) as manifest:
        assert [(Path(r.input).name, r.status, r.error) for r in manifest.rows()] == [
            ("a.wav", "ok", None), ("b.wav", "failed", error), ("c.wav", "ok", None)]
    lines = result.stderr.splitlines()
    assert f"witness: {calls / 'b.wav'}: {error}" in lines
    assert "RuntimeError: a bug that shows on b.wav" in lines and "Traceback (most recent call last):" in lines
    assert "  files ok          2" in lines and "  files failed      1" in lines
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.suffix == ".txt") == ["a.txt", "c.txt"]


@pytest.mark.parametrize("name", [name for name in ROWS if "is the input" in name or "to the input" in name
                                  or "is an output" in name])
def test_an_input_that_would_be_an_output_is_left_as_it_was(name: str, env: Env):
    """The rows above, and the input afterwards: its bytes, whatever link led to it."""
    result = run(*ROWS[name].args(env))
    assert result.exit_code == 2, result.stderr
    kept = env.out / ("sample.json" if "--words" in name else "call.txt")
    assert kept.read_bytes() == (env.words if "--words" in name else env.sample).read_bytes()
