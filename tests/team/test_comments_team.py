"""The discussion of a disputed unit through a real PostgreSQL team store: comments posted on two servers
reach both replicas with the same ids (drawn from PostgreSQL), one event each; a blind coder on either
server still reads only their own; and a replica holding comments written without the store may not join."""

from __future__ import annotations

import psycopg
import pytest

from faithlens import store
from faithlens.coding import comments, sessions
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import FaithLensError
from faithlens.llm.runs.spec import Selection
from tests import coders
from tests.coders import ADMIN
from tests.team.conftest import events as store_events

ROWS = "SELECT comment_id, session_id, unit_id, author, role, text, created_at FROM coding_comment ORDER BY ALL"


def test_comments_from_two_servers_reach_both_and_stay_blind(servers, team_url: str) -> None:
    a, b = servers("a"), servers("b")
    spec = SessionSpec("talk", "storysumm", "summary", "storysumm-faithfulness", selection=Selection("val"), blind=True)
    made = sessions.create(a, ADMIN, spec)
    unit = made.units[0]
    coders.code(a, made, "alice", Submission(unit, ("faithful",)))
    store.catch_up(b)
    on_b = sessions.get(b, "talk")
    coders.code(b, on_b, "bob", Submission(unit, ("unfaithful",), note="the ending"))
    first = coders.comment(a, made, unit, "Nothing in the story contradicts it.", "alice", "coder")
    second = coders.comment(b, on_b, unit, "The last line says he stayed.", "bob", "coder")
    third = coders.comment(a, made, unit, "Alice, what of the last line?", "dee", "adjudicator")
    store.catch_up(a)
    store.catch_up(b)

    assert a.execute(ROWS).fetchall() == b.execute(ROWS).fetchall()
    with psycopg.connect(team_url) as pg:
        drawn = pg.execute("SELECT last_value FROM coding_comment_seq").fetchone()[0]
    assert (first, second, third) == (drawn - 2, drawn - 1, drawn), "ids come from the store's sequence"
    posted = [what for _, what in store_events(team_url) if what.startswith("coding comment")]
    assert posted == [
        "coding comment talk coder:alice",
        "coding comment talk coder:bob",
        "coding comment talk adjudicator:dee",
    ], "one event per comment"
    for conn, found in ((a, made), (b, on_b)):
        assert [c.author for c in comments.thread(conn, found, unit, coders.reader("alice"))] == ["alice"]
        assert [c.author for c in comments.thread(conn, found, unit, coders.reader("bob"))] == ["bob"]
        assert [c.author for c in comments.thread(conn, found, unit, coders.reader(None))] == ["alice", "bob", "dee"]


def test_a_file_with_comments_made_alone_may_not_join_a_store(built_db, tmp_path, servers) -> None:
    path = tmp_path / "alone.duckdb"
    path.write_bytes(built_db.read_bytes())
    with pytest.MonkeyPatch.context() as alone:
        alone.delenv("FAITHLENS_EVENTS_URL")
        conn = store.connect(path)
        spec = SessionSpec("solo", "storysumm", "summary", "storysumm-faithfulness", selection=Selection("val"))
        made = sessions.create(conn, ADMIN, spec)
        coders.comment(conn, made, made.units[0], "a note", "ann", "coder")
        # Only the comment stays: the file's other shared rows would refuse it on their own.
        for table in ("coding_session", "codebook"):
            conn.execute(f"DELETE FROM {table}")
        store.close(conn)
    conn = servers("alone")
    with pytest.raises(FaithLensError, match=r"holds rows written without the team store .*1 in coding_comment"):
        store.catch_up(conn)
