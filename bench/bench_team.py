"""The team store under a crowd of coders, against a throwaway PostgreSQL cluster (tests/pgcluster.py).

- CODERS simulated coders, SAVES saves each, spread over SERVERS server processes
  (`bench/team_coders.py`), each process with its own DuckDB replica and one thread per coder. A
  coder reads a unit for THINK_S seconds on average (uniform between 0 and twice that) before saving;
  at that pace the crowd saves about CODERS / THINK_S codes a second. RESTART_AT_S seconds in,
  PostgreSQL is stopped for OUTAGE_S seconds and started again (`pg_ctl`), as a maintenance restart
  would: saves in flight wait for it, and a coder told "Not saved" saves again. The bench counts
  acknowledged saves missing from the replicas (lost) and code events stored more than once
  (duplicated), checks that both replicas end with the same codes, and reports the 95th percentile of
  the time from the first Save to "Saved" (PostgreSQL commit and the replica's apply, the restart
  included), and the slowest save, which shows the restart was met. Budgets: 0 lost, 0 duplicated,
  0 rows differing, p95 <= 100 ms, slowest <= the outage plus the default retry window.
- The check a page run makes when nothing is new (`store.catch_up`: the store's newest event id
  against the replica's): median of CHECKS calls. Budget 5 ms.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.measure import Measure, environment, median_ms
from faithlens import access, config, store
from faithlens.build import ingest
from faithlens.coding import sessions
from faithlens.llm.runs.spec import Selection
from tests.pgcluster import Cluster

CODERS = 20
SAVES = 200
SERVERS = 2
THINK_S = 0.25
RESTART_AT_S = 20
OUTAGE_S = 1.0
CHECKS = 200
P95_BUDGET_MS = 100.0
CHECK_BUDGET_MS = 5.0
SLOWEST_BUDGET_MS = 1000 * (OUTAGE_S + 5)
"""A save that meets the restart waits for it: the outage and the store's default retry window at most."""
ROOT = Path(__file__).resolve().parent.parent
SESSION = "bench-team"
CODES = "SELECT event_id, coder, unit_id, codes FROM coding_event ORDER BY event_id"


def _replicas(folder: Path) -> list[Path]:
    """One copy of the bundled database per server; the session is made on the first, through the store."""
    base = folder / "bundled.duckdb"
    ingest.ingest(base, config.data_dir())
    paths = [shutil.copy(base, folder / f"server{n}.duckdb") for n in range(SERVERS)]
    conn = store.connect(paths[0])
    try:
        spec = sessions.SessionSpec(SESSION, "storysumm", "sentence", "storysumm-faithfulness", selection=Selection())
        sessions.create(conn, access.cli_actor(), spec)
    finally:
        store.close(conn)
    return [Path(p) for p in paths]


def _restart(cluster: Cluster) -> None:
    cluster.stop()
    time.sleep(OUTAGE_S)
    cluster.start()


def _crowd(paths: list[Path], cluster: Cluster) -> list[dict]:
    """Run the server processes to the end, PostgreSQL restarting meanwhile; every acknowledged save."""
    coders = [f"coder{n:02d}" for n in range(CODERS)]
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.team_coders",
                str(path),
                SESSION,
                str(SAVES),
                str(THINK_S),
                *coders[n::SERVERS],
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for n, path in enumerate(paths)
    ]
    restart = threading.Timer(RESTART_AT_S, _restart, [cluster])
    restart.start()
    acknowledged = []
    for process in processes:
        out, err = process.communicate()
        lines = [json.loads(line) for line in out.splitlines() if line.strip()]
        if process.returncode != 0 or not lines or not lines[-1].get("done"):
            raise RuntimeError(f"a simulated server failed (exit {process.returncode}):\n{err[-2000:]}")
        acknowledged += lines[:-1]
    restart.join()
    return acknowledged


def run() -> list[Measure]:
    cluster = Cluster().init()
    try:
        with tempfile.TemporaryDirectory() as folder, environment({"FAITHLENS_EVENTS_URL": cluster.url}):
            paths = _replicas(Path(folder))
            acknowledged = _crowd(paths, cluster)
            conns = [store.connect(path) for path in paths]
            try:
                for conn in conns:
                    store.catch_up(conn)
                rows = [conn.execute(CODES).fetchall() for conn in conns]
                check_ms = median_ms(lambda: store.catch_up(conns[0]), repeat=CHECKS, warmup=5)
            finally:
                for conn in conns:
                    store.close(conn)
    finally:
        cluster.remove()
    stored = {row[0]: row for row in rows[0]}
    lost = sum(1 for save in acknowledged if stored.get(save["event_id"], ())[1:3] != (save["coder"], save["unit"]))
    duplicated = len(rows[0]) - len({(row[1], row[2]) for row in rows[0]})
    differing = _differ(rows)
    p95 = statistics.quantiles([save["ms"] for save in acknowledged], n=20)[-1]
    crowd = f"team store, {CODERS} coders x {SAVES} saves, {SERVERS} servers, a restart ({len(acknowledged)} saved)"
    return [
        Measure(f"{crowd}: acknowledged saves lost", lost, "", 0),
        Measure(f"{crowd}: code events stored twice", duplicated, "", 0),
        Measure(f"{crowd}: code rows differing between the replicas", differing, "", 0),
        Measure(f"{crowd}: p95 save acknowledged", p95, "ms", P95_BUDGET_MS),
        Measure(
            f"{crowd}: slowest save (it met the restart)",
            max(save["ms"] for save in acknowledged),
            "ms",
            SLOWEST_BUDGET_MS,
        ),
        Measure("team store: page run's check with nothing new to pull (median)", check_ms, "ms", CHECK_BUDGET_MS),
    ]


def _differ(rows: list[list[tuple]]) -> int:
    first, second = ({json.dumps(row, default=str) for row in side} for side in rows)
    return len(first ^ second)
