"""The team store failing under a server, for real: the throwaway cluster stopped, restarted while a
save waits, and a writing process killed with SIGKILL. Nothing acknowledged is lost, nothing is
stored twice, reads go on from the replica, and a server says writes are paused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from faithlens import config, store
from faithlens.coding import events, sessions
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import WritesPausedError
from faithlens.llm.runs.spec import Selection
from faithlens.store import replica
from faithlens.store.team import TeamStore, describe
from tests import coders
from tests.coders import ADMIN
from tests.coding.support import plant_rewrite, storysumm_ids
from tests.pgcluster import Cluster
from tests.team.conftest import events as store_events
from tests.team.test_replication import BOOK, CODERS, shared_rows

ROOT = Path(__file__).resolve().parents[2]


def _session(conn):
    spec = SessionSpec(
        name="duo", dataset="storysumm", level="summary", codebook=BOOK, selection=Selection("val"), coders=CODERS
    )
    return sessions.create(conn, ADMIN, spec)


def _codes(conn) -> list[tuple]:
    return conn.execute("SELECT event_id, coder, unit_id, codes FROM coding_event ORDER BY event_id").fetchall()


def test_while_postgresql_is_down_reads_go_on_writes_pause_and_nothing_is_lost(servers, pg_cluster: Cluster, team_url):
    a = servers("a")
    made = _session(a)
    units = storysumm_ids("val")[:3]
    coders.code(a, made, "alice", Submission(units[0], ("faithful",)))
    before = _codes(a)
    pg_cluster.stop()
    try:
        health, _, where = store.catch_up(a)
        assert not health.up and health.down_since is not None
        assert sessions.get(a, "duo") == made and events.latest(a, made, "alice", units[0]).codes == ("faithful",)
        started = time.monotonic()
        with pytest.raises(WritesPausedError, match=rf"Not saved: the team store {where} did not answer for 1 s"):
            coders.code(a, made, "alice", Submission(units[1], ("faithful",)))
        assert time.monotonic() - started < 5, "the save gives up after the retry window, not a TCP timeout"
        assert _codes(a) == before, "nothing of the refused save is in the replica"
    finally:
        pg_cluster.start()
    coders.code(a, made, "alice", Submission(units[1], ("faithful",)))
    health, applied, _ = store.catch_up(a)
    assert health.up
    assert [what for _, what in store_events(team_url)] == [
        "coding session duo",
        "coding code duo alice",
        "coding code duo alice",
    ]
    assert applied == 3 and len(_codes(a)) == 2


def test_a_save_while_postgresql_restarts_is_retried_until_it_is_back(
    servers, pg_cluster: Cluster, team_url, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(config.SETTINGS["events_retry"].env, "30")
    a, b = servers("a"), servers("b")
    made = _session(a)
    unit = storysumm_ids("val")[0]
    pg_cluster.stop()
    threading.Timer(1.0, pg_cluster.start).start()
    started = time.monotonic()
    event_id = coders.code(a, made, "alice", Submission(unit, ("faithful",)))
    assert time.monotonic() - started >= 1.0, "the save waited for the store"
    store.catch_up(b)
    assert _codes(b) == _codes(a) == [(event_id, "alice", unit, ["faithful"])]
    assert len(store_events(team_url)) == 2


def test_the_background_pull_brings_another_servers_codes_without_a_page_run(servers):
    a, b = servers("a"), servers("b")
    store.catch_up(b)
    store.listen(b)
    made = _session(a)
    coders.code(a, made, "alice", Submission(storysumm_ids("val")[0], ("faithful",)))
    deadline = time.monotonic() + 5
    while _codes(b) != _codes(a) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _codes(b) == _codes(a) and shared_rows(b) == shared_rows(a)


WRITER = """
import sys
from faithlens import store
from faithlens.coding import events, sessions
from faithlens.coding.events import Submission
from tests import coders
conn = store.connect(sys.argv[1])
store.catch_up(conn)
made = sessions.get(conn, "duo")
for position, unit in enumerate(made.units):
    event_id = coders.code(conn, made, "bob", Submission(unit, ("faithful",)))
    print(event_id, unit, flush=True)
