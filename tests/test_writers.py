"""Every writer's output, checked: srt/vtt parse back with real parsers, rttm and json round-trip."""

from __future__ import annotations

import errno
import html
import json
from pathlib import Path

import pytest
import srt
import webvtt

from witness.errors import InputError, UsageError, WitnessError
from witness.fileio import name_max
from witness.merge import merge
from witness.rttm import parse_rttm
from witness.timecode import parse_timestamp
from witness.transcript import AudioMeta, Transcript, Turn, Word
from witness.writers import (
    WRITERS, check_outputs_free, output_paths, output_stems, subtitle_cues, write_outputs)

LINES = [  # (speaker, start, end, text) — the opening of the sample call
    ("SPEAKER_00", 6.68, 7.16, "Hello?"),
    ("SPEAKER_01", 7.634, 8.155, "Hello?"),
    ("SPEAKER_00", 8.436, 9.798, "Oh, hello. I didn't know you were there."),
    ("SPEAKER_01", 9.838, 10.78, "Neither did I. <yes> & more."),
    ("SPEAKER_00", 10.78, 21.475, " ".join(["word"] * 40) + "."),
]


@pytest.fixture
def transcript() -> Transcript:
    words, turns = [], []
    for speaker, start, end, text in LINES:
        tokens = text.split()
        step = (end - start) / len(tokens)
        words += [Word(start + i * step, start + (i + 1) * step, tok, 0.9) for i, tok in enumerate(tokens)]
        turns.append(Turn(start, end, speaker))
    words.append(Word(25.0, 25.4, "stray"))  # in no turn: unattributed
    merged = merge(words, turns)
    return Transcript(
        audio=AudioMeta(path="/calls/sample.wav", duration=30.0, sha256="ab" * 32),
        utterances=merged.utterances,
        speakers=("SPEAKER_00", "SPEAKER_01"),
        turns=tuple(turns),
        exclusive_turns=tuple(turns),
        engines={"asr": {"model": "tiny.en", "device": "cpu"}},
        timings={"asr": 1.5},
    )


def test_txt_lines(transcript):
    lines = WRITERS["txt"](transcript).splitlines()
    assert lines[0] == "[00:06.7] SPEAKER_00: Hello?"
    assert lines[2] == "[00:08.4] SPEAKER_00: Oh, hello. I didn't know you were there."
    assert lines[-1] == "[00:25.0] UNKNOWN: stray"


def test_txt_without_speakers_is_plain(transcript):
    from dataclasses import replace

    plain = WRITERS["txt"](replace(transcript, speakers=()))
    assert plain.splitlines()[0] == "[00:06.7] Hello?"


def test_json_round_trips_with_times_to_the_millisecond(transcript):
    text = WRITERS["json"](transcript)
    again = Transcript.from_json(text)
    assert again.to_json() == text  # what was written reads back exactly
    assert json.loads(text)["schema_version"] == 1
    assert again.speakers == transcript.speakers and again.engines == transcript.engines
    starts = [w.start for u in again.utterances for w in u.words]
    assert starts == [round(w.start, 3) for u in transcript.utterances for w in u.words]
    assert "6.3999999999999995" not in Transcript.from_json(text.replace("6.68", "6.3999999999999995")).to_json()


def test_srt_parses_back(transcript):
    subs = list(srt.parse(WRITERS["srt"](transcript)))
    cues = subtitle_cues(transcript, speaker_prefix=True)
    assert len(subs) == len(cues) > len(transcript.utterances)  # the long utterance was cut
    for sub, cue in zip(subs, cues):
        assert sub.start.total_seconds() == pytest.approx(cue.start, abs=1e-3)
        assert sub.end.total_seconds() == pytest.approx(cue.end, abs=1e-3)
        assert " ".join(sub.content.split()).startswith(cue.speaker or "UNKNOWN")
        assert all(len(line) <= 42 for line in sub.content.splitlines())
        assert len(sub.content.splitlines()) <= 2
    assert all(c.end - c.start <= 7.0 + 1e-9 for c in cues)


def test_vtt_parses_back_with_voices(transcript, tmp_path):
    path = tmp_path / "t.vtt"
    path.write_text(WRITERS["vtt"](transcript))
    captions = webvtt.read(str(path))
    cues = subtitle_cues(transcript)
    assert len(captions) == len(cues)
    assert captions[0].voice == "SPEAKER_00" and captions[0].text == "Hello?"
    assert html.unescape(captions[3].text) == "Neither did I. <yes> & more."  # escaped as WebVTT requires
    for caption, cue in zip(captions, cues):
        assert parse_timestamp(caption.start) == pytest.approx(cue.start, abs=1e-3)
        assert parse_timestamp(caption.end) == pytest.approx(cue.end, abs=1e-3)


