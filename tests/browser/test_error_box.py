"""What a presenter projects when the provider is down: the error box names the provider's URL as plain
text, exactly as configured, with no link and no Markdown escapes showing (issue 27, item 12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser import helpers

pytestmark = pytest.mark.browser

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
SENTENCE = 5


def test_a_provider_that_does_not_answer_is_named_by_its_url_as_text(
    page: Page, browser_db: Path, tmp_path: Path
) -> None:
    base_url = f"http://127.0.0.1:{helpers.free_port()}/v1"  # nothing listens there
    settings = {"OPENAI_API_KEY": "test-key", "FAITHLENS_OPENAI_BASE_URL": base_url, "FAITHLENS_LLM_TIMEOUT": "2"}
    db = helpers.copy_db(browser_db, tmp_path / "down.duckdb")
    with helpers.running_server(db, tmp_path / "server.log", extra_env=settings) as app:
        helpers.open_app(page, f"{app.url}/explore?dataset=storysumm&summary={DANIEL}&sentence={SENTENCE}")
        page.get_by_text(f"Ask a model about sentence S{SENTENCE}").click()
        helpers.wait_for_app(page)
        page.get_by_role("button", name="Ask", exact=True).click()
        helpers.wait_for_app(page)

        box = page.get_by_test_id("stAlertContentError")
        expect(box).to_contain_text(base_url)
        assert "\\" not in box.inner_text(), "no Markdown escape shows in the box"
        expect(box.locator("a"), "a presenter reads the address; nothing to click").to_have_count(0)
        expect(box.locator("code").first).to_have_text(base_url)
