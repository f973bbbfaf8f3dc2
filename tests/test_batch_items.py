"""Batch inputs, the settings hash and the manifest, without models: folders mirrored,
same-stem files kept apart, globs, a manifest line cut short, one batch per folder."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from witness.run.batch import BatchItem, find_items, settings_hash
from witness.config import ModelSettings, Settings
from witness.errors import InputError, WitnessError
from witness.run.manifest import Manifest, ManifestRow
from witness.run.plan import PlanOptions


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"RIFF")
    return path


@pytest.fixture
def calls(tmp_path) -> Path:
    root = tmp_path / "calls"
    for name in ("a.wav", "b.MP3", "2024/a.wav", "2024/03/c.m4a", "notes.txt", ".hidden/d.wav", "._e.wav"):
        touch(root / name)
    return root


def stems(items: list[BatchItem]) -> dict[str, str]:
    return {Path(i.input).relative_to(i.input.split("calls")[0] + "calls").as_posix(): i.stem for i in items}


def test_a_folder_is_searched_for_audio_and_mirrored(calls):
    items = find_items([str(calls)], ("json", "txt"), "h")
    assert stems(items) == {"2024/03/c.m4a": "2024/03/c", "2024/a.wav": "2024/a", "a.wav": "a", "b.MP3": "b"}
    assert items[0].outputs == ("2024/03/c.json", "2024/03/c.txt")
    assert all(i.settings_hash == "h" and i.input.startswith(str(calls)) for i in items)


def test_files_are_taken_as_given_and_share_a_root_with_folders(calls):
    items = find_items([str(calls / "2024"), str(calls / "notes.txt"), str(calls / "a.wav")], ("json",), "h")
    assert stems(items) == {"2024/03/c.m4a": "2024/03/c", "2024/a.wav": "2024/a", "notes.txt": "notes", "a.wav": "a"}


def test_globs_each_file_once_and_extensions_kept_where_stems_clash(calls):
    touch(calls / "a.flac")
    items = find_items([str(calls / "*.wav"), str(calls / "**" / "*.*"), str(calls / "a.wav")], ("json",), "h")
    by_input = stems(items)
    assert by_input["a.wav"] == "a.wav" and by_input["a.flac"] == "a.flac" and by_input["2024/a.wav"] == "2024/a"
    assert len(items) == len({i.input for i in items}) == 6  # a.wav a.flac b.MP3 notes.txt 2024/a.wav c.m4a
    assert [Path(i.input).name for i in items[:3]] == ["a.wav", "c.m4a", "a.wav"]  # as found: *.wav, then **/*.* sorted


@pytest.mark.parametrize("given, message", [("nothing-here.wav", "no such file or folder"),
                                            ("*.nomatch", "matches no files")])
def test_a_missing_input_is_an_error_before_any_work(calls, given, message):
    with pytest.raises(InputError, match=message):
        find_items([str(calls / "a.wav"), str(calls / given)], ("json",), "h")


def test_a_folder_without_audio_is_an_error(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="no audio files found"):
        find_items([str(tmp_path)], ("json",), "h")


def test_the_settings_hash_follows_what_shapes_the_transcript():
    base = Settings()
    h = settings_hash(base)
    assert h == settings_hash(Settings()) and len(h) == 16
    assert settings_hash(replace(base, plan=PlanOptions(mode="parallel", threads=1))) == h
    assert settings_hash(replace(base, models=ModelSettings(offline=True))) == h
    assert settings_hash(replace(base, asr=replace(base.asr, model="base.en"))) != h
    assert settings_hash(replace(base, diarization=replace(base.diarization, num_speakers=2))) != h
    assert settings_hash(base, diarize=False) != h


def test_items_and_rows_cross_process_boundaries_unchanged():
    item = BatchItem("calls/a.wav", "a", "h", ("json",))
    row = ManifestRow("/x/a.wav", "h", "ok", size=3, sha256="s", outputs=("a.json",), duration=30.0,
                      wall_time=2.5, rtf=0.0833, attempts=2, finished="2025-01-01T00:00:00Z")
    assert pickle.loads(pickle.dumps(item)) == item and pickle.loads(pickle.dumps(row)) == row
    import json

    assert ManifestRow.from_dict(json.loads(row.to_json())) == row


def test_a_line_cut_short_is_ignored_and_the_next_row_starts_a_fresh_line(tmp_path):
    row = ManifestRow("/x/a.wav", "h", "ok", outputs=("a.json",))
    with Manifest(tmp_path / "m.jsonl") as manifest:
        manifest.append(row)
        with open(manifest.path, "a") as f:
            f.write('{"input": "/x/b.wav", "sett')  # a crash mid-line
        manifest.append(replace(row, input="/x/c.wav"))
        assert [r.input for r in manifest.rows()] == ["/x/a.wav", "/x/c.wav"]
        assert manifest.path.read_text().count("\n") == 3


def test_the_last_row_of_an_input_is_its_state(tmp_path):
    with Manifest(tmp_path / "m.jsonl") as manifest:
        manifest.append(ManifestRow("/x/a.wav", "h", "failed", error="boom"))
        manifest.append(ManifestRow("/x/a.wav", "h", "ok"))
        assert manifest.latest()["/x/a.wav"].status == "ok"


def test_one_batch_at_a_time_writes_a_folder(tmp_path):
    with Manifest(tmp_path / "m.jsonl"):
        with pytest.raises(WitnessError, match="another witness batch is writing to this folder"):
            with Manifest(tmp_path / "m.jsonl"):
                pass
    with Manifest(tmp_path / "m.jsonl"):  # released
        pass


def test_the_progress_bar_shows_files_audio_speed_and_eta(monkeypatch, tmp_path):
    import io
    import sys

    from witness.cli.progress import ProgressView

    files = []
    for name, size in (("a", 1000), ("b", 10), ("c", 1000)):
        files.append(str(tmp_path / name))
        (tmp_path / name).write_bytes(bytes(size))
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = ProgressView(files, on=True)
    bar.file_done(files[1], transcribed=False, audio_seconds=0.0)  # a failed file: no speed, no ETA yet
    bar.file(files[0], "transcribe", 45, 100)
    bar.file(files[2], "transcribe", 10, 100)
    bar.file(files[0], "embedding", 600, 600)
    shown = err.getvalue().replace("\r", "\n").strip().splitlines()[-1]
    assert "a: transcribe 45% · embed 600/600" in shown  # the oldest file in flight, not the latest event
    bar.file_done(files[0], transcribed=True, audio_seconds=90.0)
    bar.close()
    last = err.getvalue().replace("\r", "\n").strip().splitlines()[-1]
    assert "2/3 files" in last and "1.5 audio min" in last and "x real time" in last and "ETA" in last
    assert "c: transcribe 10%" in last


def test_one_file_shows_its_share_of_the_work_with_elapsed_time_and_eta(monkeypatch, tmp_path):
    import io
    import sys

    from witness.cli.progress import ProgressView

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = ProgressView([str(tmp_path / "call.wav")], on=True)
    bar.file(str(tmp_path / "call.wav"), "transcribe", 100, 100)  # Whisper done, diarization not begun
    bar.file(str(tmp_path / "call.wav"), "segmentation", 50, 100)
    bar.file(str(tmp_path / "call.wav"), "segmentation", 100, 100)
    shown = err.getvalue().replace("\r", "\n").strip().splitlines()[-1]
    bar.close()
    assert shown.startswith(" 65%") and "<" in shown and "call.wav: transcribe 100% · segment 100%" in shown
