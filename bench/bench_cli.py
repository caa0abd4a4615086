"""Issue 27 item 17: the command line starts fast. Each command is timed as a user runs it, a new
`python -m faithlens` process from start to exit (median of several runs), beside a bare
`python -c pass` measured in the same run, so a busy machine shows as a slow baseline rather than a
slow command. Budgets: `--help` <= 0.3 s, `stats --json` <= 0.6 s, a full `ingest` into a fresh
database <= 1.5 s."""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.measure import Measure
from faithlens import config

ROOT = Path(__file__).resolve().parent.parent
RUNS = 7
INGEST_RUNS = 3


def _seconds(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one new process running `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(make_argv, runs: int) -> tuple[float, float]:
    """Median wall and CPU time of `runs` new processes; `make_argv(n)` gives the n-th one's command line."""
    timed = [_seconds(make_argv(n)) for n in range(runs)]
    return statistics.median(t[0] for t in timed), statistics.median(t[1] for t in timed)


def run() -> list[Measure]:
    """Each command's wall time against its budget, and its CPU time (informational), which a busy
    machine inflates far less; the baseline's budget is --help's, for scale."""
    cli = [sys.executable, "-m", "faithlens"]
    with tempfile.TemporaryDirectory() as folder:
        fresh = [Path(folder) / f"ingest{n}.duckdb" for n in range(INGEST_RUNS)]
        data = str(config.data_dir())
        commands = (
            ("bare `python -c pass` (baseline, informational)", lambda n: [sys.executable, "-c", "pass"], RUNS, 0.3),
            ("`python -m faithlens --help`", lambda n: [*cli, "--help"], RUNS, 0.3),
            ("full `ingest` into a fresh database", lambda n: [*cli, "ingest", "--db", str(fresh[n]), "--data-dir", data], INGEST_RUNS, 1.5),
            ("`stats --json`", lambda n: [*cli, "stats", "--json", "--db", str(fresh[0])], RUNS, 0.6),
        )  # fmt: skip
        measures = []
        for what, make_argv, runs, budget in commands:
            wall, cpu = _median(make_argv, runs)
            measures.append(Measure(f"CLI {what}: from process start to exit (median of {runs})", wall, "s", budget))
            measures.append(Measure(f"CLI {what}: its CPU time (informational)", cpu, "s", budget))
    return measures
