"""What the URL and the browser's history do as a user moves around: one action is one history
entry and Back returns to the previous view; a control that stops applying is reset, so the
drill-down always agrees with the matrices above it; changing a filter opens its first match."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers

pytestmark = pytest.mark.browser


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def _heading(page: Page):
    return page.get_by_test_id("stMain").get_by_test_id("stHeading")


def test_each_action_is_one_history_entry_and_back_walks_them_in_order(page: Page, app_url: str) -> None:
    helpers.open_app(page, f"{app_url}/explore?dataset=storysumm")
    visited = [page.url]
    for _ in range(2):
        page.get_by_role("button", name="Next").click()
        helpers.wait_for_app(page)
        assert page.url != visited[-1], "Next names the summary it opened"
        visited.append(page.url)
    page.get_by_test_id("stSidebar").get_by_test_id("stPageLink").filter(has_text="Compare").click()
    helpers.wait_for_app(page)
    expect(page).to_have_url(re.compile(r"/compare\?dataset=storysumm$"))
    for expected in reversed(visited):
        page.go_back()
        helpers.wait_for_app(page)
        assert page.url == expected
    helpers.assert_no_exception(page)


def test_a_new_level_resets_the_drill_down_so_it_agrees_with_the_matrices(page: Page, app_url: str) -> None:
    helpers.open_app(page, f"{app_url}/compare?dataset=storysumm&dsplit=val&cell=faithful%2Cunfaithful")
    radios = page.get_by_test_id("stMain").get_by_test_id("stRadio")
    drill_split = radios.filter(has=page.get_by_text("Split", exact=True))
    expect(drill_split.get_by_role("radio", name="val", exact=True)).to_be_checked()
    radios.first.get_by_text("sentence", exact=True).click()
    helpers.wait_for_app(page)
    query = _query(page)
    assert query["level"] == ["sentence"]
    assert not {"dsplit", "cell", "pair", "view"} & set(query), query
    expect(drill_split.get_by_role("radio", name="all", exact=True)).to_be_checked()
    main = page.get_by_test_id("stMain").inner_text()
    shown = int(re.search(r"n ([\d,]+) · κ", main).group(1).replace(",", ""))
    cells = page.get_by_test_id("stButtonGroup").inner_text()
    assert sum(int(n.replace(",", "")) for n in re.findall(r"\(([\d,]+)\)", cells)) == shown
    helpers.assert_no_exception(page)


def test_a_filter_that_excludes_the_open_summary_opens_its_first_match(page: Page, app_url: str) -> None:
    records = raw.storysumm_records()
    val = next(sid for sid, record in records.items() if record["split"] == "val")
    helpers.open_app(page, f"{app_url}/explore?dataset=storysumm&summary={val}")
    expect(_heading(page).filter(has_text=val)).to_have_count(1)
    page.get_by_test_id("stSelectbox").filter(has_text="Split").click()
    page.get_by_role("option", name="test", exact=True).click()
    helpers.wait_for_app(page)
    query = _query(page)
    assert query.get("split") == ["test"] and "summary" not in query, query
    opened = _heading(page).filter(has_text=" · ").inner_text().rsplit(" · ", 1)[-1]
    assert records[opened]["split"] == "test"
    expect(page.get_by_test_id("stMain")).to_contain_text("Summary 1 of")
    helpers.assert_no_exception(page)


def test_a_page_link_keeps_the_dataset_when_the_query_string_is_the_same(page: Page, app_url: str) -> None:
    helpers.open_app(page, f"{app_url}/explore?dataset=tofueval")
    page.get_by_test_id("stSidebar").get_by_test_id("stPageLink").filter(has_text="Compare").click()
    helpers.wait_for_app(page)
    expect(page).to_have_url(re.compile(r"/compare\?dataset=tofueval$"))
    expect(page.get_by_test_id("stMain")).to_contain_text("summary level of tofueval")
    helpers.assert_no_exception(page)
