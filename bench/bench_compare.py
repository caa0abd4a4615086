"""Issue 5: the Compare page's warm rerun with 10 compared sources (<= 150 ms on the bundled data,
<= 400 ms at 100x scale), plus cold figures of the core for the record.

Bundled: StorySumm gold vs its 10 released evaluators at summary level. 100x: the synthetic
dataset (`bench/synthetic.py`) has three compared sources at summary level (a label source, a
sentence-level source whose summary labels are derived, a score source); seven more summary-level
sources are added here as perturbed copies of `judge/cot`, so ten are compared there too.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from bench.measure import Measure, median_ms
from bench.synthetic import DATASET, build_synthetic_db
from faithlens import config
from faithlens.build import ingest
from faithlens.views import compare

ROOT = Path(__file__).resolve().parent.parent
WARM_RUNS = 9
EXTRA_SOURCES = 7


def _add_sources(db: Path) -> None:
    """Seven more evaluators at summary level, each flipping a different ~1 in 5 of judge/cot's labels."""
    with duckdb.connect(str(db)) as conn:
        for k in range(EXTRA_SOURCES):
            source = f"judge/copy-{k}"
            conn.execute(
                "INSERT INTO label_source (dataset, source, kind, origin) VALUES (?, ?, 'evaluator', 'import')",
                [DATASET, source],
            )
            conn.execute(
                """INSERT INTO label (dataset, source, level, target_id, value)
                   SELECT dataset, ?, 'summary', target_id,
                          CASE WHEN hash(target_id, ?) % 5 = 0
                               THEN (CASE WHEN value = 'faithful' THEN 'unfaithful' ELSE 'faithful' END)::verdict
                               ELSE value END
                   FROM current_label WHERE dataset = ? AND source = 'judge/cot' AND level = 'summary'""",
                [source, k, DATASET],
            )


@contextmanager
def _server_script_cache() -> Iterator[None]:
    """AppTest compiles the page afresh on every run (a new ScriptCache per run, 50-100 ms for this
    page); the real server keeps one ScriptCache for its lifetime. Share one, as the server does,
    so the figure is the server's rerun time."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    originals = (app_test.ScriptCache, local_script_runner.ScriptCache)
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared
    try:
        yield
    finally:
        app_test.ScriptCache, local_script_runner.ScriptCache = originals


@contextmanager
def _app_db(db: Path) -> Iterator[None]:
    previous = os.environ.get(config.SETTINGS["db"].env)
    os.environ[config.SETTINGS["db"].env] = str(db)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(config.SETTINGS["db"].env)
        else:
            os.environ[config.SETTINGS["db"].env] = previous


def _page_runs_ms(dataset: str, expected_sources: int) -> tuple[float, float, float]:
    """(cold first run, median warm rerun, rerun after moving a score source's threshold) in ms."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["dataset"] = dataset
    at.switch_page("pages/compare.py")
    started = time.perf_counter()
    at.run()
    cold = (time.perf_counter() - started) * 1000
    if at.exception or at.error:
        raise RuntimeError(f"Compare failed for {dataset}: {[e.value for e in [*at.exception, *at.error]]}")
    compared = len(at.multiselect[0].value)
    if compared != expected_sources:
        raise RuntimeError(f"expected {expected_sources} compared sources on {dataset}, the page has {compared}")
    samples = []
    for _ in range(WARM_RUNS):
        started = time.perf_counter()
        at.run()
        samples.append((time.perf_counter() - started) * 1000)
    slider = at.slider[0]
    slider.set_value(min(slider.value + 0.05, 0.99))
    started = time.perf_counter()
    at.run()
    moved = (time.perf_counter() - started) * 1000
    st.cache_data.clear()
    st.cache_resource.clear()
    return cold, statistics.median(samples), moved


def _core_ms(db: Path, dataset: str) -> float:
    with duckdb.connect(str(db), read_only=True) as conn, conn.cursor() as cur:
        return median_ms(lambda: compare.compare(cur, dataset, "summary"), repeat=3, warmup=0)


def run() -> list[Measure]:
    measures = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        bundled = folder / "bundled.duckdb"
        ingest.ingest(bundled, config.data_dir())
        core = _core_ms(bundled, "storysumm")
        with _app_db(bundled), _server_script_cache():
            cold, warm, moved = _page_runs_ms("storysumm", 10)
        measures += [
            Measure(
                f"compare: warm rerun, storysumm, 10 sources (AppTest, server script cache, median of {WARM_RUNS})",
                warm,
                "ms",
                150.0,
            ),
            Measure("compare: threshold slider moved, storysumm (AppTest, informational)", moved, "ms", 400.0),
            Measure("compare: first run, storysumm, 10 sources (AppTest, informational)", cold, "ms", 8000.0),
            Measure("compare: core compare(), storysumm, 10 sources, uncached (informational)", core, "ms", 3000.0),
        ]
        synthetic = folder / "synthetic.duckdb"
        build_synthetic_db(synthetic, scale=100)
        _add_sources(synthetic)
        core = _core_ms(synthetic, DATASET)
        with _app_db(synthetic), _server_script_cache():
            cold, warm, moved = _page_runs_ms(DATASET, 3 + EXTRA_SOURCES)
        measures += [
            Measure(
                f"compare: warm rerun, 100x synthetic, 10 sources (AppTest, server script cache, median of {WARM_RUNS})",
                warm,
                "ms",
                400.0,
            ),
            Measure("compare: threshold slider moved, 100x synthetic (AppTest, informational)", moved, "ms", 2000.0),
            Measure("compare: first run, 100x synthetic, 10 sources (AppTest, informational)", cold, "ms", 15000.0),
            Measure(
                "compare: core compare(), 100x synthetic, 10 sources, uncached (informational)", core, "ms", 10000.0
            ),
        ]
    return measures
