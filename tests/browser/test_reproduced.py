"""The Reproduced figures page in a real browser: opened cold as a fresh server's first request, it
lists every paper's figures with its summary line, and a row's link opens Compare on the view that
computes it, the paper's figures beside ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser import helpers
from tests.core import reproduced_printed as printed
from tests.core import storysumm_expected as expected
from tests.core import storysumm_published as typed

pytestmark = pytest.mark.browser


def test_reproduced_opens_cold_and_a_row_opens_compare(
    page: Page, fresh_server: helpers.Server, screenshot_dir: Path
) -> None:
    helpers.open_app(page, f"{fresh_server.url}/reproduced?dataset=storysumm")
    helpers.assert_no_exception(page)
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text(f"{printed.ALL_PAPERS} published figures:")
    expect(page.locator(".fl-pp")).to_have_count(sum(printed.TABLES.values()))
    expect(page.get_by_test_id("stHeading").filter(has_text="Table 8")).to_be_visible()
    helpers.screenshot(page, screenshot_dir, "reproduced_cold")

    table8 = page.locator(".fl-pp").nth(2)  # Tables 2, 6, then 8
    row = table8.locator("tr.fl-pp-figures").filter(has_text="UniEval").first
    expect(row).to_contain_text("0.34")
    expect(row.locator("td.fl-pp-diff")).to_have_count(0)
    expect(row.locator("td.fl-pp-ok")).to_have_count(len(typed.FIELDS))
    note = row.locator("xpath=following-sibling::tr[1]")
    expect(note).to_contain_text("Every figure matches")
    note.get_by_role("link", name="Open in Compare").click()
    helpers.wait_for_app(page)
    expect(page).to_have_url(
        re.compile(r"/compare\?dataset=storysumm&sources=unieval&tuning=cutpoints&paper=1&view=val$")
    )
    helpers.assert_no_exception(page)
    expect(page.get_by_role("switch", name=re.compile("^Paper's figures beside ours"))).to_be_checked()
    papers = page.locator(".fl-pp")
    expect(papers).to_contain_text("Table 11")
    threshold = expected.thresholds("cutpoints")["unieval"]
    expect(main).to_contain_text(f"Tuned on the val split: {threshold:.4f}")
    helpers.screenshot(page, screenshot_dir, "compare_from_reproduced")
