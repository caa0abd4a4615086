"""Asking a model from the app in a real browser, against the local OpenAI-protocol server: rewrite a
StorySumm sentence in Explore, see the word diff and the edit distance (word edits, and on ARM Table
3's 0-1 scale), then find the new label source on Compare; a second ask is answered from the cache
without a call."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from nltk.tokenize import TreebankWordTokenizer
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers
from tests.llmserver import LLMServer, Reply

pytestmark = pytest.mark.browser

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
SENTENCE = 5
MODEL = "gpt-4o"
SOURCE = f"llm/arm-rewrite-both/{MODEL}"
ADDED = "in the story"
POINT = "The story only shows this scene."


def _rewrite_of(sentence: str) -> str:
    """The scripted rewrite: the sentence with three words added before its full stop.

    By hand: the word lists differ by the three inserted tokens 'in', 'the', 'story', so ARM's word
    edit distance is 3 and r != s; on Table 3's scale 3 over the rewrite's tokens (the sentence's NLTK
    Treebank tokens plus 3)."""
    return sentence.rstrip().removesuffix(".") + f" {ADDED}."


@pytest.fixture
def llm_and_app(browser_db: Path, tmp_path: Path) -> Iterator[tuple[LLMServer, helpers.Server]]:
    sentence = raw.storysumm_records()[DANIEL]["summary"][SENTENCE - 1].strip()

    def respond(request):
        if "Rewrite the following summary sentence" in request.last_user_text():
            return Reply(f"<answer>{_rewrite_of(sentence)}</answer>\nThe summary adds detail the story does not give.")
        return Reply(f"<item>{POINT}</item>")

    with LLMServer(respond) as llm:
        settings = {"OPENAI_API_KEY": "test-key", "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url}
        db = helpers.copy_db(browser_db, tmp_path / "llm.duckdb")
        with helpers.running_server(db, tmp_path / "server.log", extra_env=settings) as app:
            yield llm, app


def _choose(page: Page, label: str, option: str) -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).locator("input").click()
    page.get_by_role("option", name=option, exact=True).click()
    helpers.wait_for_app(page)


def test_rewrite_in_explore_shows_the_diff_and_feeds_compare(
    page: Page, llm_and_app: tuple[LLMServer, helpers.Server], screenshot_dir: Path
) -> None:
    llm, app = llm_and_app
    sentence = raw.storysumm_records()[DANIEL]["summary"][SENTENCE - 1].strip()
    helpers.open_app(page, f"{app.url}/explore?dataset=storysumm&summary={DANIEL}&sentence={SENTENCE}")
    page.get_by_text(f"Ask a model about sentence S{SENTENCE}").click()
    helpers.wait_for_app(page)
    _choose(page, "Method", "ARM rewrite")
    page.get_by_role("button", name="Ask", exact=True).click()
    helpers.wait_for_app(page)
    helpers.assert_no_exception(page)

    inserted = page.locator(".fl-diff ins.fl-ins")
    expect(inserted).to_have_count(1)
    expect(inserted).to_have_text(ADDED)
    expect(page.get_by_test_id("stMetric").filter(has_text="Word edits")).to_contain_text("3")
    normalised = 3 / (len(TreebankWordTokenizer().tokenize(sentence)) + 3)
    expect(page.get_by_test_id("stMetric").filter(has_text="(0–1)")).to_contain_text(f"{normalised:.2f}")
    expect(page.get_by_test_id("stMetric").filter(has_text="Rewritten")).to_contain_text("yes")
    expect(page.get_by_test_id("stMain")).to_contain_text(POINT)
    prompts = [r for r in llm.requests if r.path.endswith("/chat/completions")]
    assert len(prompts) == 2, "one rewrite call and one call splitting the explanation into points"
    assert sentence in prompts[0].last_user_text()
    helpers.screenshot(page, screenshot_dir, "explore_arm_rewrite")

    page.get_by_role("button", name="Ask", exact=True).click()
    helpers.wait_for_app(page)
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text="from cache")).to_have_count(1)
    assert len([r for r in llm.requests if r.path.endswith("/chat/completions")]) == 2, "a cached answer costs no call"

    helpers.open_app(page, f"{app.url}/compare?dataset=storysumm&level=sentence&sources={SOURCE}")
    helpers.assert_no_exception(page)
    expect(page.get_by_test_id("stMain")).to_contain_text(SOURCE)
    gold = "unfaithful" if raw.storysumm_records()[DANIEL]["errors"][SENTENCE - 1] == 0 else "faithful"
    matrix = page.get_by_test_id("stHtml").locator(".fl-cm").first
    expect(matrix).to_contain_text(re.compile(r"n 1 ·"))
    row = matrix.get_by_role("row").filter(has=page.get_by_role("rowheader", name=gold, exact=True))
    flagged = "the rewritten sentence counts as flagged (r != s): 0 in the faithful column, 1 in the unfaithful"
    cells = row.get_by_role("cell")  # count, then the row share, with no space between them
    expect(cells, flagged).to_have_text(["0" + "0% of row", "1" + "100% of row"])
