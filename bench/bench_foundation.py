"""Issue 2: full ingest of the bundled data (<= 3 s) and opening an existing database (<= 0.3 s)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import Measure, median_ms
from faithlens import config, store
from faithlens.build import ingest

ROOT = Path(__file__).resolve().parent.parent


def _open(path: Path) -> None:
    conn = store.connect(path, read_only=True)
    conn.execute("SELECT count(*) FROM summary").fetchone()
    conn.close()


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.duckdb"
        timings = []
        for _ in range(3):
            path.unlink(missing_ok=True)
            started = time.perf_counter()
            ingest.ingest(path, config.data_dir())
            timings.append(time.perf_counter() - started)
        cold = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "faithlens", "stats", "--db", str(path)], check=True, capture_output=True, cwd=ROOT
        )
        cli_seconds = time.perf_counter() - cold
        return [
            Measure("ingest: full build of the bundled data (best of 3)", min(timings), "s", 3.0),
            Measure("ingest: refresh of an existing database", _refresh(path), "s", 3.0),
            Measure(
                "open an existing database + first query (median of 7)", median_ms(lambda: _open(path)), "ms", 300.0
            ),
            Measure("CLI `stats` end to end, new process (informational)", cli_seconds, "s", 3.0),
        ]


def _refresh(path: Path) -> float:
    started = time.perf_counter()
    ingest.ingest(path, config.data_dir())
    return time.perf_counter() - started
