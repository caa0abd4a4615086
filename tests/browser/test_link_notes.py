"""Links in a real browser: every link value Explore or Rewrite cannot use gets its note on the page
itself (not only in the sidebar), and nothing it could not use stays in the URL; Rewrite's URL names the
dataset, the summary and the sentence together, so a copied demo link opens the same sentence."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers

pytestmark = pytest.mark.browser

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"


def _notes(page: Page) -> list[str]:
    """The link notes in the page's main area."""
    alerts = page.get_by_test_id("stMain").get_by_test_id("stAlert").all_inner_texts()
    return [alert for alert in alerts if "in the link was ignored" in alert]


def _noted(page: Page, *starts: str) -> None:
    notes = _notes(page)
    for start in starts:
        assert any(f"{start} in the link was ignored" in note for note in notes), (start, notes)


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def test_explore_notes_each_link_value_it_cannot_use(page: Page, app_url: str) -> None:
    helpers.open_app(page, f"{app_url}/explore?dataset=nope&summary=abc&source=gold")
    helpers.assert_no_exception(page)
    _noted(page, "dataset='nope'", "summary='abc'")
    expect(page.get_by_test_id("stMain")).to_contain_text("it belonged to dataset 'nope', which is not loaded")
    assert _query(page).get("dataset") != ["nope"]

    helpers.open_app(page, f"{app_url}/explore?dataset=storysumm&summary={DANIEL}&sentence=2&ngram=7&claim=999")
    helpers.assert_no_exception(page)
    _noted(page, "ngram='7'", "claim='999'")
    expect(page.get_by_test_id("stMain")).to_contain_text("expected one of 2, 3, 4, 5")
    assert "ngram" not in _query(page) and "claim" not in _query(page) and _query(page)["sentence"] == ["2"]

    summary_id = "{} / {}".format(
        *next((book, model) for book, models in raw.fables_books().items() for model in models)
    )
    helpers.open_app(page, f"{app_url}/explore?" + f"dataset=fables&summary={summary_id}&passages=4&min_score=40")
    helpers.assert_no_exception(page)
    _noted(page, "passages='4'", "min_score='40'")
    assert "passages" not in _query(page) and "min_score" not in _query(page)


def test_rewrite_notes_a_summary_or_sentence_it_cannot_open(page: Page, app_url: str) -> None:
    helpers.open_app(page, f"{app_url}/rewrite?dataset=storysumm&summary=zzz&sentence=2")
    helpers.assert_no_exception(page)
    _noted(page, "summary='zzz'", "sentence='2'")
    assert _query(page) == {"dataset": ["storysumm"]}, "neither the unknown summary nor the first one is written"

    sentences = len(raw.storysumm_records()[DANIEL]["summary"])
    helpers.open_app(page, f"{app_url}/rewrite?dataset=storysumm&summary={DANIEL}&sentence=99")
    _noted(page, "sentence='99'")
    expect(page.get_by_test_id("stMain")).to_contain_text(f"has {sentences} sentences")

    helpers.open_app(page, f"{app_url}/rewrite?dataset=nope&sentence=3")
    _noted(page, "dataset='nope'", "sentence='3'")
    assert "sentence" not in _query(page)


def test_a_copied_rewrite_link_opens_the_same_sentence(page: Page, app_url: str) -> None:
    helpers.open_app(page, f"{app_url}/rewrite")
    helpers.assert_no_exception(page)
    page.get_by_test_id("stSelectbox").filter(has_text="Sentence").locator("input").click()
    page.get_by_role("option", name=re.compile(r"^S2: ")).click()
    helpers.wait_for_app(page)
    shown = page.get_by_test_id("stText").first.inner_text()
    query = _query(page)
    assert set(query) == {"dataset", "summary", "sentence"} and query["sentence"] == ["2"], query
    copied = page.url

    fresh = page.context.browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    try:
        helpers.open_app(fresh, copied)
        helpers.assert_no_exception(fresh)
        assert _notes(fresh) == []
        picker = fresh.get_by_test_id("stSelectbox").filter(has_text="Sentence").locator("input")
        expect(picker).to_have_value(re.compile(r"^S2: "))
        expect(fresh.get_by_test_id("stText").first).to_have_text(shown)
        assert _query(fresh) == query
    finally:
        fresh.context.close()
