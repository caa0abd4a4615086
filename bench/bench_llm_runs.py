"""Runs over many units: wall time against the ideal ceil(N/C) x L and against a bare SDK thread pool
sending the same requests, and a repeated run buys nothing.

The model is the tests' scripted server (`python -m tests.llmserver --delay L`) in its own process,
as a provider would be, answering every call after a fixed latency L; the ideal wall time of N items
at concurrency C is then ceil(N/C) x L, and the budget is 1.15x that. The run is StorySumm's Binary
prompt over all 96 summaries of a fresh copy of the bundled database: one call per summary, each
answer stored with its label event and the run's item event in one transaction as it arrives. The
same run made again must make 0 calls (every answer from the cache).

Side by side (issue 27): 96 items at concurrency 8 against a 300 ms server, the run against a bare
pool of 8 threads streaming the same rendered requests through one openai client and storing
nothing; the best of 3 alternating rounds of each, so that both see the same machine. Budget 1.15x.
"""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from bench.bench_llm_ondemand import _settings
from bench.measure import Measure
from faithlens import access, config, store
from faithlens.build import ingest
from faithlens.llm import ask, targets
from faithlens.llm.runs import engine, log, spec

CASES = ((8, 1.0), (16, 1.0), (16, 0.5))
"""(concurrency C, latency L in seconds): a second is a quick real answer to an 800-word story."""
BUDGET_FACTOR = 1.15
SIDE_BY_SIDE = (8, 0.3, 3)
"""Concurrency, latency and rounds of the run beside the bare SDK pool."""


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
    run_id = engine.create_run(conn, wanted, spec.Selection(), access.cli_actor())
    with conn.cursor() as cur:
        run = log.load(cur, run_id)
    started = time.perf_counter()
    snapshot = engine.Runner(conn, run, access.cli_actor()).execute()
    return snapshot, time.perf_counter() - started


def _bare_pool(conn, base_url: str, concurrency: int, model: str) -> float:
    """Seconds a plain thread pool takes to stream the run's requests (rendered by the same prompts)."""
    import openai

    wanted = spec.RunSpec("storysumm", "summary", "storysumm-binary", "openai", model, base_url=base_url).resolved()
    with conn.cursor() as cur:
        units, _ = spec.select_units(cur, "storysumm", "summary", spec.Selection())
        found = targets.resolve_many(cur, "storysumm", "summary", units)
    requests = [ask.prepare(conn, target, wanted.ask(0), access.cli_actor()).requests[0] for target in found]
    client = openai.OpenAI(base_url=base_url, api_key="bench")

    def send(request: ask.Request) -> str:
        sent = [{"role": "system", "content": request.system}] if request.system else []
        sent += [{"role": "user", "content": turn} for turn in request.turns]
        chunks = client.chat.completions.create(
            model=model, messages=sent, temperature=request.template.temperature,
            max_tokens=request.template.max_tokens, stream=True,
            stream_options={"include_usage": True},
        )  # fmt: skip
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

    with ThreadPoolExecutor(concurrency) as pool:
        pool.submit(send, requests[0]).result()  # the client's first connection, as the run's warm client
        started = time.perf_counter()
        answers = list(pool.map(send, requests))
    assert all(answers), "every request answered"
    return time.perf_counter() - started


def side_by_side(conn) -> list[Measure]:
    """The run against a bare SDK pool over the same requests, best of alternating rounds."""
    concurrency, latency, rounds = SIDE_BY_SIDE
    runs, pools = [], []
    with _server(latency) as base_url:
        for number in range(rounds):
            pools.append(_bare_pool(conn, base_url, concurrency, f"gpt-4o-pool-{number}"))
            done, wall = _run(conn, base_url, concurrency, f"gpt-4o-side-{number}")
            assert (done.done, done.calls) == (done.total, done.total), done
            runs.append(wall)
    name = f"llm run beside a bare SDK pool: {done.total} items, concurrency {concurrency}, {latency * 1000:.0f} ms"
    return [
        Measure(f"{name}: bare pool, best of {rounds}", min(pools), "s", math.inf),
        Measure(f"{name}: run, best of {rounds}", min(runs), "s", math.inf),
        Measure(f"{name}: run / bare pool", min(runs) / min(pools), "x", BUDGET_FACTOR),
    ]


def run() -> list[Measure]:
    measures = []
    with tempfile.TemporaryDirectory() as folder, _settings():
        path = Path(folder) / "bench.duckdb"
        ingest.ingest(path, config.data_dir())
        conn = store.connect(path)
        try:
            measures += side_by_side(conn)
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
