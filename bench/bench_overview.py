"""Issue 3: the Overview's warm rerun on the server (<= 150 ms) and a cold server start to the
first rendered Overview chart in Chromium; issues 9 and 27: that start within 1.1x of a minimal app's.

The cold start is from launching `streamlit run app.py` to the first Plotly chart of the Overview
drawn in Chromium. It is also measured for a minimal Streamlit app on the same machine, each
FaithLens start followed by a minimal one, so the machine's load falls on both alike. The minimal app
(issue 27, item 18) does what any app of ours must: opens the same DuckDB file, counts its summaries,
draws one Plotly chart and a sidebar of links to as many pages as ours, with our Streamlit config.
The difference is what FaithLens adds; the rest is Streamlit, DuckDB, Plotly.js and the machine.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.measure import Measure
from faithlens import config
from faithlens.build import ingest
from faithlens.datasets import VENDORED

ROOT = Path(__file__).resolve().parent.parent
WARM_RUNS = 9
COLD_RUNS = 7
COLD_RATIO = 1.1
MINIMAL_APP = """\
import os

import duckdb
import plotly.graph_objects as go
import streamlit as st

PAGES = {pages!r}

st.sidebar.page_link("app.py", label="Overview")

for name in PAGES:
    st.sidebar.page_link(f"pages/{{name}}.py", label=name.title())
connection = duckdb.connect(os.environ[{env!r}])
st.metric("Summaries", connection.execute("SELECT count(*) FROM summary").fetchone()[0])
st.plotly_chart(go.Figure(go.Bar(x=[1, 2], y=[3, 4])))
"""


def _write_minimal_app(folder: Path) -> Path:
    """The baseline app beside ours: its pages (one line each) and a copy of our `.streamlit/config.toml`."""
    pages = sorted(p.stem for p in (ROOT / "pages").glob("*.py"))
    (folder / "pages").mkdir(parents=True)
    for name in pages:
        (folder / "pages" / f"{name}.py").write_text(
            f"import streamlit as st\n\nst.write({name!r})\n", encoding="utf-8"
        )
    (folder / ".streamlit").mkdir()
    shutil.copy(ROOT / ".streamlit" / "config.toml", folder / ".streamlit" / "config.toml")
    app = MINIMAL_APP.format(pages=pages, env=config.SETTINGS["db"].env)
    (folder / "app.py").write_text(app, encoding="utf-8")
    return folder


def _warm_rerun_ms(dataset: str) -> float:
    """Median server-side time of `at.run()` after a first run filled the caches."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = dataset
    at.run()
    if at.exception:
        raise RuntimeError(f"Overview failed for {dataset}: {at.exception[0].value}")
    samples = []
    for _ in range(WARM_RUNS):
        started = time.perf_counter()
        at.run()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def _cold_starts_s(template: Path, folder: Path, app_dirs: list[Path]) -> list[float]:
    """Median seconds, per app in `app_dirs`, from launching `streamlit run app.py` to the first
    chart drawn in Chromium; the apps take turns, COLD_RUNS starts each.

    Each start gets a fresh copy of the database; the browser is launched before the clock starts.
    """
    from playwright.sync_api import sync_playwright

    from tests.browser import helpers

    samples: list[list[float]] = [[] for _ in app_dirs]
    with sync_playwright() as playwright:
        browser = helpers.launch_chromium(playwright)
        for attempt in range(COLD_RUNS):
            for app_dir, times in zip(app_dirs, samples, strict=True):
                db = shutil.copy(template, folder / f"cold{attempt}.duckdb")
                page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                started = time.perf_counter()
                with helpers.running_server(Path(db), folder / "server.log", app_dir=app_dir) as server:
                    page.goto(f"{server.url}/?dataset=storysumm")
                    page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first.wait_for(timeout=60_000)
                    times.append(time.perf_counter() - started)
                page.context.close()
        browser.close()
    return [statistics.median(times) for times in samples]


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        db = folder / "bench.duckdb"
        ingest.ingest(db, config.data_dir())
        template = Path(shutil.copy(db, folder / "template.duckdb"))
        env = config.SETTINGS["db"].env
        previous = os.environ.get(env)
        os.environ[env] = str(db)  # AppTest runs the app in this process
        try:
            measures = [
                Measure(
                    f"overview: warm rerun, {b.name} (AppTest, median of {WARM_RUNS})",
                    _warm_rerun_ms(b.name),
                    "ms",
                    150.0,
                )
                for b in VENDORED
            ]
        finally:
            if previous is None:
                os.environ.pop(env)
            else:
                os.environ[env] = previous
        minimal = _write_minimal_app(folder / "minimal")
        ours, baseline = _cold_starts_s(template, folder, [ROOT, minimal])
        measures += [
            Measure(
                f"overview: cold server start to first chart in Chromium (median of {COLD_RUNS})",
                ours,
                "s",
                COLD_RATIO * baseline,
            ),
            Measure(
                f"  baseline: a minimal app (same DuckDB file, one chart, page links), interleaved (budget {COLD_RATIO}x)",
                baseline,
                "s",
                COLD_RATIO * baseline,
            ),
        ]
        return measures
