"""The app when its database cannot be opened, in a real browser against real `streamlit run` servers:
the error box says what went wrong and what to do, the sidebar (page links, database path) stays,
a second server on a file another server holds says so in words a web user can act on, and a
reload after the other server stops opens the database (the failed open is not cached)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser import helpers

pytestmark = pytest.mark.browser


def _expect_sidebar_with_links(page: Page, db: Path, dataset: str) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    explore = sidebar.get_by_test_id("stPageLink").filter(has_text="Explore").locator("a")
    expect(explore).to_have_attribute("href", re.compile(rf"(^|/)explore\?dataset={dataset}$"))
    expect(sidebar.get_by_test_id("stPageLink")).to_have_count(len(helpers.app_pages()))
    expect(sidebar).to_contain_text(str(db))


def test_a_second_server_on_a_held_database_says_what_to_do_and_recovers_on_reload(
    page: Page, browser_db: Path, tmp_path: Path
) -> None:
    db = helpers.copy_db(browser_db, tmp_path / "shared.duckdb")
    with helpers.running_server(db, tmp_path / "second.log") as second:
        with helpers.running_server(db, tmp_path / "first.log") as first:
            helpers.open_app(page, f"{first.url}/?dataset=storysumm")
            helpers.assert_no_exception(page)  # the first server now holds the file read-write
            pid = first.process.pid
            stats = subprocess.run(
                [sys.executable, "-m", "faithlens", "stats", "--json", "--db", str(db)],
                capture_output=True,
                text=True,
                cwd=helpers.ROOT,
                timeout=120,
            )

            helpers.open_app(page, f"{second.url}/compare?dataset=storysumm")
            error = page.get_by_test_id("stAlertContentError")
            expect(error).to_contain_text(
                f"Another FaithLens server (process {pid} on this machine) already serves this database; "
                "one database file can be served by one server at a time."
            )
            expect(error).to_contain_text(
                "What to do: Use that server's address (the one printed when it started), "
                f"or stop process {pid} and reload this page; to run two servers, give each its own FAITHLENS_DB."
            )
            helpers.assert_no_exception(page, error_box_expected=True)
            _expect_sidebar_with_links(page, db, "storysumm")

        page.reload()
        helpers.wait_for_app(page)
        helpers.assert_no_exception(page)
        expect(page.get_by_test_id("stSidebar").get_by_role("radio", name="storysumm", exact=True)).to_be_checked()

    assert stats.returncode == 0, stats.stderr
    assert "storysumm" in json.loads(stats.stdout)["datasets"]
    assert stats.stderr.startswith(f"note: process {pid} (the FaithLens app) holds {db}; these figures come from")


@pytest.mark.parametrize("case", ["missing_folder", "not_duckdb"])
def test_an_unusable_database_path_shows_what_to_do_beside_the_sidebar(page: Page, tmp_path: Path, case: str) -> None:
    if case == "missing_folder":
        db = tmp_path / "typo" / "faithlens.duckdb"
        said = f"{db}: the folder {db.parent} does not exist"
        to_do = f"What to do: check FAITHLENS_DB or --db for a typo, or create the folder first: mkdir -p {db.parent}"
    else:
        db = tmp_path / "notes.txt"
        db.write_text("not a database\n", encoding="utf-8")
        said = f"{db} is not a DuckDB database"
        to_do = "What to do: point FAITHLENS_DB or --db at the database file, by default data/faithlens.duckdb"
    with helpers.running_server(db, tmp_path / "server.log") as server:
        helpers.open_app(page, f"{server.url}/explore?dataset=fables")
        error = page.get_by_test_id("stAlertContentError")
        expect(error).to_contain_text(said)
        expect(error).to_contain_text(to_do)
        helpers.assert_no_exception(page, error_box_expected=True)
        _expect_sidebar_with_links(page, db, "fables")
    assert not (tmp_path / "typo").exists(), "the app never creates folders or files"
    left = ["notes.txt", "server.log"] if case == "not_duckdb" else ["server.log"]
    assert sorted(p.name for p in tmp_path.iterdir()) == left
