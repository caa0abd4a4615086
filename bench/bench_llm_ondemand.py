"""On-demand LLM calls: the app's own overhead per call (<= 50 ms) and a cache hit (<= 20 ms).

The model is the scripted local server of the tests (`tests.llmserver`) answering at once, so a
fresh call's wall time is everything but a real server's latency: rendering the prompt, the cache
lookup, the SDK and its HTTP round trip over 127.0.0.1, strict parsing, and the one transaction
that stores the call and its label event (plus the test server's own work, in this process, so
the figure is an upper bound). The part outside the provider call (`Answer.latency_ms`) is
reported beside it. A cache hit makes no call: lookup, label check and answer assembly.

Each is the median of 20 asks of StorySumm's Binary prompt about one summary of a fresh copy of
the bundled database (a story of about 800 words), after two untimed asks that create the client.
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
from faithlens import access, config, store
from faithlens.build import ingest
from faithlens.llm import ask, targets
from tests.llmserver import LLMServer

REPEAT = 20
WARMUP = 2
SETTINGS: dict[str, str | None] = {
    "OPENAI_API_KEY": "bench-key",
    "FAITHLENS_LLM_PRICES": None,
    "FAITHLENS_OPENAI_BASE_URL": None,
}


@contextmanager
def _settings() -> Iterator[None]:
    """A key that is not the developer's, the bundled prices; restored afterwards."""
    saved = {name: os.environ.get(name) for name in SETTINGS}
    _apply(SETTINGS)
    try:
        yield
    finally:
        _apply(saved)


def _apply(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _fresh_calls(conn: duckdb.DuckDBPyConnection, target: targets.Target, what: ask.Ask) -> tuple[float, float]:
    """Median wall time of a fresh call, and median of the part outside the provider call (ms)."""
    for _ in range(WARMUP):
        ask.ask(conn, target, what, access.cli_actor())
    walls, outside = [], []
    for _ in range(REPEAT):
        started = time.perf_counter()
        answer = ask.ask(conn, target, what, access.cli_actor())
        wall = (time.perf_counter() - started) * 1000
        walls.append(wall)
        outside.append(wall - (answer.latency_ms or 0.0))
    return statistics.median(walls), statistics.median(outside)


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as folder, _settings(), LLMServer(default_text="No") as server:
        path = Path(folder) / "bench.duckdb"
        ingest.ingest(path, config.data_dir())
        conn = store.connect(path)
        try:
            with conn.cursor() as cur:
                summary_id = cur.execute(
                    "SELECT summary_id FROM summary WHERE dataset = 'storysumm' ORDER BY summary_id LIMIT 1"
                ).fetchone()[0]
                target = targets.resolve(cur, "storysumm", summary_id)
            what = ask.Ask("storysumm-binary", "openai", "gpt-4o", base_url=server.openai_base_url, fresh=True)
            wall, outside = _fresh_calls(conn, target, what)
            cached = ask.Ask("storysumm-binary", "openai", "gpt-4o", base_url=server.openai_base_url)
            hit = median_ms(lambda: ask.ask(conn, target, cached, access.cli_actor()), repeat=REPEAT, warmup=WARMUP)
            calls = conn.execute("SELECT count(*) FROM llm_call").fetchone()[0]
        finally:
            conn.close()
    assert calls == WARMUP + REPEAT, f"every fresh ask stores one call ({calls} stored)"
    return [
        Measure(
            f"llm: fresh call at 0 ms server latency, all overhead incl. SDK + HTTP (median of {REPEAT})",
            wall,
            "ms",
            50.0,
        ),
        Measure(
            f"llm: fresh call, overhead outside the provider call (render, parse, store; median of {REPEAT})",
            outside,
            "ms",
            50.0,
        ),
        Measure(f"llm: cache hit, no call (median of {REPEAT})", hit, "ms", 20.0),
    ]
