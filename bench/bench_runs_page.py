"""The Runs page's warm rerun while a 10k-item run works in the same process (budget 150 ms).

The run is FABLES claim verification (the claim alone) over TofuEval's 4,946 sentences with 2 repeats
(9,892 items; TofuEval's own prompts need the transcripts it does not distribute) on a fresh copy of
the bundled database, started the way the page starts it (`engine.create_run`, then the page's
`Jobs`), against the scripted local server of the tests (`tests.llmserver`). The server answers at
once until SETTLED items are stored, then after LATENCY_S, so the run goes on at about CONCURRENCY /
LATENCY_S items a second, as with a real provider. The page showing that run (AppTest: app.py, then
pages/runs.py?run=) is then rerun, PAUSE_S apart so that every rerun meets a new data version: the
runs list and the form's reads are read again, the live figures come from the runner's snapshot.
The median of REPEAT reruns is the figure; the items stored meanwhile are reported beside it.

An in-process server answering 100 items a second (CPU-bound on 2 cores) is not the case measured:
there every page keyed on the data version recomputes on every rerun (Overview and Compare more so).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.measure import Measure, environment, median_ms
from faithlens import access, config
from faithlens.build import ingest
from faithlens.llm.runs import engine, spec
from tests.llmserver import LLMServer, Reply

ROOT = Path(__file__).resolve().parent.parent
DATASET = "tofueval"
CONCURRENCY = 16
LATENCY_S = 1.0
SETTLED = 5_000
SETTLE_TIMEOUT_S = 120
REPEAT = 15
PAUSE_S = 0.2
"""Between reruns (not counted), so every rerun meets a new data version."""
BUDGET_MS = 150.0


def _page(db_path: Path):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = DATASET
    at.run()
    at.switch_page("pages/runs.py")
    at.run()
    return at


def _after_a_write(at) -> None:
    """Rerun after a pause in which the run stores a few items (CONCURRENCY / LATENCY_S a second)."""
    time.sleep(PAUSE_S)
    at.run()


def _measure(db_path: Path, server: LLMServer, latency: list[float]) -> tuple[float, int, int]:
    import streamlit as st

    from components import shell
    from components.runs import data as runs_data

    at = _page(db_path)
    root, registry = shell.root_connection(str(db_path)), runs_data.jobs()
    wanted = spec.RunSpec(
        DATASET, "sentence", "fables-verify", "openai", "gpt-4o", base_url=server.openai_base_url,
        concurrency=CONCURRENCY, repeats=2,
    )  # fmt: skip
    run_id = engine.create_run(root, wanted, spec.Selection(), access.cli_actor())
    registry.start(root, run_id, access.cli_actor())
    try:
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while registry.snapshot(run_id).done < SETTLED and time.monotonic() < deadline:
            time.sleep(0.5)
        latency[0] = LATENCY_S
        time.sleep(2 * LATENCY_S)
        before = registry.snapshot(run_id).done
        at.query_params["run"] = str(run_id)
        median = median_ms(lambda: _after_a_write(at), repeat=REPEAT, warmup=2) - PAUSE_S * 1000
        assert not at.exception, [e.value for e in at.exception]
        stored = registry.snapshot(run_id).done - before
        return median, registry.snapshot(run_id).total, stored
    finally:
        registry.cancel(run_id)
        registry.join(run_id, 60)
        st.cache_data.clear()
        st.cache_resource.clear()


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as folder:
        db_path = Path(folder) / "runs.duckdb"
        ingest.ingest(db_path, ROOT / "data")
        latency = [0.0]
        with LLMServer(lambda request: Reply("True", delay=latency[0])) as server:
            settings = {config.SETTINGS["db"].env: str(db_path), "OPENAI_API_KEY": "bench-key"}
            with environment(settings):
                median, total, stored = _measure(db_path, server, latency)
    name = f"Runs page warm rerun while a {total:,}-item run works ({stored:,} items stored meanwhile)"
    return [Measure(name, median, "ms", BUDGET_MS)]
