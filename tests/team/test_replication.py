"""Two app servers' DuckDB files as replicas of one real PostgreSQL team store (a throwaway cluster):
what one server writes the other shows after pulling; ids come from PostgreSQL, so both files hold
the same rows; pulling twice changes nothing; a server that was down catches up; an event both
replicas must refuse is skipped on both, and its writer is told. Without FAITHLENS_EVENTS_URL the
file works alone, as before, and psycopg is not even loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import psycopg
import pytest
from sklearn.metrics import cohen_kappa_score

from faithlens import store
from faithlens.build import ingest
from faithlens.coding import closing, codebook, library, report, sessions
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import FaithLensError
from faithlens.llm import records
from faithlens.llm.runs import log
from faithlens.llm.runs.spec import RunSpec, Selection
from faithlens.store import replica
from tests import coders
from tests.coders import ADMIN
from tests.coding.support import llm_call, plant_rewrite, storysumm_ids
from tests.coding.test_codebooks import _valid_yaml
from tests.team.conftest import events as store_events

ROOT = Path(__file__).resolve().parents[2]
CODERS = ("alice", "bob")
"""Invited when the session is made, so their codes are the only events of theirs (no join)."""
BOOK = "storysumm-faithfulness"
ALICE = ("faithful", "unfaithful", "faithful", "faithful", "unfaithful", "faithful")
BOB = ("faithful", "unfaithful", "unfaithful", "faithful", "faithful", "faithful")
SHARED_ROWS = {
    "coding_session": "SELECT * FROM coding_session ORDER BY session_id",
    "coding_coder": "SELECT * FROM coding_coder ORDER BY ALL",
    "coding_event": "SELECT * FROM coding_event ORDER BY event_id",
    "codebook": "SELECT * FROM codebook ORDER BY ALL",
    "coder labels": "SELECT * EXCLUDE (event_id) FROM current_label WHERE source LIKE 'coding/%' ORDER BY ALL",
    "llm_call": "SELECT * FROM llm_call ORDER BY call_id",
    "llm_run": "SELECT * FROM llm_run ORDER BY run_id",
    "llm_run_event": "SELECT * FROM llm_run_event ORDER BY event_id",
}
"""The rows the event log writes, timestamps included (each replica's own label event ids aside)."""


def shared_rows(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    return {name: conn.execute(sql).fetchall() for name, sql in SHARED_ROWS.items()}


def _session(conn: duckdb.DuckDBPyConnection, name: str = "duo") -> sessions.Session:
    spec = SessionSpec(
        name=name, dataset="storysumm", level="summary", codebook=BOOK, selection=Selection("val"), coders=CODERS
    )
    return sessions.create(conn, ADMIN, spec)


def test_codes_from_two_servers_converge_to_one_agreement_table(servers, team_url: str):
    a, b = servers("a"), servers("b")
    made = _session(a)
    store.catch_up(b)
    on_b = sessions.get(b, "duo")
    assert on_b == made, "server b holds the session server a made, with the same id"
    units = storysumm_ids("val")[: len(ALICE)]
    for unit, alice, bob in zip(units, ALICE, BOB, strict=True):
        coders.code(a, made, "alice", Submission(unit, (alice,), note="why"))
        coders.code(b, on_b, "bob", Submission(unit, (bob,), note="why"))
    store.catch_up(a)
    store.catch_up(b)

    assert shared_rows(a) == shared_rows(b)
    agreement_a, agreement_b = report.session_agreement(a, made), report.session_agreement(b, on_b)
    assert agreement_a == agreement_b
    (pair,) = agreement_a.overall.pairs
    assert pair.n == len(units)
    assert pair.kappa == pytest.approx(cohen_kappa_score(ALICE, BOB))
    saves = [what for _, what in store_events(team_url) if what.startswith("coding code")]
    assert len(saves) == 2 * len(units), "one event per save, none twice"

    closing.close(b, ADMIN, on_b)
    store.catch_up(a)
    released = shared_rows(a)
    assert released == shared_rows(b), "the close's label writes reach server a as server b made them"
    assert len(released["coder labels"]) == 2 * len(units), "the blind session's codes became labels at the close"


def test_ids_are_drawn_from_postgresql_so_every_replica_stores_the_same(servers, team_url: str):
    a, b = servers("a"), servers("b")
    made = _session(a)
    unit = storysumm_ids("val")[0]
    event_id = coders.code(a, made, "alice", Submission(unit, ("faithful",)))
    with psycopg.connect(team_url) as pg:
        drawn = {
            name: pg.execute(f"SELECT last_value FROM {name}").fetchone()[0]
            for name in ("coding_session_seq", "coding_event_seq")
        }
    assert (made.session_id, event_id) == (drawn["coding_session_seq"], drawn["coding_event_seq"])
    store.catch_up(b)
    assert b.execute("SELECT event_id, coder, unit_id FROM coding_event").fetchall() == [(event_id, "alice", unit)]


def test_llm_answers_and_run_progress_reach_the_other_server(servers):
    a, b = servers("a"), servers("b")
    unit = storysumm_ids("test")[0]
    call_id = plant_rewrite(a, "llm/arm-rewrite-both/m", f"{unit}#c0", "A rewritten claim.")
    run_id = log.create(a, _run_spec(), [unit], "1 summary")
    log.record(a, run_id, "state", "running")
    store.catch_up(b)
    assert b.execute("SELECT call_id FROM llm_call").fetchall() == [(call_id,)]
    assert b.execute("SELECT run_id, status FROM llm_run_event").fetchall() == [(run_id, "running")]
    assert shared_rows(a) == shared_rows(b)


def test_one_request_bought_on_two_servers_keeps_both_answers_as_two_samples(servers):
    """Both servers asked before either's answer reached the other: both paid, so both answers stay,
    the later as the next sample of the request rather than a clash that would drop it."""
    a, b = servers("a"), servers("b")
    first = records.save(a, llm_call(request_key="same", replies=["from a"]), None, "suggestions")
    second = records.save(b, llm_call(request_key="same", replies=["from b"]), None, "suggestions")
    store.catch_up(a)
    stored = "SELECT call_id, sample, replies FROM llm_call ORDER BY call_id"
    assert (
        a.execute(stored).fetchall()
        == b.execute(stored).fetchall()
        == [
            (first, 0, ["from a"]),
            (second, 1, ["from b"]),
        ]
    )


def _run_spec() -> RunSpec:
    return RunSpec(
        dataset="storysumm", level="summary", method="storysumm-binary", provider="openai", model="m", source="llm/run"
    )


def test_pulling_again_changes_nothing(servers, team_url: str):
    a, b = servers("a"), servers("b")
    made = _session(a)
    for unit in storysumm_ids("val")[:3]:
        coders.code(a, made, "alice", Submission(unit, ("faithful",)))
    store.catch_up(b)
    before = shared_rows(b), b.execute("SELECT count(*) FROM write_log").fetchone()
    again = replica.of(b)
    for event in again.team.events_after(0):
        again._apply(event)
    again._pulled = 0
    again.pull()
    assert (shared_rows(b), b.execute("SELECT count(*) FROM write_log").fetchone()) == before


def test_a_server_that_was_down_catches_up_where_it_stopped(servers, team_url: str):
    a, b = servers("a"), servers("b")
    made = _session(a)
    units = storysumm_ids("val")[:4]
    coders.code(a, made, "alice", Submission(units[0], ("faithful",)))
    store.catch_up(b)
    logged = b.execute("SELECT count(*) FROM write_log").fetchone()[0]
    store.close(b)
    for unit in units[1:]:
        coders.code(a, made, "alice", Submission(unit, ("unfaithful",), note="why"))
    b = servers("b")
    health, applied, _ = store.catch_up(b)
    assert health.up and applied == len(store_events(team_url))
    assert b.execute("SELECT count(*) FROM write_log").fetchone()[0] == logged + len(units) - 1
    assert shared_rows(b) == shared_rows(a)
    late = servers("c")
    store.catch_up(late)
    assert shared_rows(late) == shared_rows(a), "a server started later replays the whole log"


def test_one_session_name_made_on_two_servers_at_once_is_refused_on_both(servers, team_url: str):
    """Server b checks the name before a's session reaches it, so its own run passes; replayed after
    a's in the store's order, b's session breaks the name's uniqueness on every replica alike."""
    a, b = servers("a"), servers("b")
    spec = SessionSpec(name="duo", dataset="storysumm", level="summary", codebook=BOOK)
    with b.cursor() as cur:
        drafted = sessions.draft(cur, spec)
    with pytest.raises(duckdb.ConstraintException, match="duo"):
        with store.write(b, "coding session duo on b") as cur:
            made = sessions.create(a, ADMIN, spec)
            sessions.insert(cur, drafted, ADMIN.id)
    store.catch_up(a)
    late = store_events(team_url)[-1][0]
    for conn in (a, b):
        assert conn.execute("SELECT session_id, name FROM coding_session").fetchall() == [(made.session_id, "duo")]
        skipped = conn.execute("SELECT what FROM write_log WHERE what LIKE 'skipped%'").fetchall()
        assert skipped == [(f"skipped team event {late}: coding session duo on b",)]
    assert shared_rows(a) == shared_rows(b)


def test_the_same_event_key_appended_twice_is_one_event(servers, team_url: str):
    team = replica.of(servers("a")).team
    first = team.append("one-key", "coding code s u", [], deadline=0)
    assert team.append("one-key", "coding code s u", [], deadline=0) == first
    assert len(store_events(team_url)) == 1


def test_a_file_with_codes_of_its_own_refuses_to_join(built_db: Path, tmp_path: Path, servers):
    path = tmp_path / "own.duckdb"
    path.write_bytes(built_db.read_bytes())
    with pytest.MonkeyPatch.context() as alone:
        alone.delenv("FAITHLENS_EVENTS_URL")
        conn = store.connect(path)
        _session(conn, "mine")
        store.close(conn)
    conn = servers("own")
    with pytest.raises(FaithLensError, match=r"holds rows written without the team store .*1 in coding_session"):
        store.catch_up(conn)


def test_without_the_setting_the_file_works_alone_and_psycopg_is_not_loaded(db_copy: Path):
    script = f"""
import sys
from faithlens import store
from faithlens.coding import sessions
from faithlens.coding.sessions import SessionSpec
from tests.coders import ADMIN
conn = store.connect({str(db_copy)!r})
made = sessions.create(conn, ADMIN, SessionSpec(name="alone", dataset="storysumm", level="summary", codebook={BOOK!r}))
print(store.catch_up(conn), made.session_id, "psycopg" in sys.modules)
"""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "1", "False"]


def test_a_codebook_edited_twice_is_current_at_its_newest_version_on_every_server(servers, tmp_path: Path):
    """Its versions' times are the writer's, not each replica's replay time (one instant in a catch-up)."""
    a = servers("a")
    books = []
    for n, note in enumerate(("Everything the line says", "All the line says")):
        path = tmp_path / f"lab{n}.yaml"
        path.write_text(_valid_yaml().replace("Everything the line says", note), encoding="utf-8")
        books.append(library.save(a, ADMIN, codebook.read_file(path)))
    b = servers("b")
    store.catch_up(b)
    for conn in (a, b):
        with conn.cursor() as cur:
            assert library.available(cur)["lab-yesno"] == books[1]
    assert shared_rows(a) == shared_rows(b)


def test_a_replica_file_refuses_writes_without_the_store(servers, monkeypatch):
    a = servers("a")
    store.catch_up(a)
    path = Path(a.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0])
    store.close(a)
    monkeypatch.delenv("FAITHLENS_EVENTS_URL")
    with pytest.raises(FaithLensError, match="is a server's copy of a team store, and FAITHLENS_EVENTS_URL is not set"):
        store.connect(path)
    with store.open_for_reading(path) as reading:
        assert reading.conn.execute("SELECT count(*) FROM coding_session").fetchone() == (0,)


def test_a_dataset_is_not_imported_again_over_a_replicas_codes(servers, tmp_path: Path):
    conn = servers("a")
    path = Path(
        conn.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0]
    )
    store.close(conn)
    data = tmp_path / "mine.jsonl"
    data.write_text(json.dumps({"document_id": "d1", "summary_id": "s1", "sentences": [{"text": "One."}]}) + "\n")
    ingest.import_file(path, data, "canonical", "mine")
    with pytest.raises(FaithLensError, match="'mine' is loaded already, and this database is a replica"):
        ingest.import_file(path, data, "canonical", "mine")
