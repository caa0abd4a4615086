"""The Errors page in a real browser: a heatmap count is a link, and clicking it lands on Explore
counting exactly those units (TofuEval's Extrinsic Information sentences on marginal topics, and the
hard StorySumm summaries MiniCheck flags), with the numbers computed from the raw files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests import raw
from tests.browser import helpers

pytestmark = pytest.mark.browser
EXTRINSIC = "Extrinsic Information"
MINICHECK = "minicheck-flan-t5-large"


def heatmap_link(table: Locator, row: str, column: str) -> Locator:
    """The link in the heatmap cell at `row` (its header text) and `column` (header, maybe with "(...)")."""
    headers = table.locator("thead th").all_inner_texts()
    (index,) = [i for i, h in enumerate(headers) if h.strip() == column or h.strip().startswith(f"{column} (")]
    header = table.page.locator("th", has_text=re.compile(rf"^\s*{re.escape(row)}\s*$"))
    cells = table.locator("tbody tr").filter(has=header)
    expect(cells).to_have_count(1)
    return cells.locator("td").nth(index - 1).locator("a")


def marginal_extrinsic() -> tuple[int, int]:
    """(sentences, summaries) of TofuEval carrying Extrinsic Information on a marginal topic, from the raw CSVs."""
    sentences, summaries = 0, set()
    folder = raw.DATA / "tofueval" / "factual_consistency"
    for corpus in ("mediasum", "meetingbank"):
        path = raw.DATA / "tofueval" / "topic_category" / f"{corpus}_topic_category.json"
        categories = json.loads(path.read_text(encoding="utf-8"))
        for row in raw.tofueval_rows(sorted(folder.glob(f"{corpus}_*.csv"))):
            types = [t.strip() for t in row["type"].split(",")]
            if categories[row["topic"]] == "marginal" and EXTRINSIC in types:
                sentences += 1
                summaries.add((row["doc_id"], row["topic"], row["model_name"]))
    return sentences, len(summaries)


def explore_caption(page: Page) -> Locator:
    return page.get_by_test_id("stMarkdown").filter(has_text=re.compile(r"^\s*[\d,]+ (sentences|summaries) "))


def test_a_topic_type_cell_opens_its_sentences_in_explore(page: Page, app_url: str, screenshot_dir: Path) -> None:
    sentences, summaries = marginal_extrinsic()
    helpers.open_app(page, f"{app_url}/errors?dataset=tofueval&by=topic_type")
    helpers.assert_no_exception(page)
    heatmap = page.locator(".fl-hm table").first
    expect(heatmap).to_be_visible()
    link = heatmap_link(heatmap, EXTRINSIC, "marginal")
    expect(link).to_have_text(str(sentences))
    helpers.screenshot(page, screenshot_dir, "errors_tofueval_topic_type")

    link.click()
    helpers.wait_for_app(page)
    expect(page).to_have_url(re.compile(r"/explore\?dataset=tofueval&.*topic_type=marginal"))
    helpers.assert_no_exception(page)
    expect(page.get_by_test_id("stAlertContentWarning")).to_have_count(0)  # no link value was dropped
    caption = explore_caption(page)
    expect(caption).to_have_count(1)
    said = f"{sentences} sentences of {summaries} summaries where the topic is marginal and a sentence carries "
    expect(caption).to_have_text(  # the cell counted gold's tags, and so does the link (issue 25)
        re.compile(rf"^\s*{re.escape(said)}error_type: {EXTRINSIC} \(tagged by gold\) \(of [\d,]+ summaries\)\s*$")
    )
    helpers.screenshot(page, screenshot_dir, "errors_cell_opened_in_explore")


def test_a_recall_cell_opens_the_flagged_summaries_in_explore(page: Page, app_url: str) -> None:
    records, minicheck = raw.storysumm_records(), raw.storysumm_predictions()[MINICHECK]
    flagged = [
        i for i, r in records.items() if r["difficulty"] == "hard" and r["label"] == 0 and minicheck[i]["label"] == 0
    ]
    helpers.open_app(page, f"{app_url}/errors?dataset=storysumm")
    helpers.assert_no_exception(page)
    recall = page.locator(".fl-hm table").filter(has=page.locator("thead th", has_text=MINICHECK))
    expect(recall).to_have_count(1)
    link = heatmap_link(recall, "hard", MINICHECK)
    expect(link).to_have_text(str(len(flagged)))

    link.click()
    helpers.wait_for_app(page)
    expect(page).to_have_url(re.compile(r"/explore\?dataset=storysumm&"))
    helpers.assert_no_exception(page)
    caption = explore_caption(page)
    expect(caption).to_have_count(1)
    expect(caption).to_contain_text(
        re.compile(rf"^\s*{len(flagged)} summaries where the summary carries difficulty: hard")
    )
