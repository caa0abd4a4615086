"""Issue 27, item 16: the coder's loop in Chromium. A digit picks a code and Enter saves it; the clock
runs from the digit until the next unit is ready to code (the "Saved unit N" flash drawn and the script
idle). Budget: 1.5x a minimal Streamlit app's button -> rerun with one DuckDB write, measured in the
same run, the two apps taking turns so the machine's load falls on both alike.

The session codes StorySumm sentences with the faithfulness codebook, as a coder would; the minimal app
appends one row to a DuckDB table per click and shows the count.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.measure import Measure
from faithlens import access, config, store
from faithlens.build import ingest
from faithlens.coding import sessions

ROOT = Path(__file__).resolve().parent.parent
LOOPS = 12
ROUNDS = 3
RATIO = 1.5
CODER = "ana"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
PRIMARY = '[data-testid="stBaseButton-primary"]'
PICKED = f"""n => document.querySelector('{IDLE}')
    && document.querySelectorAll('{PRIMARY}').length > n"""
"""The digit's rerun is over: the script idle and the picked code's button drawn as primary."""
MINIMAL_APP = """\
import os

import duckdb
import streamlit as st

connection = duckdb.connect(os.environ[{env!r}])
connection.execute("CREATE TABLE IF NOT EXISTS click (clicked TIMESTAMP)")
if st.button("Write"):
    connection.execute("INSERT INTO click VALUES (now())")
st.write(f"Rows: {{connection.execute('SELECT count(*) FROM click').fetchone()[0]}}")
"""


def _session(db: Path) -> str:
    conn = store.connect(db)
    try:
        spec = sessions.SessionSpec("bench-loop", "storysumm", "sentence", "storysumm-faithfulness")
        return sessions.create(conn, access.cli_actor(), spec).name
    finally:
        conn.close()


def _ready(page, text: str) -> None:
    """Wait, without a fixed sleep, until `text` is on the page and the script is idle."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=30_000)
    page.wait_for_selector(IDLE, timeout=30_000)


def _coder_loops_s(browser, db: Path, log: Path) -> list[float]:
    from tests.browser import helpers

    samples = []
    with helpers.running_server(db, log, extra_env={config.SETTINGS["user"].env: CODER}) as server:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        helpers.open_app(page, f"{server.url}/code?dataset=storysumm&session=bench-loop")
        page.get_by_role("button", name=f"Join as {CODER}").click()
        helpers.wait_for_app(page)
        for position in range(1, LOOPS + 1):
            page.get_by_role("heading", name="Code").first.click()
            primary = page.locator(PRIMARY).count()
            started = time.perf_counter()
            page.keyboard.press("1")
            page.wait_for_function(PICKED, arg=primary, timeout=30_000)
            page.keyboard.press("Enter")
            _ready(page, f"Saved unit {position}:")
            samples.append(time.perf_counter() - started)
        page.context.close()
    return samples


def _minimal_clicks_s(browser, db: Path, log: Path, app_dir: Path) -> list[float]:
    from tests.browser import helpers

    samples = []
    with helpers.running_server(db, log, app_dir=app_dir) as server:
        page = helpers.open_app(browser.new_context().new_page(), server.url)
        for clicks in range(1, LOOPS + 1):
            started = time.perf_counter()
            page.get_by_role("button", name="Write").click()
            _ready(page, f"Rows: {clicks}")
            samples.append(time.perf_counter() - started)
        page.context.close()
    return samples


def run() -> list[Measure]:
    from playwright.sync_api import sync_playwright

    from tests.browser import helpers

    ours: list[float] = []
    baseline: list[float] = []
    with tempfile.TemporaryDirectory() as name, sync_playwright() as playwright:
        folder = Path(name)
        template = folder / "template.duckdb"
        ingest.ingest(template, config.data_dir())
        minimal = folder / "minimal"
        minimal.mkdir()
        (minimal / "app.py").write_text(MINIMAL_APP.format(env=config.SETTINGS["db"].env), encoding="utf-8")
        browser = helpers.launch_chromium(playwright)
        for round_ in range(ROUNDS):
            db = Path(shutil.copy(template, folder / f"loop{round_}.duckdb"))
            _session(db)
            ours += _coder_loops_s(browser, db, folder / "ours.log")
            plain = Path(shutil.copy(template, folder / f"plain{round_}.duckdb"))
            baseline += _minimal_clicks_s(browser, plain, folder / "minimal.log", minimal)
        browser.close()
    ours_ms, baseline_ms = 1000 * statistics.median(ours), 1000 * statistics.median(baseline)
    return [
        Measure(
            f"code page: digit + Enter to the next unit in Chromium (median of {len(ours)})",
            ours_ms,
            "ms",
            RATIO * baseline_ms,
        ),
        Measure(
            f"  baseline: a minimal app's button -> rerun with one DuckDB write (budget {RATIO}x)",
            baseline_ms,
            "ms",
            RATIO * baseline_ms,
        ),
    ]
