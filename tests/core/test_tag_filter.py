"""Explore's `tags` filter over coders' tags: a coder's ambiguity types and claim types are offered
as `family: value`, and choosing one keeps exactly the summaries whose units carry it."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from faithlens import filter_options, querystate, store
from faithlens.coding import events, sessions
from faithlens.filters import Filters
from tests import coders
from tests.coders import ADMIN
from tests.raw import storysumm_records

DATASET = "storysumm"


@pytest.fixture
def conn(db_copy) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = store.connect(db_copy)
    yield connection
    connection.close()


def _matching(conn, chosen: Filters) -> set[str]:
    where, params = chosen.where(DATASET)
    rows = conn.execute(f"SELECT s.summary_id FROM summary s WHERE s.dataset = ?{where}", [DATASET, *params])
    return {row[0] for row in rows.fetchall()}


def test_coders_ambiguity_types_filter_explore(conn) -> None:
    session = sessions.create(
        conn,
        ADMIN,
        sessions.SessionSpec("ambiguity", DATASET, "sentence", "arm-ambiguity", sample=6, seed=4, blind=False),
    )
    coded = {session.units[0]: "2", session.units[1]: "2", session.units[2]: "4"}
    for unit, code in coded.items():
        coders.code(conn, session, "ana", events.Submission(unit, (code,)))

    with conn.cursor() as cur:
        options = filter_options.filter_options(cur, DATASET)
    assert options.tags == ("ambiguity_type: 2", "ambiguity_type: 4")

    expected = {unit.split("#")[0] for unit, code in coded.items() if code == "2"}
    assert _matching(conn, Filters(tags=("ambiguity_type: 2",))) == expected
    either = _matching(conn, Filters(tags=("ambiguity_type: 2", "ambiguity_type: 4")))
    assert either == {unit.split("#")[0] for unit in coded}
    assert set(storysumm_records()) >= either


def test_undone_tag_leaves_the_filter(conn) -> None:
    session = sessions.create(
        conn, ADMIN, sessions.SessionSpec("undo-tags", DATASET, "sentence", "arm-ambiguity", sample=3, blind=False)
    )
    coders.code(conn, session, "ana", events.Submission(session.units[0], ("1",)))
    coders.undo(conn, session, "ana", session.units[0])
    with conn.cursor() as cur:
        assert filter_options.filter_options(cur, DATASET).tags == ()
    assert _matching(conn, Filters(tags=("ambiguity_type: 1",))) == set()


def test_unknown_tag_from_a_link_is_dropped_with_a_note(conn) -> None:
    with conn.cursor() as cur:
        options = filter_options.filter_options(cur, DATASET)
    checked, notes = filter_options.check_against(Filters(tags=("ambiguity_type: 9",)), options)
    assert checked.tags == ()
    assert notes == [
        querystate.ignored("tags", "ambiguity_type: 9", "no summary or unit of this dataset carries that tag")
    ]
