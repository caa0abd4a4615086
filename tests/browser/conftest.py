"""Browser fixtures: one real `streamlit run app.py` per session on a temporary database, and
Debian's Chromium through Playwright (one browser per session, a fresh context per test)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.browser import helpers


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"true", "1", "yes"}


@pytest.fixture(scope="session")
def browser_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The template database: data/ plus tests/fixtures/browser_imports/*.jsonl. Servers get copies."""
    return helpers.build_test_db(tmp_path_factory.mktemp("browser_db") / "template.duckdb")


@pytest.fixture(scope="session")
def app_url(browser_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the session's app server (its log is `server.log` beside its database)."""
    folder = tmp_path_factory.mktemp("server")
    db = helpers.copy_db(browser_db, folder / "app.duckdb")
    with helpers.running_server(db, folder / "server.log") as server:
        yield server.url


@pytest.fixture
def fresh_server(browser_db: Path, tmp_path: Path) -> Iterator[helpers.Server]:
    """A server of its own that no test has touched yet (for cold deep links)."""
    db = helpers.copy_db(browser_db, tmp_path / "fresh.duckdb")
    with helpers.running_server(db, tmp_path / "server.log") as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(helpers.CHROMIUM).exists():
        reason = f"{helpers.CHROMIUM} is missing; run `make browser-deps` (scripts/install-chromium.sh)"
        if _in_ci():
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        launched = helpers.launch_chromium(playwright)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    yield context.new_page()
    context.close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")
