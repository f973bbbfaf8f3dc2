#!/usr/bin/env python3
"""The html page (``--format html``) measured: its size on the sample call (audio embedded
or linked, and what the audio would weigh as Opus or AAC), a screenshot, and a 2-hour
transcript in headless Chromium: time to interactive, a search, a seek.

    python scripts/html_page.py                                 # sizes, 2-hour timings
    python scripts/html_page.py --screenshot scripts/html_page.png --hours 2 --out /tmp/page
    python scripts/html_page.py --hours 10 --linked-only        # the page's own cost at 10 hours

The sample call is transcribed for real (`witness -o OUT --format json,html`). The long
transcript repeats that transcript (and its audio, so the page embeds a real 2-hour
re-encode) every 30 s. Chromium is Debian's (`apt-get install chromium`), driven through
tests/browser.py. Times from one run on a shared machine: compare them with each other, not
across machines.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts import SAMPLE_CALL  # noqa: E402
from tests.browser import chromium_context, open_page  # noqa: E402
from tests.stm_transcript import repeated  # noqa: E402
from witness.page.audio import OPUS_BITRATE_PER_CHANNEL, OPUS_OPTIONS, reencoded  # noqa: E402
from witness.transcript import Transcript, read_transcript  # noqa: E402
from witness.writers import PageSource, render  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def sample_pages(out: Path) -> tuple[Path, Path]:
    """The sample call through witness: (page with the audio embedded, page linking it)."""
    wav = SAMPLE_CALL / "sample.wav"
    subprocess.run([sys.executable, "-m", "witness", "-q", str(wav), "-o", str(out), "--format", "json,html",
                    "--overwrite"], check=True)
    linked = out / "linked"
    linked.mkdir(exist_ok=True)
    transcript = read_transcript(out / "sample.json")
    (linked / "sample.html").write_text(render("html", transcript, PageSource(wav, "link"), linked), encoding="utf-8")
    return out / "sample.html", linked / "sample.html"


def long_call(transcript: Transcript, wav: Path, hours: float, out: Path) -> tuple[Transcript, Path]:
    """``transcript`` and ``wav`` repeated for ``hours``."""
    import wave

    copies = round(hours * 3600 / transcript.audio.duration)
    with wave.open(str(wav), "rb") as r:
        params, frames = r.getparams(), r.readframes(r.getnframes())
    long_wav = out / "long.wav"
    with wave.open(str(long_wav), "wb") as w:
        w.setparams(params)
        for _ in range(copies):
            w.writeframes(frames)
    long = repeated(transcript, copies)
    return replace(long, audio=replace(long.audio, path=str(long_wav))), long_wav


def measure_long(page_file: Path, quote: str) -> dict[str, float]:
    """Time to interactive (script done; audio playable), a search and a seek, in ms."""
    with chromium_context(CHROMIUM) as (context, _):
        started = time.perf_counter()
        page = open_page(context, page_file)
        audio_ready = (time.perf_counter() - started) * 1000
        result = {"file read (responseEnd)_ms": page.evaluate("performance.getEntriesByType('navigation')[0].responseEnd"),
                  "transcript interactive_ms (page clock)": float(page.get_attribute("html", "data-ready")),
                  "of which the page's script (parse data, render)_ms": float(page.get_attribute("html", "data-script-ms")),
                  "audio playable_ms (page clock)": float(page.get_attribute("html", "data-audio-ready")),
                  "audio playable_ms (driver)": audio_ready}
        result["search_ms"] = page.evaluate("""q => { const box = document.getElementById('q'); box.value = q;
            const t = performance.now();
            box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
            return performance.now() - t; }""", quote)
        result["search hits"] = float(page.inner_text("#count").split(" of ")[-1])
        result["search to next frame_ms"] = page.evaluate("""() => new Promise(done => { const box = document.getElementById('q');
            box.value = box.value + ' '; const t = performance.now();
            box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
            requestAnimationFrame(() => setTimeout(() => done(performance.now() - t))); })""")
        page.evaluate("() => { const u = document.querySelectorAll('.u'); u[u.length - 3].scrollIntoView(); }")
        word = page.locator(".u").nth(-3).locator("p span").first  # its words become spans once on screen
        word.wait_for()
        result["seek (click a word near the end)_ms"] = word.evaluate("""word => {
            const t = performance.now(); word.click(); return performance.now() - t; }""")
        result["seek to 'seeked' event_ms"] = page.evaluate("""() => new Promise(done => { const a = document.getElementById('audio');
            a.pause(); const t = performance.now();
            a.addEventListener('seeked', () => done(performance.now() - t), {once: true}); a.currentTime = a.duration / 3; })""")
        result["word spans built (on screen or played)"] = page.evaluate("document.querySelectorAll('.u p span').length")
        result["utterances"] = page.evaluate("document.querySelectorAll('.u').length")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="folder for the pages (default: a temp folder)")
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--screenshot", type=Path, help="save the sample page's screenshot here")
    parser.add_argument("--quote", default="originally from Chicago", help="what the search looks for")
    parser.add_argument("--linked-only", action="store_true",
                        help="only a linked long page, to the sample call itself (e.g. --hours 10 in seconds)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="witness-page-"))
    out.mkdir(parents=True, exist_ok=True)
    wav = SAMPLE_CALL / "sample.wav"

    embedded, linked = sample_pages(out)
    print(f"sample call: wav {wav.stat().st_size:,} B; page embedded {embedded.stat().st_size:,} B, "
          f"linked {linked.stat().st_size:,} B")
    for name, codec, container, rate, options in (("Opus 24 kb/s (webm, as the page has it)", "libopus", "webm",
                                                    OPUS_BITRATE_PER_CHANNEL, OPUS_OPTIONS),
                                                   ("AAC 32 kb/s (mp4)", "aac", "mp4", 32000, None)):
        print(f"  the call's audio as {name}: {len(reencoded(wav, codec, container, rate, options)):,} B")
    if args.screenshot:
        with chromium_context(CHROMIUM) as (context, _):
            page = open_page(context, embedded)
            page.locator(".u").nth(4).locator("p span").nth(4).click()
            page.evaluate("document.getElementById('audio').pause()")
            page.fill("#q", args.quote)
            page.keyboard.press("Enter")
            page.click("#names summary")
            page.fill('#speakers input[data-k="0"]', "Diane")
            page.fill('#speakers input[data-k="1"]', "Sheila")
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(args.screenshot))
        print(f"screenshot: {args.screenshot} ({args.screenshot.stat().st_size:,} B)")

    sample = read_transcript(out / "sample.json")
    if args.linked_only:  # no long WAV and no re-encode: the page links the 30 s call (seeks stop there)
        transcript = repeated(sample, round(args.hours * 3600 / sample.audio.duration))
        pages = {"linked": (out / "long-linked.html", PageSource(wav, "link"))}
    else:
        transcript, long_wav = long_call(sample, wav, args.hours, out)
        pages = {"embedded": (out / "long.html", PageSource(long_wav, "embed")),
                 "linked": (out / "long-linked.html", PageSource(long_wav, "link"))}
    for label, (page_file, source) in pages.items():
        started = time.perf_counter()
        page_file.write_text(render("html", transcript, source, out), encoding="utf-8")
        print(f"{args.hours:g}-hour page, audio {label}: {page_file.stat().st_size:,} B, made in "
              f"{time.perf_counter() - started:.1f} s")
    for label, (page_file, _) in pages.items():
        for key, value in measure_long(page_file, args.quote).items():
            print(f"  {label:8s} {key:55s} {value:10.1f}")
    print(f"pages in {out}")


if __name__ == "__main__":
    main()
