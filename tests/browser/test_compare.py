"""The Compare page in a real browser: gold vs FABLES on StorySumm draws its heatmap with the counts
from the raw files, and a cell's units open in Explore with the summary selected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers

pytestmark = pytest.mark.browser
FABLES = "fables-gpt-4-turbo-preview"


def test_heatmap_and_a_cell_that_opens_in_explore(page: Page, app_url: str, screenshot_dir: Path) -> None:
    records, fables = raw.storysumm_records(), raw.storysumm_predictions()[FABLES]
    missed = sorted(i for i, r in records.items() if r["label"] == 0 and fables[i]["label"] == 1)
    caught = [i for i, r in records.items() if r["label"] == 0 and fables[i]["label"] == 0]

    helpers.open_app(page, f"{app_url}/compare?dataset=storysumm&sources={FABLES}&pair={FABLES}")
    helpers.assert_no_exception(page)
    matrix = page.get_by_test_id("stHtml").locator(".fl-cm").first
    expect(matrix).to_be_visible()
    expect(matrix).to_contain_text(f"{FABLES} · all units")
    expect(matrix).to_contain_text(f"{len(missed)}")
    expect(matrix).to_contain_text(f"{len(caught)}")
    helpers.screenshot(page, screenshot_dir, "compare_storysumm_fables")

    page.get_by_role("radio", name=re.compile(rf"gold unfaithful · {re.escape(FABLES)} faithful")).click()
    helpers.wait_for_app(page)
    links = page.get_by_test_id("stPageLink").filter(has_text="Open in Explore")
    expect(links).to_have_count(len(missed))
    expect(page).to_have_url(re.compile(r"[?&]cell=unfaithful(%2C|,)faithful(&|$)"))

    links.first.click()
    helpers.wait_for_app(page)
    expect(page).to_have_url(re.compile(rf"/explore\?dataset=storysumm&.*summary={missed[0]}(&|$)"))
    helpers.assert_no_exception(page)
    first_sentence = records[missed[0]]["summary"][0].strip()
    expect(page.get_by_test_id("stMain")).to_contain_text(first_sentence[:60])
    helpers.screenshot(page, screenshot_dir, "compare_cell_opened_in_explore")
