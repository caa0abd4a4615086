"""Explore in a real browser: a summary deep link opens cold and warm, labels are visibly coloured,
a claim named in the link (by its number, or by an older link's stored id) is visibly marked, hostile dataset text shows literally without
running, loading or overlaying anything, and after a Tags filter the matching sentences say so, with
a model's extracted claims apart from the dataset's."""

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
from tests.extracted_claims import CODER, DANIEL, EXTRACTED, EXTRACTED_BY, NAMES, seed

pytestmark = pytest.mark.browser

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


def test_an_old_claim_unit_link_opens_the_same_claim_and_the_url_names_it_as_its_label(
    page: Page, app_url: str, screenshot_dir: Path
) -> None:
    """Stored claim ids count from 0 and the page numbers claims from 1: `unit=…#c{n}` still opens the claim
    it always opened, C{n+1}, and the page's URL then says `claim={n+1}`, as the label does."""
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
    label = f"C{int(number) + 1}"
    expect(chosen.locator("b").first).to_have_text(label)
    expect(page.get_by_test_id("stMarkdown").filter(has_text=f"Chosen claim {label}")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"[?&]claim={int(number) + 1}(&|$)"))
    assert "unit=" not in page.url
    helpers.open_app(page, page.url)
    expect(page.locator(".fl-claims li.fl-selected")).to_contain_text(claim)
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


@pytest.fixture
def seeded_server(browser_db: Path, tmp_path: Path) -> Iterator[helpers.Server]:
    """A server on a database where a model extracted claims and coders and a model tagged units
    (`tests.extracted_claims`)."""
    db = seed(helpers.copy_db(browser_db, tmp_path / "seeded.duckdb"))
    with helpers.running_server(db, tmp_path / "server.log") as server:
        yield server


def test_a_tags_filter_shows_which_sentences_matched_and_extracted_claims_stand_apart(
    page: Page, seeded_server: helpers.Server, screenshot_dir: Path
) -> None:
    record = raw.storysumm_records()[DANIEL]
    own = len(record["claims"])
    helpers.open_app(page, f"{seeded_server.url}/explore?dataset=storysumm&summary={DANIEL}")
    helpers.assert_no_exception(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar).to_contain_text(f"{raw.storysumm_expected()['claims']:,} claims")
    expect(sidebar).to_contain_text(f"+ {len(EXTRACTED)} claims extracted by {EXTRACTED_BY}")
    expect(page.locator("p.fl-heading").filter(has_text=f"Claims extracted by {EXTRACTED_BY}")).to_be_visible()
    extracted = page.locator("ol.fl-claims").nth(1).locator("li")
    expect(extracted).to_have_count(len(EXTRACTED))
    expect(extracted.first).to_contain_text(f"C{own + 1} {EXTRACTED[0]}")

    tags = page.get_by_test_id("stMultiSelect").filter(has_text="Tags")
    tags.locator("input").click()
    page.get_by_role("option", name="ambiguity_type: 2", exact=True).click()
    page.keyboard.press("Escape")
    helpers.wait_for_app(page)
    expect(page).to_have_url(re.compile(r"[?&]tags=ambiguity_type"))
    expect(page.get_by_text("The tags the filters ask for are on S2 and S5 of this summary.")).to_be_visible()
    matched = page.locator(".fl-sentences li").filter(has=page.locator(".fl-badge.fl-hit"))
    expect(matched).to_have_count(2)
    expect(matched.first).to_contain_text(f"S2 {record['summary'][1]}")
    expect(matched.first).to_contain_text(f"ambiguity_type: 2 “{NAMES['2']}” ({CODER})")
    assert matched.first.locator("strong.fl-hit").evaluate("el => getComputedStyle(el).fontWeight") == "700"
    other = page.locator(".fl-sentences li").nth(3)
    expect(other).to_contain_text(f"ambiguity_type: 4 “{NAMES['4']}” ({CODER})")
    expect(other.locator(".fl-hit")).to_have_count(0)
    helpers.screenshot(page, screenshot_dir, "explore_tags_and_claim_sets")
