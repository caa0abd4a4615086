"""A run from the Runs page in a real browser, against the local OpenAI-protocol server: StorySumm
Binary over all 96 summaries, started after its estimate; the user goes to Explore while it works and
comes back to find it finished (the run lives in the server's job registry, not in the page); then
the Compare link shows the new source's confusion matrix against gold.

The expected matrix is counted here from the scripted answers and the gold labels of the raw file."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers
from tests.llmserver import LLMServer, Reply

pytestmark = pytest.mark.browser

MODEL = "gpt-4o"
SOURCE = f"llm/storysumm-binary/{MODEL}"
DELAY_S = 0.1
CONCURRENCY = 2
"""96 answers, two at a time, a tenth of a second each: about five seconds of work, time to leave."""


def _says_no() -> set[str]:
    """The summaries the scripted model calls unfaithful: every third by id."""
    return set(sorted(raw.storysumm_records())[::3])


@pytest.fixture
def llm_and_app(browser_db: Path, tmp_path: Path) -> Iterator[tuple[LLMServer, helpers.Server]]:
    no = _says_no()

    def respond(request) -> Reply:
        return Reply("No" if raw.storysumm_summary_in(request.last_user_text()) in no else "Yes", delay=DELAY_S)

    with LLMServer(respond) as llm:
        settings = {"OPENAI_API_KEY": "test-key", "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url}
        db = helpers.copy_db(browser_db, tmp_path / "runs.duckdb")
        with helpers.running_server(db, tmp_path / "server.log", extra_env=settings) as app:
            yield llm, app


def _expected_matrix() -> list[int]:
    """Counts of (gold, answer) in reading order: gold faithful then unfaithful on the rows, the
    answer faithful ('Yes') then unfaithful ('No') on the columns."""
    records, no = raw.storysumm_records(), _says_no()
    gold = {i: raw.BINARY[r["label"]] for i, r in records.items()}
    answer = {i: "unfaithful" if i in no else "faithful" for i in records}
    return [
        sum(1 for i in records if gold[i] == row and answer[i] == column)
        for row in ("faithful", "unfaithful")
        for column in ("faithful", "unfaithful")
    ]


def _sidebar_link(page: Page, name: str) -> None:
    page.get_by_test_id("stSidebar").get_by_role("link", name=name, exact=True).click()
    helpers.wait_for_app(page)


def test_a_run_survives_leaving_the_page_and_feeds_compare(
    page: Page, llm_and_app: tuple[LLMServer, helpers.Server], screenshot_dir: Path
) -> None:
    llm, app = llm_and_app
    summaries = len(raw.storysumm_records())
    main = page.get_by_test_id("stMain")
    helpers.open_app(page, f"{app.url}/runs?dataset=storysumm")
    helpers.assert_no_exception(page)
    concurrency = page.get_by_role("spinbutton", name="Concurrency")
    concurrency.fill(str(CONCURRENCY))
    concurrency.press("Enter")
    helpers.wait_for_app(page)
    page.get_by_role("button", name="Estimate").click()
    helpers.wait_for_app(page)
    expect(main).to_contain_text(f"{summaries} items: 0 already stored (free), 0 unfit")
    expect(main).to_contain_text(f"{summaries} calls;")
    helpers.screenshot(page, screenshot_dir, "runs_estimate")

    page.get_by_role("button", name="Start run").click()
    helpers.wait_for_app(page)
    expect(main).to_contain_text("State: running")
    expect(page).to_have_url(re.compile(r"/runs\?dataset=storysumm&run=1$"))
    helpers.screenshot(page, screenshot_dir, "runs_running")

    _sidebar_link(page, "Explore")
    asked_when_left = len(llm.requests)
    assert asked_when_left < summaries, "the user left while the run was still working"
    expect(page).to_have_url(re.compile(r"/explore\?dataset=storysumm$"))
    _sidebar_link(page, "Runs")
    expect(main).to_contain_text(f"State: finished: {summaries} done, 0 failed of {summaries}", timeout=60_000)
    helpers.assert_no_exception(page)
    assert len([r for r in llm.requests if r.path.endswith("/chat/completions")]) == summaries
    helpers.screenshot(page, screenshot_dir, "runs_finished")

    main.get_by_role("link", name="Compare with gold").click()
    helpers.wait_for_app(page)
    helpers.assert_no_exception(page)
    matrix = page.get_by_test_id("stHtml").locator(".fl-cm").filter(has_text=f"{SOURCE} · all units")
    expect(matrix).to_have_count(1)
    counts = [int(text.replace(",", "")) for text in matrix.locator(".fl-cm-count").all_inner_texts()]
    assert counts == _expected_matrix()
    helpers.screenshot(page, screenshot_dir, "runs_compare")
