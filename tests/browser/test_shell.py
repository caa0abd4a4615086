"""The shell and the Overview in a real browser: every page opens cleanly, the sidebar dataset
switch changes the Overview, and a cold deep link lands on its page with its query params."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers

pytestmark = pytest.mark.browser


def _metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def _picker(page: Page, dataset: str):
    """The sidebar's radio button for `dataset`."""
    return page.get_by_test_id("stSidebar").get_by_role("radio", name=dataset, exact=True)


@pytest.mark.parametrize("script", helpers.app_pages())
def test_every_page_opens_without_exception(page: Page, app_url: str, screenshot_dir: Path, script: str) -> None:
    helpers.open_app(page, f"{app_url}{helpers.page_url(script)}?dataset=storysumm")
    helpers.assert_no_exception(page)
    expect(_picker(page, "storysumm")).to_be_checked()
    expect(page.get_by_test_id("stSidebar").get_by_test_id("stPageLink").first).to_be_visible()
    shot = helpers.screenshot(page, screenshot_dir, Path(script).stem)
    assert shot.stat().st_size > 10_000


def test_sidebar_dataset_switch_changes_the_overview(page: Page, app_url: str, screenshot_dir: Path) -> None:
    storysumm, tofueval = raw.storysumm_expected(), raw.tofueval_expected()
    helpers.open_app(page, f"{app_url}/?dataset=storysumm")
    expect(_metric(page, "Summaries")).to_have_text(f"{storysumm['summaries']:,}")
    expect(page.get_by_test_id("stHeading").filter(has_text="StorySumm Table 2")).to_be_visible()

    page.get_by_test_id("stSidebar").get_by_test_id("stRadio").get_by_text("tofueval", exact=True).click()
    helpers.wait_for_app(page)

    expect(_metric(page, "Summaries")).to_have_text(f"{tofueval['summaries']:,}")
    expect(_metric(page, "Claims")).to_have_text("0")
    expect(page.get_by_test_id("stHeading").filter(has_text="TofuEval Table 2").first).to_be_visible()
    expect(page.get_by_test_id("stHeading").filter(has_text="StorySumm Table 2")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"/\?dataset=tofueval$"))
    helpers.assert_no_exception(page)
    helpers.screenshot(page, screenshot_dir, "overview_tofueval")

    page.get_by_test_id("stSidebar").get_by_test_id("stPageLink").filter(has_text="Explore").click()
    helpers.wait_for_app(page)
    expect(_picker(page, "tofueval")).to_be_checked()
    expect(page).to_have_url(re.compile(r"/explore\?dataset=tofueval(&|$)"))


def test_cold_deep_link_opens_its_page_with_its_params(page: Page, fresh_server: helpers.Server) -> None:
    """The very first page request of a fresh server: folder routing must still run the right page."""
    helpers.open_app(page, f"{fresh_server.url}/explore?dataset=tofueval")
    helpers.assert_no_exception(page)
    expect(_picker(page, "tofueval")).to_be_checked()
    expect(page).to_have_url(re.compile(r"/explore\?dataset=tofueval(&|$)"))
    expect(page).to_have_title("Explore · FaithLens")


def test_csv_download_holds_the_figure_as_a_table(page: Page, app_url: str) -> None:
    records = list(raw.storysumm_records().values())
    helpers.open_app(page, f"{app_url}/?dataset=storysumm")
    with page.expect_download() as download:
        page.get_by_test_id("stDownloadButton").first.click()
    assert download.value.suggested_filename == "storysumm_generators_summary.csv"
    with open(download.value.path(), encoding="utf-8", newline="") as handle:
        rows = {row["generator"]: row for row in csv.DictReader(handle)}
    faithful = sum(r["label"] == 1 for r in records)
    assert float(rows["Overall"]["% faithful"]) == round(100 * faithful / len(records), 1)
    assert int(rows["Overall"]["summaries"]) == len(records)
    helpers.assert_no_exception(page)


IMPORTED = sorted(path.stem for path in helpers.IMPORTS.glob("*.jsonl"))


@pytest.mark.parametrize("dataset", IMPORTED)
def test_imported_dataset_overview_renders_its_text_inertly(
    page: Page, app_url: str, screenshot_dir: Path, dataset: str
) -> None:
    """Dataset strings (generator names, sources) reach Plotly and tables as text, never markup."""
    models = {json.loads(line).get("model") for line in (helpers.IMPORTS / f"{dataset}.jsonl").open(encoding="utf-8")}
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    helpers.open_app(page, f"{app_url}/?dataset={dataset}")
    helpers.assert_no_exception(page)
    expect(page).to_have_title("Overview · FaithLens")
    main = page.get_by_test_id("stMain")
    expect(main.locator("script, iframe, form, [onerror], [onload], a[href^='javascript']")).to_have_count(0)
    assert page.evaluate("() => window.__xss") is None
    assert dialogs == []
    ticks = set(main.locator("[data-testid=stPlotlyChart] .ytick text").all_text_contents())
    assert {m for m in models if m} <= ticks, "generator names show literally on the chart"
    cells = set(main.locator(".fl-table td").all_text_contents())
    assert {m for m in models if m} <= cells, "and in the table under it"
    helpers.screenshot(page, screenshot_dir, f"overview_{dataset}")
