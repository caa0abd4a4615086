"""Read-only commands on a server's replica, against a real PostgreSQL team store (a throwaway
cluster) and two replicas: codes saved through server a are in `coding agreement --db B` without a
page run on server b, whether b's file is free or held by its running server; with the store down,
the command reads b's file as it is and says which event of the store and which time its figures
stand at, and no psycopg_pool warning reaches the terminal, there or in a write's one error line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from sklearn.metrics import cohen_kappa_score

from faithlens import store
from faithlens.coding import sessions
from faithlens.coding.events import Submission
from faithlens.store.team import describe
from tests import coders
from tests.coding.support import storysumm_ids
from tests.holder import holding
from tests.pgcluster import Cluster
from tests.team.conftest import events as store_events
from tests.team.test_replication import ALICE, BOB, _session, shared_rows

ROOT = Path(__file__).resolve().parents[2]
WRITTEN = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m faithlens ARGS` as a user runs it, in its own process (FAITHLENS_EVENTS_URL as set)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "faithlens", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


def _b_file_then_codes_through_a(servers) -> tuple[Path, list[str], duckdb.DuckDBPyConnection, sessions.Session]:
    """Server b joins the store and stops; then server a makes a session and both coders code on a."""
    b = servers("b")
    store.catch_up(b)
    b_path = Path(
        b.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0]
    )
    store.close(b)
    a = servers("a")
    made = _session(a)
    units = storysumm_ids("val")[: len(ALICE)]
    for unit, alice, bob in zip(units, ALICE, BOB, strict=True):
        coders.code(a, made, "alice", Submission(unit, (alice,), note="why"))
        coders.code(a, made, "bob", Submission(unit, (bob,), note="why"))
    with duckdb.connect(str(b_path), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM coding_event").fetchone() == (0,), "b has not pulled a's codes"
    return b_path, units, a, made


def _agreement_of_a_codes(done: subprocess.CompletedProcess[str], units: list[str]) -> None:
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["coders"] == ["alice", "bob"] and found["complete"] == len(units)
    (pair,) = found["pairs"]
    assert pair["n"] == len(units)
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(ALICE, BOB))


def test_a_read_on_a_free_replica_catches_up_first_and_keeps_what_it_applied(servers, team_url: str):
    b_path, units, a, _ = _b_file_then_codes_through_a(servers)
    done = _cli("coding", "agreement", "--session", "duo", "--json", "--db", str(b_path))
    _agreement_of_a_codes(done, units)
    newest = store_events(team_url)[-1][0]
    assert re.fullmatch(
        rf"note: caught up with the team store {re.escape(describe(team_url))}: these figures stand at its event "
        rf"{newest}, written {WRITTEN}\n",
        done.stderr,
    )
    with duckdb.connect(str(b_path), read_only=True) as conn:
        assert shared_rows(conn) == shared_rows(a), "b's file holds what the command applied, as b's server would"


def test_a_read_while_bs_server_holds_its_file_catches_up_in_the_snapshot(servers, team_url: str):
    b_path, units, _, _ = _b_file_then_codes_through_a(servers)
    with holding(b_path) as holder:
        done = _cli("coding", "agreement", "--session", "duo", "--json", "--db", str(b_path))
    _agreement_of_a_codes(done, units)
    snapshot, team = done.stderr.splitlines()
    assert snapshot.startswith(f"note: process {holder.pid} ") and "snapshot" in snapshot
    assert team.startswith(f"note: caught up with the team store {describe(team_url)}: these figures stand at its")


def test_with_the_store_down_reads_say_what_they_stand_at_and_no_pool_warning_shows(
    servers, pg_cluster: Cluster, team_url: str, tmp_path: Path
):
    b_path, units, a, made = _b_file_then_codes_through_a(servers)
    assert _cli("stats", "--db", str(b_path)).returncode == 0, "b catches up with every code so far"
    stands_at = store_events(team_url)[-1][0]
    with duckdb.connect(str(b_path), read_only=True) as conn:
        written = conn.execute("SELECT value FROM meta WHERE key = 'events_pulled_at'").fetchone()[0]
    assert re.fullmatch(WRITTEN, written)
    flipped = "unfaithful" if ALICE[0] == "faithful" else "faithful"
    coders.code(a, made, "alice", Submission(units[0], (flipped,), note="changed her mind"))
    codes = tmp_path / "codes.csv"
    codes.write_text(f"unit_id,coder,code\n{units[0]},carol,faithful\n", encoding="utf-8")
    pg_cluster.stop()
    try:
        stats = _cli("stats", "--db", str(b_path))
        agreement = _cli("coding", "agreement", "--session", "duo", "--json", "--db", str(b_path))
        write = _cli("coding", "import", str(codes), "--dataset", "storysumm", "--session", "trio",
                     "--codebook", "storysumm-faithfulness", "--db", str(b_path))  # fmt: skip
    finally:
        pg_cluster.start()
    note = (
        f"note: the team store {describe(team_url)} did not answer ({{}}): these figures stand at its event "
        f"{stands_at}, written {written}, the last this copy of it applied"
    )
    (line,) = stats.stderr.splitlines()
    assert stats.returncode == 0 and re.fullmatch(re.escape(note).replace(r"\{\}", ".+"), line)
    assert agreement.stderr == stats.stderr
    _agreement_of_a_codes(agreement, units)  # as b stood: alice's later change is not in it
    assert write.returncode == 2 and re.fullmatch(r"error: Not saved: .*\n", write.stderr), write.stderr
    for done in (stats, agreement, write):
        assert "error connecting" not in done.stderr and "faithlens-team" not in done.stderr
