"""Issue 29 item 5: Explore's detail of a summary of a 120k-word document, ready in Chromium within 1.5 s.

The document is StorySumm's stories one after another, over and over, cut at 120,000 words, imported
with a summary of ten of its sentences (so the import stores their BM25 alignment, as for any
document). The clock runs from navigating to the summary's link, a sentence chosen, until its
passages are listed and the script is idle; the first load of a server is reported apart from the
median of the reloads after it. Beside it, a minimal app that reads the same text from the same
DuckDB file and draws it in one `st.html`, the floor any page showing the whole text stands on, and the
same page on a StorySumm story. Explore shows a long document as excerpts around the marked passages
(`faithlens.views.excerpts`), so the book's detail costs about what the story's does.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.measure import Measure
from faithlens import config
from faithlens.build import alignment, ingest
from tests.raw import storysumm_records

WORDS = 120_000
STORY = "1e21553b47944b67bc2cdf67860d8e15"
RELOADS = 5
BUDGET_MS = 1500.0
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
MINIMAL_APP = """\
import html
import os

import duckdb
import streamlit as st

with st.sidebar:
    st.write("FaithLens")
text = duckdb.connect(os.environ[{env!r}], read_only=True).execute("SELECT text FROM document WHERE document_id = 'book'").fetchone()[0]
st.html("<div>" + html.escape(text) + "</div>")
st.write("Drawn.")
"""


def _book() -> str:
    stories = sorted({record["story"] for record in storysumm_records().values()})
    words: list[str] = []
    while len(words) < WORDS:
        for story in stories:
            words += story.split()
    return " ".join(words[:WORDS])


def _database(folder: Path) -> Path:
    db = folder / "long.duckdb"
    ingest.ingest(db, config.data_dir())
    text = _book()
    spans = alignment.passages(text)
    picked = [text[start:end] for start, end in spans[:: len(spans) // 10][:10]]
    line = {"document_id": "book", "summary_id": "s1", "document": text, "sentences": [{"text": s} for s in picked]}
    path = folder / "long.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ingest.import_file(db, path, "canonical")
    return db


def _loads_ms(browser, url: str, ready: str) -> tuple[float, float]:
    """(first load, median of the reloads after it) in ms, each until `ready` shows and the script is idle."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    samples = []
    for _ in range(1 + RELOADS):
        started = time.perf_counter()
        page.goto(url)
        page.get_by_text(ready, exact=False).first.wait_for(timeout=120_000)
        page.wait_for_selector(IDLE, timeout=120_000)
        samples.append(1000 * (time.perf_counter() - started))
    page.context.close()
    return samples[0], statistics.median(samples[1:])


def run() -> list[Measure]:
    from playwright.sync_api import sync_playwright

    from tests.browser import helpers

    with tempfile.TemporaryDirectory() as name, sync_playwright() as playwright:
        folder = Path(name)
        db = _database(folder)
        minimal = folder / "minimal"
        minimal.mkdir()
        (minimal / "app.py").write_text(MINIMAL_APP.format(env=config.SETTINGS["db"].env), encoding="utf-8")
        browser = helpers.launch_chromium(playwright)
        with helpers.running_server(db, folder / "ours.log") as server:
            url = f"{server.url}/explore?dataset=long&summary=s1&sentence=1"
            first, ours = _loads_ms(browser, url, "Passages that best match S1")
            story_url = f"{server.url}/explore?dataset=storysumm&summary={STORY}&sentence=1"
            _, story = _loads_ms(browser, story_url, "Passages that best match S1")
        with helpers.running_server(db, folder / "minimal.log", app_dir=minimal) as server:
            _, baseline = _loads_ms(browser, server.url, "Drawn.")
        browser.close()
    return [
        Measure(
            f"explore: detail of a summary of a {WORDS:,}-word document in Chromium (median of {RELOADS})",
            ours,
            "ms",
            BUDGET_MS,
        ),
        Measure("  the same, a server's first load", first, "ms", BUDGET_MS),
        Measure("  baseline: a minimal app drawing the same text in one st.html", baseline, "ms", BUDGET_MS),
        Measure("  baseline: the same page on a StorySumm story (about 1,000 words)", story, "ms", BUDGET_MS),
    ]
