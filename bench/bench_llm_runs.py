"""Runs over many units: wall time against the ideal ceil(N/C) x L, and a repeated run buys nothing.

The model is the tests' scripted server (`python -m tests.llmserver --delay L`) in its own process,
as a provider would be, answering every call after a fixed latency L; the ideal wall time of N items
at concurrency C is then ceil(N/C) x L, and the budget is 1.15x that. The run is StorySumm's Binary
prompt over all 96 summaries of a fresh copy of the bundled database: one call per summary, each
answer stored with its label event and the run's item event in one transaction as it arrives. The
same run made again must make 0 calls (every answer from the cache).
"""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.bench_llm_ondemand import _settings
from bench.measure import Measure
from faithlens import config, store
from faithlens.build import ingest
from faithlens.llm.runs import engine, log, spec

CASES = ((8, 1.0), (16, 1.0), (16, 0.5))
"""(concurrency C, latency L in seconds): a second is a quick real answer to an 800-word story."""
BUDGET_FACTOR = 1.15


@contextmanager
def _server(latency: float) -> Iterator[str]:
    """The scripted server in a subprocess; yields its OpenAI base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "tests.llmserver", "--port", str(port), "--text", "No", "--delay", str(latency)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=config.PROJECT_ROOT)
    try:
        process.stdout.readline()
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(10)


def _run(conn, base_url: str, concurrency: int, model: str) -> tuple[engine.Snapshot, float]:
    wanted = spec.RunSpec(
        "storysumm", "summary", "storysumm-binary", "openai", model, base_url=base_url, concurrency=concurrency
    )
    run_id = engine.create_run(conn, wanted, spec.Selection())
    with conn.cursor() as cur:
        run = log.load(cur, run_id)
    started = time.perf_counter()
    snapshot = engine.Runner(conn, run).execute()
    return snapshot, time.perf_counter() - started


def run() -> list[Measure]:
    measures = []
    with tempfile.TemporaryDirectory() as folder, _settings():
        path = Path(folder) / "bench.duckdb"
        ingest.ingest(path, config.data_dir())
        conn = store.connect(path)
        try:
            for concurrency, latency in CASES:
                with _server(latency) as base_url:
                    model = f"gpt-4o-bench-c{concurrency}-l{latency}"
                    first, wall = _run(conn, base_url, concurrency, model)
                    assert (first.done, first.calls) == (first.total, first.total), first
                    ideal = math.ceil(first.total / concurrency) * latency
                    name = f"llm run: {first.total} items, concurrency {concurrency}, {latency * 1000:.0f} ms a call"
                    measures.append(
                        Measure(f"{name}: wall / ideal ceil(N/C) x L = {ideal:.1f} s", wall / ideal, "x", BUDGET_FACTOR)
                    )
                    again, _ = _run(conn, base_url, concurrency, model)
                    measures.append(Measure(f"{name}: the same run again, calls made", again.calls, "", 0))
        finally:
            conn.close()
    return measures
