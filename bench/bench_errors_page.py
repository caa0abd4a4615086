"""The Errors page's warm rerun (AppTest: app.py, then pages/errors.py?dataset=&family=&by=): <= 150 ms
on the bundled database, <= 400 ms at 100x.

- TofuEval, bundled: the default family (`error_type@sentence`) by generator and its values on the
  same unit (no recall: gold, the reference, is its only sentence-level source).
- StorySumm, bundled: `difficulty@summary` by generator, whose recall counts 10 evaluator sources
  (2 of them score sources, labelled at the threshold Compare tunes).
- 100x synthetic (bench/synthetic.py, 500k units): `error_type@sentence` (about 15% of 1M sentences
  tagged) by generator, recall of `judge/sentence` against gold.

A warm rerun draws the page again with nothing changed (every cached read hit). For the record, the
100x first run after `st.cache_data.clear()` (every read computed; informational, generous budget).
Medians of REPEAT after warmup; every run must end with no exception and no error box.

And what a click on a cell costs Explore at 100x: its list under the cell's unit filter (uncached
query), for the largest distribution cell and for the units `judge/sentence` misses of one type.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.measure import Measure, environment, median_ms
from bench.synthetic import DATASET as SYNTHETIC
from bench.synthetic import bundled_and_synthetic
from faithlens import config, store
from faithlens.analysis import tally
from faithlens.views import error_links, errors, explore

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 9
COLD_REPEAT = 3
BUDGET_MS = 150.0
BUDGET_100X_MS = 400.0
COLD_BUDGET_MS = 3000.0
CASES = (
    # label, dataset, query params, the family the page must show (None: the one asked for), the
    # sources its recall counts (TofuEval has none but gold at sentence level: the page says so)
    ("bundled", "tofueval", {"dataset": "tofueval", "by": "generator"}, "error_type@sentence", 0),
    ("bundled", "storysumm", {"dataset": "storysumm", "family": "difficulty@summary", "by": "generator"}, None, 10),
    ("100x", SYNTHETIC, {"dataset": SYNTHETIC, "family": "error_type@sentence", "by": "generator"}, None, 1),
)


def _checked(at) -> None:
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]


def _page(params: dict[str, str], family: str, sources: int):
    from streamlit.testing.v1 import AppTest

    from components import urlstate

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = params["dataset"]
    at.run()
    at.switch_page("pages/errors.py")
    at.query_params.update(params)
    at.run()
    _checked(at)
    shown = at.selectbox(key=urlstate.key(urlstate.ERRORS, params["dataset"], "family")).value
    assert shown == family, f"the page shows family {shown!r}, expected {family!r}"
    picker = urlstate.key(urlstate.ERRORS, params["dataset"], "sources")
    counted = sum(len(m.value) for m in at.multiselect if m.key == picker)
    assert counted == sources, f"recall counts {counted} sources, expected {sources}"
    return at


def _rerun(at) -> None:
    at.run()
    _checked(at)


def _cold_ms(at) -> float:
    """The page's run after every cached read is dropped (the root connection stays, as on a server)."""
    import streamlit as st

    samples = []
    for _ in range(COLD_REPEAT):
        st.cache_data.clear()
        started = time.perf_counter()
        _rerun(at)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def _measure(db: Path, params: dict[str, str], family: str, sources: int, cold: bool) -> tuple[float, float]:
    import streamlit as st

    with environment({config.SETTINGS["db"].env: str(db)}):
        try:
            at = _page(params, family, sources)
            warm = median_ms(lambda: _rerun(at), repeat=REPEAT, warmup=2)
            return warm, (_cold_ms(at) if cold else 0.0)
        finally:
            st.cache_data.clear()
            st.cache_resource.clear()


def _explore_from_cells(db: Path) -> list[Measure]:
    """Explore's list query under the unit filter of a distribution cell and of a recall cell, 100x."""
    conn = store.connect(db, read_only=True)
    try:
        cur = conn.cursor()
        family = errors.find_family(cur, SYNTHETIC, "error_type", "sentence")
        shown = errors.distribution(cur, SYNTHETIC, family, "generator")
        biggest = max((r for r in shown.rows if r.group != errors.ALL_GROUPS), key=lambda r: r.units)
        spread = error_links.spread_cell(SYNTHETIC, shown, biggest.value, biggest.group)
        result = errors.recall(cur, SYNTHETIC, family, ["judge/sentence"], reference="gold")
        row = max(result.rows, key=lambda r: r.total - r.flagged)
        missed = error_links.recall_cell(SYNTHETIC, result, row, False, tally.splits(cur, SYNTHETIC), None)
        out = []
        for what, state, expected in (
            (f"{biggest.units:,} sentences of one type and generator", spread, biggest.units),
            (
                f"{row.total - row.flagged:,} sentences of one type judge/sentence misses",
                missed,
                row.total - row.flagged,
            ),
        ):
            listing = explore.list_summaries(cur, SYNTHETIC, state.filters)
            assert listing.units == expected, (what, listing.units, expected)
            ms = median_ms(lambda s=state: explore.list_summaries(cur, SYNTHETIC, s.filters), repeat=REPEAT, warmup=1)
            out.append(
                Measure(
                    f"Explore list opened from an Errors cell, 100x: {what} (query, uncached)", ms, "ms", BUDGET_100X_MS
                )
            )
        return out
    finally:
        conn.close()


def run() -> list[Measure]:
    out = []
    with tempfile.TemporaryDirectory() as folder:
        bundled, synthetic = bundled_and_synthetic(folder)
        for label, dataset, params, family, sources in CASES:
            family = family or params["family"]
            db, budget = (synthetic, BUDGET_100X_MS) if label == "100x" else (bundled, BUDGET_MS)
            warm, cold = _measure(db, params, family, sources, cold=label == "100x")
            counted = f"recall of {sources} source{'s' * (sources != 1)}" if sources else "no recall source"
            what = f"{dataset} {family} by generator, {counted}"
            out.append(Measure(f"Errors page rerun, {label}: {what}", warm, "ms", budget))
            if label == "100x":
                out.append(
                    Measure(
                        "Errors page cold run (after st.cache_data.clear()), 100x, informational",
                        cold,
                        "ms",
                        COLD_BUDGET_MS,
                    )
                )
        out += _explore_from_cells(synthetic)
    return out
