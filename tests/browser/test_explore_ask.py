"""Explore after Ask, in a real browser against the scripted OpenAI-protocol server: the Ask block names
the chosen claim in its toggle and in its hint alike and follows a new choice; an answer's label source
appears in "Every label source on this summary" at once, without a reload; the claim's link says the
number its label shows."""

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

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
MODEL = "gpt-4o"
SOURCE = f"llm/arm-zero-shot/{MODEL}"


@pytest.fixture
def app(browser_db: Path, tmp_path: Path) -> Iterator[tuple[LLMServer, helpers.Server]]:
    with LLMServer(lambda request: Reply("It calls the seal beautiful.\n<answer>No</answer>")) as llm:
        settings = {"OPENAI_API_KEY": "test-key", "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url}
        db = helpers.copy_db(browser_db, tmp_path / "ask.duckdb")
        with helpers.running_server(db, tmp_path / "server.log", extra_env=settings) as server:
            yield llm, server


def _claims() -> list[str]:
    claims = raw.storysumm_records()[DANIEL]["claims"]
    return [claim.strip() for claim in claims]


def _choose(page: Page, label: str, typed: str, option: str | re.Pattern) -> None:
    """Pick `option` of the select box `label`, typing `typed` first (a long list shows only some options)."""
    field = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text(label, exact=True)).locator("input")
    field.click()
    field.fill(typed)
    page.get_by_role("option", name=option, exact=isinstance(option, str)).first.click()
    helpers.wait_for_app(page)


def test_the_ask_block_follows_the_chosen_claim_and_its_answer_shows_without_a_reload(
    page: Page, app: tuple[LLMServer, helpers.Server], screenshot_dir: Path
) -> None:
    llm, server = app
    claims = _claims()
    helpers.open_app(page, f"{server.url}/explore?dataset=storysumm&summary={DANIEL}&claim=2")
    helpers.assert_no_exception(page)
    expect(page.locator(".fl-claims li.fl-selected")).to_contain_text(f"C2 {claims[1]}")
    table = page.locator(".fl-vt table")
    expect(table).to_be_visible()
    expect(table).not_to_contain_text(SOURCE)

    page.get_by_text("Ask a model about claim C2").click()
    helpers.wait_for_app(page)
    hint = page.get_by_test_id("stCaptionContainer").filter(has_text="Asking about")
    expect(hint).to_contain_text(f"Asking about claim C2: “{claims[1][:40]}")
    expect(hint).not_to_contain_text("Choose a sentence or claim above to ask about it")

    _choose(page, "Claim", "C4 · ", re.compile(r"^C4 · "))
    helpers.wait_for_app(page)
    expect(page.get_by_text("Ask a model about claim C4")).to_be_visible()
    expect(hint).to_contain_text(f"Asking about claim C4: “{claims[3][:40]}")
    expect(page).to_have_url(re.compile(r"[?&]claim=4(&|$)"))

    _choose(page, "Method", "zero-shot", "ARM Table 2 baseline: zero-shot")
    page.get_by_role("button", name="Ask", exact=True).click()
    helpers.wait_for_app(page)
    helpers.assert_no_exception(page)
    asked = [r for r in llm.requests if r.path.endswith("/chat/completions")]
    assert len(asked) == 1 and claims[3] in asked[0].last_user_text()

    row = page.locator(".fl-vt tr").filter(has_text=SOURCE)
    expect(row, "the new label source is listed without a reload").to_have_count(1)
    expect(row).to_contain_text("1 of 1")
    expect(page.get_by_text("Label: unfaithful (answer: subjective)")).to_be_visible()
    helpers.screenshot(page, screenshot_dir, "explore_after_ask")
