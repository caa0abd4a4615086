"""Issue 4 (Explore): alignment precompute, detail and list speed on the bundled data and at 100x.

Budgets: alignment <= 10 ms per summary (all bundled data with text); a warm rerun of the detail
view <= 150 ms (AppTest, median of repeated `at.run()`); the list with every filter applied
<= 150 ms; the same at 100x scale (bench/synthetic.py: 10k summaries, 500k units) <= 400 ms.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.measure import Measure, median_ms
from bench.synthetic import bundled_and_synthetic
from faithlens import config, querystate, store
from faithlens.build import alignment
from faithlens.filters import Filters
from faithlens.views import detail as explore_detail
from faithlens.views import explore

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "explore.py")
STORYSUMM = "1e21553b47944b67bc2cdf67860d8e15"
EVERY_FILTER = {
    "storysumm": Filters(
        split="test",
        generator="Claude-3 (raw: claude, test)",
        label="unfaithful",
        difficulty="hard",
        disagree_with="gpt-4-0125-preview/cot",
        search="the",
    ),
    "tofueval": Filters(
        split="dev",
        generator="slot A (shuffled per topic; raw: model_A)",
        topic_type="main",
        label="unfaithful",
        error_types=("Reasoning Error", "Extrinsic Information"),
        error_match="all",
        search="the",
    ),
    "synthetic": Filters(
        split="test",
        generator="gen-a",
        topic_type="main",
        label="unfaithful",
        difficulty="hard",
        error_types=("Reasoning Error", "Contradiction"),
        error_match="all",
        disagree_with="judge/cot",
        search="harbour",
    ),
}


def _alignment_per_summary(db: Path) -> float:
    """Recompute every stored alignment (rolled back): ms per summary whose document has text."""
    conn = store.connect(db)
    try:
        datasets = [
            (name, n)
            for name, n in conn.execute(
                "SELECT s.dataset, count(*) FROM summary s JOIN document d USING (dataset, document_id) "
                "WHERE d.text IS NOT NULL GROUP BY s.dataset"
            ).fetchall()
        ]
        with conn.cursor() as cur:
            cur.begin()
            started = time.perf_counter()
            for name, _ in datasets:
                alignment.align_documents(cur, name)
            elapsed = time.perf_counter() - started
            cur.rollback()
    finally:
        conn.close()
    return 1000 * elapsed / sum(n for _, n in datasets)


def _query_ms(db: Path, action: Callable[[object], object]) -> float:
    conn = store.connect(db, read_only=True)
    try:
        return median_ms(lambda: action(conn), repeat=5)
    finally:
        conn.close()


def _apptest_ms(
    db: Path, params: dict[str, str], runs: int = 7, vary: Callable[[object, int], None] | None = None
) -> float:
    """Median AppTest run of the Explore page: warm reruns, or (with `vary`) a new state each run."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ[config.SETTINGS["db"].env] = str(db)
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.run()
    if at.exception or at.error:
        raise RuntimeError(f"Explore failed in the bench: {[e.value for e in [*at.exception, *at.error]]}")
    samples = []
    for index in range(runs):
        if vary is not None:
            vary(at, index)
        started = time.perf_counter()
        at.run()
        samples.append((time.perf_counter() - started) * 1000)
    st.cache_resource.clear()
    return statistics.median(samples)


def _new_search(at: object, index: int) -> None:
    at.text_input(key="explore.synthetic.f.search").set_value(
        f"harbour near the {['storm', 'lamp', 'ship'][index % 3]} {index}"
    )


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as folder:
        bundled, synthetic = bundled_and_synthetic(folder)
        measures = [
            Measure(
                "explore: alignment precompute per summary (bundled data with text)",
                _alignment_per_summary(bundled),
                "ms",
                10.0,
            ),
        ]
        for dataset, params in (
            ("storysumm", {"summary": STORYSUMM, "sentence": "5", "ngram": "3"}),
            ("tofueval", {}),
            ("fables", {}),
        ):
            value = _apptest_ms(bundled, {"dataset": dataset, **params})
            measures.append(Measure(f"explore: warm rerun of the detail view, {dataset} (AppTest)", value, "ms", 150.0))
        for dataset in ("storysumm", "tofueval"):
            filters = EVERY_FILTER[dataset]
            value = _query_ms(bundled, lambda cur, d=dataset, f=filters: explore.list_summaries(cur, d, f))
            measures.append(
                Measure(f"explore: list with every filter, {dataset} (query, uncached)", value, "ms", 150.0)
            )
            page = _apptest_ms(bundled, {"dataset": dataset, **querystate.encode(filters)})
            measures.append(Measure(f"explore: page rerun with every filter, {dataset} (AppTest)", page, "ms", 150.0))
        every = EVERY_FILTER["synthetic"]
        measures += [
            Measure(
                "explore 100x: list with every filter (query, uncached)",
                _query_ms(synthetic, lambda cur: explore.list_summaries(cur, "synthetic", every)),
                "ms",
                400.0,
            ),
            Measure(
                "explore 100x: list with no filter, 10k rows (query, uncached)",
                _query_ms(synthetic, lambda cur: explore.list_summaries(cur, "synthetic", Filters())),
                "ms",
                400.0,
            ),
            Measure(
                "explore 100x: one summary's detail (query, uncached)",
                _query_ms(synthetic, lambda cur: explore_detail.load_detail(cur, "synthetic", "syn-004321")),
                "ms",
                400.0,
            ),
            Measure(
                "explore 100x: page run after a new search, every filter (AppTest)",
                _apptest_ms(synthetic, {"dataset": "synthetic", **querystate.encode(every)}, runs=5, vary=_new_search),
                "ms",
                400.0,
            ),
            Measure(
                "explore 100x: warm rerun of the page (AppTest)",
                _apptest_ms(synthetic, {"dataset": "synthetic", "summary": "syn-004321", "sentence": "2"}),
                "ms",
                400.0,
            ),
        ]
        return measures
