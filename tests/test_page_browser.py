"""The html page in a real headless Chromium (Debian's, driven by Playwright): it loads
offline, a click plays from the clicked word, search finds a quote, the keys work, renaming
builds the --speaker-names option, and the layout renders (a screenshot).

The page is the sample call's human transcript (tests/data/sample-call/sample.stm) with its
real audio, made as `witness --speaker-names speaker90=Diane,…` would make it."""

from __future__ import annotations

import shlex
import struct
from dataclasses import replace

import numpy as np
import pytest

from tests.audio_factory import FORMATS, encode
from tests.browser import chromium_context, open_page
from tests.stm_transcript import repeated, transcript_from_stm
from witness.cli.options import parse_speaker_names
from witness.page import to_html
from witness.page.audio import embedded, linked

expect = pytest.importorskip("playwright.sync_api").expect
expect.set_options(timeout=60_000)  # how long a check may wait for the page: a limit for a loaded machine

LABELS = {"Diane": "SPEAKER_00", "Sheila": "SPEAKER_01"}  # name shown -> label the run gave


@pytest.fixture(scope="module")
def transcript(sample_call):
    return transcript_from_stm(sample_call / "sample.stm", sample_call / "sample.wav")


@pytest.fixture(scope="module")
def page_file(transcript, sample_call, tmp_path_factory):
    path = tmp_path_factory.mktemp("page") / "sample.html"
    path.write_text(to_html(transcript, embedded(sample_call / "sample.wav"), LABELS), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser(chromium):
    with chromium_context(chromium) as (context, network):
        yield context, network


@pytest.fixture
def page(browser, page_file):
    context, _ = browser
    tab = open_page(context, page_file)
    yield tab
    tab.close()


def word_start(transcript, utterance: int, word: int) -> float:
    return transcript.utterances[utterance].words[word].start


def paused_time(page) -> float:
    return page.evaluate("(() => { const a = document.getElementById('audio'); a.pause(); return a.currentTime; })()")


def record_seeks(page) -> None:
    """From now on, keep where each seek of the page's audio lands (its `seeking` event), so a
    test checks the seek itself, not where playback got to by the time it looks."""
    page.evaluate("(() => { window.seeks = []; const a = document.getElementById('audio');"
                  " a.addEventListener('seeking', () => window.seeks.push(a.currentTime)); })()")


def seek(page, seconds: float) -> None:
    """Set the audio's position and wait for its `seeked` event, so that seek's own `seeking`
    event cannot reach a recorder installed after it (it is queued as a task of its own)."""
    page.evaluate(f"""() => new Promise(resolve => {{
        const a = document.getElementById('audio');
        a.addEventListener('seeked', () => resolve(), {{once: true}});
        a.currentTime = {seconds};
    }})""")


def seeked_to(page, time: float) -> bool:
    """Whether the next seek (waited for) landed on ``time``: the page holds times to the millisecond, and
    Chromium reports a position on the 16 kHz call's samples, up to one sample (62.5 µs) either
    side of the rounded time (16.521999 for 16.522 has been seen)."""
    landed = page.evaluate("""() => new Promise(resolve => {  // the event is a task of its own, after the click's
        const take = () => { const t = window.seeks.pop(); window.seeks = []; resolve(t); };
        if (window.seeks.length) take();
        else document.getElementById('audio').addEventListener('seeking', take, {once: true});
    })""")
    return abs(landed - round(time, 3)) <= 1 / 16000


def test_the_page_loads_offline_with_its_audio(browser, page_file, transcript):
    context, network = browser
    before = len(network.requests)
    tab = open_page(context, page_file)
    assert tab.evaluate("document.getElementById('audio').duration") == pytest.approx(30.0, abs=0.05)
    assert tab.locator(".u").count() == len(transcript.utterances)
    made = network.requests[before:]
    assert network.blocked == []
    assert [url for url in made if not url.startswith("blob:")] == [page_file.as_uri()]
    tab.close()


def test_a_linked_page_plays_the_file_beside_it(browser, transcript, sample_call, tmp_path):
    context, network = browser
    audio = tmp_path / "calls" / "sample call.wav"
    audio.parent.mkdir()
    audio.write_bytes((sample_call / "sample.wav").read_bytes())
    html = tmp_path / "out" / "sample.html"
    html.parent.mkdir()
    html.write_text(to_html(transcript, linked(audio, html.parent)), encoding="utf-8")
    tab = open_page(context, html)
    assert tab.evaluate("document.getElementById('audio').duration") == pytest.approx(30.0, abs=0.05)
    assert audio.as_uri() in network.requests and network.blocked == []
    tab.close()


@pytest.mark.parametrize("ext", sorted(FORMATS))
def test_every_embedded_format_plays(browser, transcript, sample_audio, ext, tmp_path):
    context, _ = browser
    container, codec, rate = FORMATS[ext]
    audio = encode(sample_audio[None, :].astype(np.float32), 16000, tmp_path / f"call.{ext}", codec, container, rate)
    html = tmp_path / "page.html"
    html.write_text(to_html(transcript, embedded(audio)), encoding="utf-8")
    tab = open_page(context, html)
    assert tab.evaluate("document.getElementById('audio').duration") == pytest.approx(30.0, abs=0.1)
    tab.close()


def without_speakers(t):
    utterances = tuple(replace(u, speaker=None, words=tuple(replace(w, speaker=None) for w in u.words))
                       for u in t.utterances)
    return replace(t, speakers=(), utterances=utterances, turns=(), exclusive_turns=())


@pytest.mark.parametrize("make", [without_speakers, lambda t: replace(t, utterances=(), speakers=())],
                         ids=["no-diarize", "no-speech"])
def test_pages_without_speakers_or_words_load(browser, transcript, sample_call, make, tmp_path):
    context, _ = browser
    html = tmp_path / "page.html"
    html.write_text(to_html(make(transcript), linked(sample_call / "sample.wav", tmp_path)), encoding="utf-8")
    tab = open_page(context, html)  # no script error
    assert tab.locator(".u .n").count() == 0 and not tab.locator("#names").is_visible()
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("/")
    tab.keyboard.type("hello")
    tab.keyboard.press("Enter")
    assert tab.inner_text("#count") == ("not found" if "No speech" in tab.inner_text("main") else "1 of 3")
    tab.close()


def test_clicking_a_word_plays_from_it(page, transcript):
    start = word_start(transcript, 7, 5)  # "originally", in "And I'm Sheila in Texas, originally from Chicago."
    record_seeks(page)
    page.locator(".u").nth(7).locator("p span").nth(5).click()
    assert page.evaluate("!document.getElementById('audio').paused")
    assert seeked_to(page, start)
    at = paused_time(page)
    assert page.locator(".u.on").count() == 1 and page.locator(".u").nth(7).get_attribute("class").endswith(" on")
    playing = [w for w in transcript.words if w.start <= at + 1e-3][-1]  # the word being played
    expect(page.locator("span.now")).to_have_text([playing.text])  # marked once the pause's timeupdate is in

    page.locator(".u").nth(2).locator(".t").click()  # a time plays the utterance from its start
    assert seeked_to(page, transcript.utterances[2].start)


def test_the_playing_word_is_found_where_utterances_overlap(browser, transcript, sample_call, tmp_path):
    """A split stereo call's parties are transcribed apart: a backchannel said inside another
    speaker's utterance comes after it in the list, yet is the word marked while it plays."""
    from witness.transcript import Utterance, Word

    said = transcript.utterances[7]
    other = next(s for s in transcript.speakers if s != said.speaker)
    at = said.words[2].start + 0.01
    backchannel = Utterance(other, at, at + 0.2, "mhm", (Word(at, at + 0.2, "mhm", speaker=other),))
    utterances = (*transcript.utterances[:8], backchannel, *transcript.utterances[8:])
    html = tmp_path / "overlap.html"
    html.write_text(to_html(replace(transcript, utterances=utterances), linked(sample_call / "sample.wav", tmp_path)),
                    encoding="utf-8")
    context, _ = browser
    tab = open_page(context, html)
    for seconds, text in ((at + 0.05, "mhm"), (said.words[4].start + 0.01, said.words[4].text)):
        tab.evaluate(f"document.getElementById('audio').currentTime = {seconds}")
        expect(tab.locator("span.now")).to_have_text([text])
    tab.close()


def test_search_finds_a_quote_and_goes_to_it(page, transcript):
    page.keyboard.press("/")
    page.keyboard.type("texas originally from chicago")  # case and punctuation ignored
    page.keyboard.press("Enter")
    assert page.inner_text("#count") == "1 of 1"
    assert page.locator("span.cur").all_inner_texts() == ["Texas,", "originally", "from", "Chicago."]
    assert paused_time(page) == pytest.approx(word_start(transcript, 7, 4), abs=0.002)

    page.fill("#q", "new jersey")
    page.keyboard.press("Enter")
    assert page.inner_text("#count") == "1 of 3"
    page.keyboard.press("Shift+Enter")
    assert page.inner_text("#count") == "3 of 3"
    assert page.locator("span.hit").count() == 6


def test_the_keys(page, transcript):
    audio = "document.getElementById('audio')"
    page.keyboard.press("Space")
    assert page.evaluate(f"!{audio}.paused")
    page.keyboard.press("Space")
    assert page.evaluate(f"{audio}.paused")
    page.evaluate(f"{audio}.currentTime = 10")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(f"{audio}.currentTime") == pytest.approx(15.0)
    page.keyboard.press("Shift+ArrowLeft")
    assert page.evaluate(f"{audio}.currentTime") == pytest.approx(0.0)
    seek(page, transcript.utterances[4].start + 0.2)
    record_seeks(page)
    page.keyboard.press("ArrowDown")
    assert seeked_to(page, transcript.utterances[5].start) and page.evaluate(f"!{audio}.paused")
    page.evaluate(f"{audio}.pause()")
    page.keyboard.press("]")
    assert page.evaluate(f"{audio}.playbackRate") == 1.25
    page.keyboard.press("?")
    assert page.evaluate("document.getElementById('keys').open")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.id") != "q"

    page.focus("#audio")  # the player's own controls take no key twice
    page.keyboard.press("Space")
    assert page.evaluate(f"!{audio}.paused")


def test_renaming_builds_the_speaker_names_option(page):
    page.click("#names summary")
    assert page.input_value("#names-out") == "--speaker-names SPEAKER_00=Diane,SPEAKER_01=Sheila"
    page.fill('#speakers input[data-k="1"]', "Sheila O'Neil")
    option = page.input_value("#names-out")
    flag, value = shlex.split(option)
    assert flag == "--speaker-names"
    assert parse_speaker_names(None, None, value) == {"SPEAKER_00": "Diane", "SPEAKER_01": "Sheila O'Neil"}
    assert page.locator(".u .n.s1").first.inner_text() == "Sheila O'Neil"
    page.fill('#speakers input[data-k="0"]', "Diane, NJ")
    assert page.input_value("#names-out") == "" and "comma" in page.inner_text("#names-msg")


def test_a_long_page_makes_words_clickable_as_they_come_on_screen(browser, transcript, sample_call, tmp_path):
    context, _ = browser
    long = repeated(transcript, 120)  # an hour
    html = tmp_path / "long.html"
    html.write_text(to_html(long, linked(sample_call / "sample.wav", tmp_path)), encoding="utf-8")
    tab = open_page(context, html)
    assert tab.locator(".u").count() == len(long.utterances)
    assert tab.locator(".u p span").count() < len(long.words) / 20  # only what is near the screen
    tab.fill("#q", "originally from chicago")
    tab.keyboard.press("Enter")
    tab.keyboard.press("Shift+Enter")  # the last match, an hour down
    assert tab.inner_text("#count") == "240 of 240"
    expect(tab.locator("span.cur")).to_have_text(["originally", "from", "Chicago"])  # Diane's, in the last copy
    assert tab.locator("span.hit").count() < 3 * 240  # marked where built; the rest when they are
    middle = tab.locator(".u").nth(60 * len(transcript.utterances) + 7)  # Sheila's, half an hour down
    middle.scroll_into_view_if_needed()
    expect(middle.locator("span.hit")).to_have_text(["originally", "from", "Chicago."])
    tab.close()


def test_the_layout_renders(page, tmp_path):
    shot = tmp_path / "page.png"
    page.screenshot(path=str(shot))
    width, height = struct.unpack(">II", shot.read_bytes()[16:24])
    assert (width, height) == (1100, 800)
    boxes = [page.locator(s).bounding_box() for s in ("header", "#timeline canvas", ".u >> nth=0")]
    assert all(b and b["width"] > 0 and b["height"] > 0 for b in boxes)
    assert boxes[1]["y"] < boxes[0]["y"] + boxes[0]["height"] <= boxes[2]["y"] + 1  # timeline in the header, text below