def test_rttm_round_trips(transcript):
    back = parse_rttm(WRITERS["rttm"](transcript))["sample"]
    assert [(t.speaker, round(t.start, 3), round(t.end, 3)) for t in back] == [
        (t.speaker, round(t.start, 3), round(t.end, 3)) for t in transcript.turns
    ]


def test_md_and_tsv(transcript):
    md = WRITERS["md"](transcript)
    assert md.startswith("# sample.wav\n") and "**SPEAKER_01** [00:07.6]: Hello?" in md
    rows = [r.split("\t") for r in WRITERS["tsv"](transcript).splitlines()]
    assert rows[0] == ["start", "end", "speaker", "text"]
    assert rows[1][2:] == ["SPEAKER_00", "Hello?"] and len(rows) == len(transcript.utterances) + 1


def test_outputs_are_named_after_the_input_and_never_overwritten_silently(transcript, tmp_path):
    paths = output_paths(output_stems(["monday call.m4a"])[0], tmp_path, ["json", "srt"])
    assert [p.name for p in paths] == ["monday call.json", "monday call.srt"]
    write_outputs(transcript, paths)
    assert paths[0].read_text() == transcript.to_json()
    with pytest.raises(WitnessError, match="already exists"):
        check_outputs_free(paths, overwrite=False)
    check_outputs_free(paths, overwrite=True)
    assert not list(tmp_path.glob(".*tmp"))


def test_renamed_speakers_reach_every_writer(transcript):
    named = transcript.rename_speakers({"SPEAKER_00": "Diane", "SPEAKER_01": "Sheila"})
    assert named.speakers == ("Diane", "Sheila")
    assert "[00:07.6] Sheila: Hello?" in WRITERS["txt"](named)
    assert "<v Diane>" in WRITERS["vtt"](named) and " Diane " in WRITERS["rttm"](named)


def test_vtt_cues_wrap_to_two_lines_like_srt(transcript):
    blocks = WRITERS["vtt"](transcript).split("\n\n")[1:]
    assert all(len(block.strip().splitlines()) <= 3 for block in blocks)  # timing + at most 2 lines
    assert any(len(block.strip().splitlines()) == 3 for block in blocks)


@pytest.mark.parametrize("name, voice", [
    ("Sheila <b>O'Neil</b>", "<v Sheila &lt;b&gt;O'Neil&lt;/b&gt;>"),
    ("AT&T", "<v AT&amp;T>"),
])
def test_vtt_voice_names_are_escaped(transcript, tmp_path, name, voice):
    text = WRITERS["vtt"](transcript.rename_speakers({"SPEAKER_01": name}))
    assert voice in text
    path = tmp_path / "t.vtt"
    path.write_text(text)
    assert html.unescape(webvtt.read(str(path))[1].voice) == name


def test_rttm_speaker_names_with_spaces_keep_ten_fields(transcript):
    text = WRITERS["rttm"](transcript.rename_speakers({"SPEAKER_00": "Diane  Smith"}))
    assert {len(line.split()) for line in text.splitlines()} == {10}
    assert parse_rttm(text)["sample"][0].speaker == "Diane_Smith"


def test_same_stem_keeps_the_extension_and_true_clashes_are_refused():
    assert output_stems(["call.mp3", "call.m4a", "other.wav"]) == ["call.mp3", "call.m4a", "other"]
    with pytest.raises(InputError, match="two inputs would write the same outputs"):
        output_stems(["call.wav", "call.wav"])


def test_outputs_are_written_all_or_none(transcript, tmp_path, monkeypatch):
    paths = output_paths("call", tmp_path, ["txt", "json"])
    real_write = Path.write_text

    def full_disk(self, data, *args, **kwargs):
        if self.name.startswith(".call.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(WitnessError, match=r"cannot write outputs \(No space left on device\); none were written"):
        write_outputs(transcript, paths)
    assert list(tmp_path.iterdir()) == []


def test_long_names_get_temp_files_within_the_limit(transcript, tmp_path):
    stem = "x" * (name_max(tmp_path) - len(".json"))
    paths = output_paths(stem, tmp_path, ["json"])
    check_outputs_free(paths, overwrite=False)
    write_outputs(transcript, paths)
    assert [p.name for p in tmp_path.iterdir()] == [paths[0].name]
    with pytest.raises(UsageError, match="file name too long"):
        check_outputs_free(output_paths(stem + "y", tmp_path, ["json"]), overwrite=False)
