"""Runs on the Runs page in a real browser, against the scripted OpenAI-protocol server: failures grouped
by cause with their units in context and a link to Explore, the provider named once; Resume on a
finished run whose calls failed, then Retry failed; Cancel then Resume without a stale "cancelling";
a budget stop resumed with a new budget; and a run stopped on a wrong key. `llm runs --json`, read
while the app holds the file, says the same state at each step.

Runs that set the scene are made with `llm run` before the app starts (it writes; the app is the one
writer after). Expected units and their stories come from the raw StorySumm file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers
from tests.llm.runs_support import storysumm_summaries
from tests.llmserver import LLMServer, Reply, Request

pytestmark = pytest.mark.browser

KEY = "test-key"
FAULTS = {
    "rate limit": Reply(status=429, message="slow down", headers={"retry-after-ms": "10"}),
    "server error": Reply(status=500, message="upstream exploded"),
    "refused": Reply(refusal=True),
    "unparseable": Reply("Perhaps, it is hard to say."),
}
"""One val summary per cause (the first four by id); the first two are calls that failed."""
CALL_FAILED = ("rate limit", "server error")


class Scripted:
    """The scripted model: faults for the chosen summaries while `faulty`, 401 to a wrong key, a delay."""

    def __init__(self) -> None:
        val = storysumm_summaries("val")
        self.cause_of = {val[n].summary_id: cause for n, cause in enumerate(FAULTS)}
        self.faulty = True
        self.delay = 0.0
        self.asked: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return Reply(status=401, message="invalid api key")
        summary = raw.storysumm_summary_in(request.last_user_text())
        with self._lock:
            self.asked[summary] += 1
        if self.faulty and summary in self.cause_of:
            return FAULTS[self.cause_of[summary]]
        return Reply("Yes", delay=self.delay)


@pytest.fixture
def scripted() -> Iterator[tuple[LLMServer, Scripted]]:
    model = Scripted()
    with LLMServer(model) as llm:
        yield llm, model


def _env(llm: LLMServer, key: str = KEY) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": key,
        "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url,
        "FAITHLENS_LLM_ATTEMPTS": "1",
        "FAITHLENS_LLM_TIMEOUT": "20",
    }


def _faithlens(args: list[str], db: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "faithlens", *args, "--db", str(db)]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=helpers.ROOT, env={**os.environ, **env}, timeout=120
    )


def _llm_run(db: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["llm", "run", "--dataset", "storysumm", "--level", "summary", "--method", "storysumm-binary"]
    return _faithlens([*args, "--provider", "openai", "--model", "gpt-4o", "--split", "val", *extra], db, env)


def _runs_json(db: Path, env: dict[str, str]) -> dict[int, dict]:
    listed = _faithlens(["llm", "runs", "--dataset", "storysumm", "--json"], db, env)
    assert listed.returncode == 0, listed.stderr
    return {run["run_id"]: run for run in json.loads(listed.stdout)}


def _state_line(page: Page) -> str:
    return page.get_by_test_id("stMain").locator("p").filter(has_text="State:").first.inner_text()


def test_failures_by_cause_in_context_then_resume_and_retry(
    page: Page, scripted: tuple[LLMServer, Scripted], browser_db: Path, tmp_path: Path, screenshot_dir: Path
) -> None:
    llm, model = scripted
    db = helpers.copy_db(browser_db, tmp_path / "runs.duckdb")
    made = _llm_run(db, _env(llm))
    assert made.returncode == 0, made.stderr
    val = storysumm_summaries("val")
    n = len(val)
    records = raw.storysumm_records()
    with helpers.running_server(db, tmp_path / "server.log", extra_env=_env(llm)) as app:
        main = page.get_by_test_id("stMain")
        helpers.open_app(page, f"{app.url}/runs?dataset=storysumm&run=1")
        helpers.assert_no_exception(page)
        expect(main).to_contain_text(f"State: finished: {n - 4} done, 4 failed of {n}")
        expect(main).to_contain_text("Failures by cause (4 failed)")
        expect(main).to_contain_text(f"Asked openai at {llm.openai_base_url}, model gpt-4o.")

        counts = main.locator(".fl-rf-counts tr[data-cause]")
        expect(counts).to_have_count(4)
        assert [row.get_attribute("data-cause") for row in counts.all()] == list(FAULTS)
        expect(counts.filter(has_text="rate limit")).to_contain_text("Resume asks again")
        expect(counts.filter(has_text="refused")).to_contain_text("Retry failed asks for a new sample")

        listed = main.locator(".fl-rf-list tbody tr:not(.fl-rf-group)")
        expect(listed).to_have_count(4)
        assert "127.0.0.1" not in main.locator(".fl-rf-list").inner_text(), "the base URL is named once, above"
        for row, (summary_id, cause) in zip(listed.all(), model.cause_of.items(), strict=True):
            assert row.get_attribute("data-cause") == cause
            expect(row).to_contain_text(summary_id)
            expect(row).to_contain_text(f"Story {records[summary_id]['story-id']}")
            expect(row).to_contain_text(records[summary_id]["model"])
            expect(row).to_contain_text(next(s.first_sentence for s in val if s.summary_id == summary_id)[:60])
        expect(listed.nth(1)).to_contain_text("500 server error: upstream exploded")
        expect(listed.first.locator(".fl-rf-attempts")).to_have_text("1 attempt in all")
        helpers.screenshot(page, screenshot_dir, "runs_failures_by_cause")

        resume = page.get_by_role("button", name="Resume (2 missing)")
        expect(resume).to_be_visible()
        expect(page.get_by_role("button", name="Retry failed (4)")).to_be_visible()

        first = next(iter(model.cause_of))
        listed.first.get_by_role("link", name="summary").click()
        helpers.wait_for_app(page)
        expect(page).to_have_url(re.compile(rf"/explore\?dataset=storysumm&.*summary={first}"))
        helpers.assert_no_exception(page)
        expect(page.get_by_test_id("stMain")).to_contain_text(val[0].first_sentence[:60])
        page.go_back()
        helpers.wait_for_app(page)

        model.faulty = False
        page.get_by_role("button", name="Resume (2 missing)").click()
        expect(main).to_contain_text(f"State: finished: {n - 2} done, 2 failed of {n}", timeout=30_000)
        assert [model.asked[s] for s in model.cause_of] == [2, 2, 1, 1], "Resume asked only the calls that failed"
        expect(main.locator(".fl-rf-counts tr[data-cause]")).to_have_count(2)
        expect(page.get_by_role("button", name="Resume", exact=False)).to_have_count(0)
        assert _runs_json(db, _env(llm))[1]["by_cause"] == {"refused": 1, "unparseable": 1}

        page.get_by_role("button", name="Retry failed (2)").click()
        expect(main).to_contain_text(f"State: finished: {n} done, 0 failed of {n}", timeout=30_000)
        expect(main.locator(".fl-rf-list")).to_have_count(0)
        listed_now = _runs_json(db, _env(llm))[1]
        assert (listed_now["state"], listed_now["failures"], listed_now["resume_offered"]) == ("finished", [], False)
        helpers.assert_no_exception(page)


def test_cancel_then_resume_reads_running_until_it_finishes(
    page: Page, scripted: tuple[LLMServer, Scripted], browser_db: Path, tmp_path: Path, screenshot_dir: Path
) -> None:
    llm, model = scripted
    model.faulty, model.delay = False, 0.25
    db = helpers.copy_db(browser_db, tmp_path / "runs.duckdb")
    summaries = len(raw.storysumm_records())
    with helpers.running_server(db, tmp_path / "server.log", extra_env=_env(llm)) as app:
        main = page.get_by_test_id("stMain")
        helpers.open_app(page, f"{app.url}/runs?dataset=storysumm")
        concurrency = page.get_by_role("spinbutton", name="Concurrency")
        concurrency.fill("1")
        concurrency.press("Enter")
        helpers.wait_for_app(page)
        page.get_by_role("button", name="Estimate").click()
        helpers.wait_for_app(page)
        page.get_by_role("button", name="Start run").click()
        expect(main).to_contain_text("State: running", timeout=10_000)
        assert _runs_json(db, _env(llm))[1]["state"] == "running"

        page.get_by_role("button", name="Cancel").click()
        expect(main).to_contain_text("State: cancelled: cancelled after", timeout=15_000)
        assert _runs_json(db, _env(llm))[1]["state"] == "cancelled"
        helpers.screenshot(page, screenshot_dir, "runs_cancelled")

        page.get_by_role("button", name="Resume", exact=True).click()
        expect(main).to_contain_text("State: running", timeout=10_000)
        for _ in range(6):
            line = _state_line(page)
            assert "cancelling" not in line, line
            page.wait_for_timeout(500)
        listed = _runs_json(db, _env(llm))[1]
        assert (listed["state"], listed["reason"]) == ("running", None)
        expect(main).to_contain_text(f"State: finished: {summaries} done, 0 failed of {summaries}", timeout=60_000)
        assert _runs_json(db, _env(llm))[1]["state"] == "finished"
        helpers.assert_no_exception(page)


def test_a_budget_stop_and_a_wrong_key_offer_resume(
    page: Page, scripted: tuple[LLMServer, Scripted], browser_db: Path, tmp_path: Path
) -> None:
    llm, model = scripted
    model.faulty = False
    db = helpers.copy_db(browser_db, tmp_path / "runs.duckdb")
    budget = _llm_run(db, _env(llm), "--budget", "0.001")
    assert budget.returncode == 0, budget.stderr
    wrong = _llm_run(db, _env(llm, key="wrong-key"), "--source", "llm/wrong-key")
    assert wrong.returncode == 1, wrong.stderr
    n = len(storysumm_summaries("val"))
    with helpers.running_server(db, tmp_path / "server.log", extra_env=_env(llm)) as app:
        main = page.get_by_test_id("stMain")
        helpers.open_app(page, f"{app.url}/runs?dataset=storysumm&run=1")
        stopped = _runs_json(db, _env(llm))[1]
        remaining = stopped["total"] - stopped["done"] - stopped["failed"]
        expect(main).to_contain_text("State: budget: stopped before passing the budget of $0.001")
        expect(main).to_contain_text("Not done, by cause")
        expect(main.locator('.fl-rf-counts tr[data-cause="budget"]')).to_contain_text(f"{remaining:,}")
        assert stopped["by_cause"] == {"budget": remaining} and remaining > 0 and stopped["resume_offered"]
        new_budget = page.get_by_role("spinbutton", name="New budget (USD) for Resume")
        new_budget.fill("5")
        new_budget.press("Enter")
        helpers.wait_for_app(page)
        page.get_by_role("button", name="Resume", exact=True).click()
        expect(main).to_contain_text(f"State: finished: {n} done, 0 failed of {n}", timeout=30_000)
        assert _runs_json(db, _env(llm))[1]["reason"] == f"{n} done, 0 failed of {n}"

        helpers.open_app(page, f"{app.url}/runs?dataset=storysumm&run=2")
        line = _state_line(page)
        assert line.startswith(f"State: stopped: openai at {llm.openai_base_url}: 401"), line
        assert "OPENAI_API_KEY" in line and "\\" not in line
        listed = _runs_json(db, _env(llm))[2]
        assert (listed["state"], listed["failed"], listed["resume_offered"]) == ("stopped", 0, True)
        page.get_by_role("button", name="Resume", exact=True).click()
        expect(main).to_contain_text(f"State: finished: {n} done, 0 failed of {n}", timeout=30_000)
        helpers.assert_no_exception(page)
