"""Debian's headless Chromium driven by Playwright (a test and script helper).

Playwright, not Selenium: it drives the system's Chromium by ``executable_path`` with no
matching chromedriver package, and it sees and routes every request the page makes, which
the offline test needs. Its own browser downloads (``playwright install``) are never used.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Iterator

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class Network:
    """Every request a page made, and those that would have left the machine (aborted)."""

    def __init__(self):
        self.requests: list[str] = []
        self.blocked: list[str] = []

    def route(self, route) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()


@contextlib.contextmanager
def chromium_context(executable: str | Path, width: int = 1100, height: int = 800) -> Iterator[tuple[object, Network]]:
    """(a Playwright browser context in a fresh profile, its Network record): everything
    but local files is aborted and recorded."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory(prefix="witness-chromium-") as profile:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=str(executable), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height})
        network = Network()
        context.on("request", lambda request: network.requests.append(request.url))
        context.route("**/*", network.route)
        try:
            yield context, network
        finally:
            context.close()


def open_page(context, html: Path):
    """A new tab showing ``html``, once its script has run and its audio's length is known."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(html.resolve().as_uri())
    page.wait_for_selector("html[data-ready]")
    # the audio's length: an event to wait on (a polled string predicate would need the eval the
    # page's content security policy forbids, and fail whenever the audio is not loaded at once)
    page.evaluate("""() => new Promise(resolve => {
        const audio = document.getElementById('audio');
        if (audio.readyState >= 1) resolve();
        else audio.addEventListener('loadedmetadata', () => resolve(), {once: true});
    })""")
    assert not errors, errors
    return page
