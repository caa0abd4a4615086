"""Rewrite with two models in a real browser, against the scripted OpenAI-protocol server with a latency
per model: both models are asked at once, each streaming into its own column, so the page shows both
answers after about the slower model's time, not the sum. A failure of one model leaves the other's
answer shown and stored; an explanation split that does not parse says so beside the rewrite."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers
from tests.llmserver import LLMServer, Reply, Request

pytestmark = pytest.mark.browser

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
SENTENCE = 5
SLOW, FAST = "slow-model", "fast-model"
DELAY_S = {SLOW: 2.5, FAST: 1.0}
"""Seconds each model waits before its first byte, on every request (the rewrite, then its points)."""
POINT = "The story only shows this scene."


@dataclass
class Script:
    """What the scripted server answers, and when each request arrived (the server's own log)."""

    failing: str | None = None
    points: str = f"<item>{POINT}</item>"
    arrivals: list[tuple[str, str, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def respond(self, request: Request) -> Reply:
        rewrite = "Rewrite the following summary sentence" in request.last_user_text()
        with self.lock:
            self.arrivals.append((request.model, "rewrite" if rewrite else "points", time.monotonic()))
        delay = DELAY_S[request.model]
        if request.model == self.failing:
            return Reply(status=400, message=f"the model {request.model} is not served here", delay=delay)
        if rewrite:
            return Reply(
                f"<answer>{_rewrite()}</answer>\nThe summary adds detail the story does not give.", delay=delay
            )
        return Reply(self.points, delay=delay)

    def arrived(self, model: str, kind: str) -> float:
        (moment,) = [t for m, k, t in self.arrivals if (m, k) == (model, kind)]
        return moment


def _sentence() -> str:
    return raw.storysumm_records()[DANIEL]["summary"][SENTENCE - 1].strip()


def _rewrite() -> str:
    return _sentence().rstrip().removesuffix(".") + " in the story."


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def app(browser_db: Path, tmp_path: Path, script: Script) -> Iterator[helpers.Server]:
    with LLMServer(script.respond) as llm:
        settings = {"OPENAI_API_KEY": "test-key", "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url}
        db = helpers.copy_db(browser_db, tmp_path / "rewrite.duckdb")
        with helpers.running_server(db, tmp_path / "server.log", extra_env=settings) as server:
            yield server


def _rewrite_with_both(page: Page, url: str) -> None:
    helpers.open_app(page, f"{url}/rewrite?dataset=storysumm&summary={DANIEL}&sentence={SENTENCE}")
    helpers.assert_no_exception(page)
    page.get_by_text("Compare with a second model").click()
    helpers.wait_for_app(page)
    for index, model in enumerate((SLOW, FAST)):
        field_ = page.get_by_label("Model", exact=True).nth(index)
        field_.fill(model)
        field_.press("Enter")
        helpers.wait_for_app(page)
    page.get_by_role("button", name="Rewrite", exact=True).click()
    helpers.wait_for_app(page)


def _column(page: Page, model: str):
    """The answer column headed by `model`."""
    return page.get_by_test_id("stColumn").filter(has=page.get_by_text(f"{model} · openai", exact=True))


def test_both_models_are_asked_at_once_and_each_streams_into_its_own_column(
    page: Page, app: helpers.Server, script: Script, screenshot_dir: Path
) -> None:
    _rewrite_with_both(page, app.url)
    helpers.assert_no_exception(page)
    for model in (SLOW, FAST):
        column = _column(page, model)
        expect(column.locator(".fl-diff ins.fl-ins")).to_have_text("in the story")
        expect(column.get_by_test_id("stCaptionContainer").filter(has_text="new answer")).to_have_count(1)
        expect(column.get_by_test_id("stMetric").filter(has_text="Explanation points")).to_contain_text("1")
    expect(page.get_by_text("Earlier rewrites of this sentence (2)")).to_be_visible()
    helpers.screenshot(page, screenshot_dir, "rewrite_two_models_at_once")

    assert sorted((m, k) for m, k, _ in script.arrivals) == sorted(
        (m, k) for m in (SLOW, FAST) for k in ("rewrite", "points")
    ), "one rewrite and one points request per model"
    slow, fast = script.arrived(SLOW, "rewrite"), script.arrived(FAST, "rewrite")
    assert fast < slow + DELAY_S[SLOW] and slow < fast + DELAY_S[FAST], (
        "each model was asked before the other answered: both requests were in flight at once "
        f"(arrived {fast - slow:+.2f} s apart; one after the other they would be at least {DELAY_S[FAST]} s apart)"
    )


@pytest.fixture
def failing_script() -> Script:
    return Script(failing=SLOW, points="It says the story shows one scene.")


def test_a_failing_model_leaves_the_other_answer_shown_and_stored(
    page: Page, browser_db: Path, tmp_path: Path, failing_script: Script, screenshot_dir: Path
) -> None:
    with LLMServer(failing_script.respond) as llm:
        settings = {"OPENAI_API_KEY": "test-key", "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url}
        db = helpers.copy_db(browser_db, tmp_path / "failing.duckdb")
        with helpers.running_server(db, tmp_path / "server.log", extra_env=settings) as app:
            _rewrite_with_both(page, app.url)
            helpers.assert_no_exception(page, error_box_expected=True)
            failed = _column(page, SLOW).get_by_test_id("stAlertContentError")
            expect(failed).to_have_count(1)
            expect(failed).to_contain_text(f"the model {SLOW} is not served here")
            answered = _column(page, FAST)
            expect(answered.get_by_test_id("stAlertContentError")).to_have_count(0)
            expect(answered.locator(".fl-diff ins.fl-ins")).to_have_text("in the story")
            points = answered.get_by_test_id("stMetric").filter(has_text="Explanation points")
            expect(points.get_by_test_id("stMetricDelta")).to_have_text("not parsed")
            expect(points.get_by_test_id("stMetricDelta")).to_be_visible()
            expect(answered).to_contain_text("Explanation points (ARM A.3) failed: parse_failure")
            expect(page.get_by_text("Earlier rewrites of this sentence (1)")).to_be_visible()
            helpers.screenshot(page, screenshot_dir, "rewrite_one_model_fails")
            helpers.open_app(page, page.url)
            expect(page.get_by_text("Earlier rewrites of this sentence (1)")).to_be_visible()
    slow, fast = failing_script.arrived(SLOW, "rewrite"), failing_script.arrived(FAST, "rewrite")
    assert fast < slow + DELAY_S[SLOW] and slow < fast + DELAY_S[FAST], "both asked at once"
