"""The Code page as a coder uses it (AppTest: app.py, then pages/code.py?session=&coder=): budget 150 ms.

- Rerun: the coding view drawn again with nothing changed (a click on Back/Skip costs the same).
- Save and go on: a code picked, then Save: the code is checked and committed (`events.save`), and the
  view of the next uncoded unit is drawn under the new data version (every cached read keyed on it is
  read again).

Both on the bundled database (a session of all 579 StorySumm sentences, 300 already coded) and on the
100x synthetic one (bench/synthetic.py, 500k units: a session of 10,000 sentences, 5,000 coded).
Medians of REPEAT.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.measure import Measure, environment, median_ms
from bench.synthetic import DATASET as SYNTHETIC
from bench.synthetic import bundled_and_synthetic
from faithlens import access, config, store
from faithlens.coding import events, sessions

ROOT = Path(__file__).resolve().parent.parent
CODER = "ana"
REPEAT = 9
BUDGET_MS = 150.0


def _session(db: Path, dataset: str, units: int | None, coded: int) -> sessions.Session:
    conn = store.connect(db)
    try:
        spec = sessions.SessionSpec("bench-code", dataset, "sentence", "storysumm-faithfulness", sample=units)
        session = sessions.create(conn, access.cli_actor(CODER), spec)
        order = session.order_for(CODER)
        done = [(CODER, events.Submission(unit, ("faithful",))) for unit in order[:coded]]
        events.save_many(conn, access.cli_actor(CODER), session, done)
        return session
    finally:
        conn.close()


def _page(dataset: str, session: sessions.Session):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = dataset
    at.run()
    at.switch_page("pages/code.py")
    at.query_params.update({"session": session.name, "coder": CODER})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _measure(db: Path, dataset: str, units: int | None, coded: int) -> tuple[float, float, int]:
    import streamlit as st

    session = _session(db, dataset, units, coded)
    with environment({config.SETTINGS["db"].env: str(db), config.SETTINGS["user"].env: CODER}):
        try:
            at = _page(dataset, session)
            rerun = median_ms(at.run, repeat=REPEAT, warmup=2)
            saves = [_timed_save(at) for _ in range(REPEAT + 1)][1:]
            return rerun, statistics.median(saves), len(session.units)
        finally:
            st.cache_data.clear()
            st.cache_resource.clear()


def _timed_save(at) -> float:
    """Pick the first code of the unit shown (untimed: a run of its own), then time Save's run."""
    first = next(b for b in at.button if str(b.key).endswith(".code.0"))
    first.click().run()
    started = time.perf_counter()
    next(b for b in at.button if str(b.key).endswith(".save")).click().run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    return (time.perf_counter() - started) * 1000


def run() -> list[Measure]:
    out = []
    with tempfile.TemporaryDirectory() as folder:
        bundled, synthetic = bundled_and_synthetic(folder)
        for label, db, dataset, units, coded in (
            ("bundled", bundled, "storysumm", None, 300),
            ("100x", synthetic, SYNTHETIC, 10_000, 5_000),
        ):
            rerun, save, total = _measure(db, dataset, units, coded)
            out += [
                Measure(f"Code page rerun, {label} ({total:,}-unit session, {coded:,} coded)", rerun, "ms", BUDGET_MS),
                Measure(f"Code page Save and go on, {label} (save committed + next unit drawn)", save, "ms", BUDGET_MS),
            ]
    return out
