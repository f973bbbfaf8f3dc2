"""The html page without a browser: its audio (original bytes, Opus re-encode, relative
link), its data escaped, and `witness --format html` through the merge-only path."""

from __future__ import annotations

import base64
import io
import json
import re
from dataclasses import replace

import av
import numpy as np
import pytest
from click.testing import CliRunner

from tests.audio_factory import FORMATS, encode
from tests.stm_transcript import transcript_from_stm
from witness.cli import main
from witness.page import to_html
from witness.page.audio import browser_mime, embedded, linked
from witness.transcript import Word


def page_data(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="witness-data">(.*?)</script>', page, re.S)[1])


def page_audio(page: str) -> bytes:
    return base64.b64decode(re.search(r'id="witness-audio">(.*?)</script>', page, re.S)[1])


@pytest.fixture(scope="module")
def sample_48k(sample_audio) -> np.ndarray:
    """The sample call as (1, n) float32 at 16 kHz, for encoding into other formats."""
    return sample_audio[None, :].astype(np.float32)


@pytest.mark.parametrize("ext", sorted(FORMATS))
def test_what_browsers_play_goes_in_as_it_is(ext, sample_48k, tmp_path):
    container, codec, rate = FORMATS[ext]
    path = encode(sample_48k, 16000, tmp_path / f"call.{ext}", codec, container, rate)
    audio = embedded(path)
    assert audio.how == "original file" and audio.mime.startswith("audio/")
    assert base64.b64decode(audio.base64) == path.read_bytes()


def test_what_browsers_cannot_play_is_reencoded_to_opus(sample_48k, tmp_path):
    path = encode(sample_48k, 16000, tmp_path / "call.wav", "pcm_f32le", "wav", 16000)  # float WAV: not in every browser
    assert browser_mime(path) is None
    audio = embedded(path)
    assert (audio.how, audio.mime) == ("Opus re-encode", "audio/webm")
    data = base64.b64decode(audio.base64)
    assert len(data) < path.stat().st_size / 10  # 24 kb/s against 512 kb/s
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "opus"
        samples = sum(frame.samples for frame in container.decode(stream))
    assert samples / stream.rate == pytest.approx(30.0, abs=0.05)


def test_a_link_is_relative_to_the_page_and_url_quoted(tmp_path):
    audio = tmp_path / "calls" / "a call #1.wav"
    assert linked(audio, tmp_path / "out" / "2024").href == "../../calls/a%20call%20%231.wav"
    assert linked(audio, tmp_path / "calls").href == "a%20call%20%231.wav"


def test_words_cannot_break_out_of_the_page_script(sample_call):
    t = transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")
    evil = "</script><script>alert(1)</script><!--"
    u = t.utterances[0]
    t = replace(t, utterances=(replace(u, words=(Word(u.start, u.end, evil, 1.0, u.speaker),)),) + t.utterances[1:])
    page = to_html(t, linked(sample_call / "sample.wav", sample_call))
    assert evil not in page
    assert page_data(page)["u"][0][4][0][2] == evil
    assert "default-src 'none'" in page  # the page may fetch nothing


def test_names_the_run_gave_travel_with_the_page(sample_call):
    t = transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")
    page = to_html(t, linked(sample_call / "sample.wav", sample_call), {"Diane": "SPEAKER_00"})
    speakers = page_data(page)["speakers"]
    assert [(s["label"], s["name"]) for s in speakers] == [("SPEAKER_00", "Diane"), ("Sheila", "Sheila")]


@pytest.fixture
def words_json(sample_call, tmp_path):
    """The human transcript as a witness JSON, which --words takes words from."""
    path = tmp_path / "words.json"
    path.write_text(transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav").to_json())
    return path


def run(*args, **kwargs):
    return CliRunner().invoke(main, [str(a) for a in args], **kwargs)


def test_cli_writes_a_page_with_the_call_in_it(sample_call, words_json, tmp_path):
    merge_only = ("--words", words_json, "--turns", sample_call / "sample.rttm")
    result = run(sample_call / "sample.wav", *merge_only, "--speaker-names", "speaker90=Diane",
                 "-o", tmp_path / "out", "--format", "html,txt")
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "out" / "sample.html").read_text()
    assert page_audio(page) == (sample_call / "sample.wav").read_bytes()
    data = page_data(page)
    assert [(s["label"], s["name"]) for s in data["speakers"]] == [("speaker90", "Diane"), ("speaker91", "speaker91")]
    assert len(data["u"]) == len((tmp_path / "out" / "sample.txt").read_text().splitlines())

    linked_page = run(sample_call / "sample.wav", *merge_only, "--format", "html", "--html-audio", "link")
    assert linked_page.exit_code == 0, linked_page.stderr
    assert page_data(linked_page.stdout)["audio"]["href"] == linked(sample_call / "sample.wav", ".").href
    assert page_audio(linked_page.stdout) == b""


def test_standard_input_cannot_be_linked(sample_call):
    result = run("-", "--format", "html", "--html-audio", "link", input=(sample_call / "sample.wav").read_bytes())
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "witness: Invalid value for --html-audio: standard input (-) has no file a page could link to; use embed")