"""


def test_a_writer_killed_with_sigkill_loses_nothing_it_was_told_was_saved(servers, team_url, tmp_path: Path):
    a = servers("a")
    made = _session(a)
    store.close(servers("b"))  # b's file, a replica that has not pulled yet
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "b.duckdb")], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    acknowledged = [writer.stdout.readline().split() for _ in range(5)]
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    store.catch_up(a)
    stored = {(str(event_id), unit) for event_id, coder, unit, _ in _codes(a) if coder == "bob"}
    assert {tuple(line) for line in acknowledged} <= stored
    units = [unit for _, unit in stored]
    assert len(units) == len(set(units)), "no unit was stored twice"
    b = servers("b")
    store.catch_up(b)
    assert shared_rows(b) == shared_rows(a), "the killed server's file catches up when it starts again"
    assert set(made.units) >= set(units)


def test_a_paid_answer_waits_for_the_store_instead_of_being_lost(servers, pg_cluster: Cluster, team_url):
    """The retry window is 1 s here; an LLM answer is given records.PAID_PATIENCE_S, so a store down
    for 3 s costs a code its save but not an answer its storage."""
    a, b = servers("a"), servers("b")
    unit = f"{storysumm_ids('test')[0]}#c0"
    pg_cluster.stop()
    threading.Timer(3.0, pg_cluster.start).start()
    started = time.monotonic()
    call_id = plant_rewrite(a, "llm/arm-rewrite-both/m", unit, "A rewritten claim.")
    assert time.monotonic() - started >= 3.0
    store.catch_up(b)
    assert b.execute("SELECT call_id, target_id FROM llm_call").fetchall() == [(call_id, unit)]
    assert [what for _, what in store_events(team_url)] == ["llm arm-rewrite llm/arm-rewrite-both/m"]


def test_the_first_save_after_a_long_outage_goes_through_at_once(servers, pg_cluster: Cluster):
    """The pool's own reconnection backs off (1, 2, 4, 8 s, ...): a save must not wait for its next try."""
    a = servers("a")
    made = _session(a)
    units = storysumm_ids("val")[:2]
    pg_cluster.stop()
    try:
        with pytest.raises(WritesPausedError):
            coders.code(a, made, "alice", Submission(units[0], ("faithful",)))
        time.sleep(8)
    finally:
        pg_cluster.start()
    started = time.monotonic()
    coders.code(a, made, "alice", Submission(units[1], ("faithful",)))
    assert time.monotonic() - started < 1.0


def test_a_save_is_refused_in_its_own_window_while_paid_answers_wait_for_the_store(servers, pg_cluster: Cluster):
    """Writes do not queue behind one another while the store is down: a code save gives up after the
    retry window (1 s here) even while an LLM answer is waiting, and the answer is stored once after."""
    a = servers("a")
    made = _session(a)
    pg_cluster.stop()
    answer = threading.Thread(target=plant_rewrite, args=(a, "llm/arm-rewrite-both/m", f"{made.units[0]}#c0", "Re."))
    answer.start()
    try:
        time.sleep(0.5)
        started = time.monotonic()
        with pytest.raises(WritesPausedError):
            coders.code(a, made, "alice", Submission(made.units[1], ("faithful",)))
        assert time.monotonic() - started < 3
    finally:
        pg_cluster.start()
    answer.join(30)
    assert a.execute("SELECT count(*) FROM llm_call").fetchone() == (1,)


def test_after_a_failed_read_the_background_pull_notices_the_store_is_back(servers, pg_cluster: Cluster):
    a, b = servers("a"), servers("b")
    store.catch_up(b)
    store.listen(b)
    pg_cluster.stop()
    try:
        health, _, _ = store.catch_up(b)
        assert not health.up
    finally:
        pg_cluster.start()
    made = _session(a)
    deadline = time.monotonic() + 10
    while not b.execute("SELECT count(*) FROM coding_session").fetchone()[0] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sessions.get(b, "duo") == made
    assert store.catch_up(b)[0].up


def test_messages_never_show_the_urls_password(servers):
    team = replica.of(servers("a")).team
    assert describe("postgresql://ann:pa/ss@db.lab:5432/faithlens?sslmode=require") == "db.lab:5432/faithlens"
    secret = TeamStore("postgresql://ops-user:s3cret@pw@127.0.0.1:1/faithlens", retry_s=0)  # '@' not encoded
    try:
        with pytest.raises(WritesPausedError) as refused:
            secret.next_id("coding_event_seq", "a test write")
        for piece in ("s3cret", "pw@", "ops-user"):
            assert piece not in str(refused.value) and piece not in secret.health.reason
    finally:
        secret.close()
    assert team.where.startswith("127.0.0.1:")
