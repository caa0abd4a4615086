"""Explore in a real browser: a summary deep link opens cold and warm, labels are visibly coloured,
a claim named in the link is visibly marked, and hostile dataset text shows literally without
running, loading or overlaying anything."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers

pytestmark = pytest.mark.browser

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
XSS_FILE = helpers.IMPORTS / "xss_payloads.jsonl"
TRACKER_PORT = 47231
"""The payloads' remote images and forms point at http://127.0.0.1:47231 (see the fixture file)."""
HIGHLIGHTS = ".fl-doc, .fl-summary, .fl-list, .fl-passages"


def _background(page: Page, selector: str) -> str:
    return page.locator(selector).first.evaluate("el => getComputedStyle(el).backgroundColor")


def test_summary_deep_link_opens_cold_and_warm_with_labels_coloured(
    page: Page, fresh_server: helpers.Server, screenshot_dir: Path
) -> None:
    record = raw.storysumm_records()[DANIEL]
    helpers.open_app(page, f"{fresh_server.url}/explore?dataset=storysumm&summary={DANIEL}&sentence=5")
    helpers.assert_no_exception(page)
    expect(page.get_by_test_id("stHeading").filter(has_text=DANIEL)).to_be_visible()
    summary = page.locator(".fl-summary")
    expect(summary).to_contain_text(record["summary"][4])
    faithful = _background(page, ".fl-summary .fl-sent.fl-label-faithful")
    unfaithful = _background(page, ".fl-summary .fl-sent.fl-label-unfaithful")
    assert faithful != unfaithful
    assert "rgba(0, 0, 0, 0)" not in (faithful, unfaithful)
    expect(page.locator(".fl-sentences li").nth(4)).to_contain_text("unfaithful")
    expect(page.locator(".fl-doc mark.fl-align-best")).to_have_count(1)
    helpers.screenshot(page, screenshot_dir, "explore_storysumm_detail")

    other = next(sid for sid, r in raw.storysumm_records().items() if r["split"] == "test")
    helpers.open_app(page, f"{fresh_server.url}/explore?dataset=storysumm&summary={other}")
    expect(page.get_by_test_id("stHeading").filter(has_text=other)).to_be_visible()
    helpers.assert_no_exception(page)


def test_a_claim_unit_link_opens_with_the_claim_marked_and_keeps_it_in_the_url(
    page: Page, app_url: str, screenshot_dir: Path
) -> None:
    book, models = next(iter(raw.fables_books().items()))
    model, summary = next(iter(models.items()))
    summary_id = f"{book} / {model}"
    number = sorted(summary["claims"], key=int)[4]
    unit_id, claim = f"{summary_id}#c{number}", summary["claims"][number]["claim"]
    helpers.open_app(
        page, f"{app_url}/explore?{urlencode({'dataset': 'fables', 'summary': summary_id, 'unit': unit_id})}"
    )
    helpers.assert_no_exception(page)
    expect(page.get_by_test_id("stAlert")).to_have_count(1)  # only the note that the book text is missing
    chosen = page.locator(".fl-claims li.fl-selected")
    expect(chosen).to_have_count(1)
    expect(chosen).to_contain_text(claim)
    expect(chosen.locator(".fl-chosen")).to_have_text("chosen")
    expect(page.locator("div.fl-chosen")).to_contain_text(claim)
    outline = "el => getComputedStyle(el).outlineStyle"
    assert chosen.evaluate(outline) == "solid"
    assert page.locator(".fl-claims li:not(.fl-selected)").first.evaluate(outline) == "none"
    expect(page).to_have_url(re.compile(r"[?&]unit=" + re.escape(urlencode({"u": unit_id})[2:]) + "(&|$)"))
    helpers.screenshot(page, screenshot_dir, "explore_fables_claim_chosen")


class _Tracker(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        _Tracker.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def tracker() -> Iterator[list[str]]:
    """A loopback server the payloads aim at; the test asserts it is never contacted."""
    _Tracker.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", TRACKER_PORT), _Tracker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield _Tracker.hits
    server.shutdown()
    server.server_close()


def test_hostile_dataset_text_shows_literally_and_runs_nothing(
    page: Page, app_url: str, tracker: list[str], screenshot_dir: Path
) -> None:
    record = json.loads(XSS_FILE.read_text(encoding="utf-8").splitlines()[0])
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.add_init_script("window.__sentinel = 'untouched';")
    url = f"{app_url}/explore?dataset=xss_payloads&summary={record['summary_id']}&sentence=2&ngram=2"
    helpers.open_app(page, url)
    helpers.assert_no_exception(page)
    page.locator(".fl-summary .fl-sent.fl-label-unfaithful").first.hover(force=True)
    page.wait_for_timeout(1_000)

    assert dialogs == []
    assert page.evaluate("window.__sentinel") == "untouched"
    assert page.evaluate("typeof window.__xss") == "undefined"
    expect(page).to_have_title("Explore · FaithLens")
    for container in page.locator(HIGHLIGHTS).all():
        expect(container.locator("script, iframe, [onerror], [onload], img, form, svg, a, [style]")).to_have_count(0)
    assert page.locator(HIGHLIGHTS).count() >= 4
    assert page.locator(".fl-doc").first.text_content() == record["document"]
    sentences = page.locator(".fl-summary > .fl-sent")
    for index, sentence in enumerate(record["sentences"]):
        expect(sentences.nth(index)).to_contain_text(sentence["text"])
    expect(page.locator(".fl-sentences li").nth(1)).to_contain_text(record["sentences"][1]["explanation"])
    overlay = page.evaluate(
        "[...document.querySelectorAll('body *')].some(el => getComputedStyle(el).position === 'fixed'"
        " && el.textContent.trim() === 'OVERLAY')"
    )
    assert overlay is False
    assert tracker == [], f"the page fetched {tracker} from the tracker"
    helpers.screenshot(page, screenshot_dir, "explore_xss")
