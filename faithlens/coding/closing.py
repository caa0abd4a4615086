"""Closing a session, and when its codes become label sources.

A blind session keeps its codes to the coding pages while it is open: the label sources
`coding/<session>/<coder>` (which Explore, Compare, Errors, Overview, `stats` and exports read for
anyone) are written only once an admin closes it. So no page outside coding, and no filter, count or
export, can show one coder how another coded before the session is final. An open session that is
not blind writes them with each code, as before.

Closing writes, in the one transaction that records the close, every coder's current code (the
adjudicated ones included) as the label events or tags `faithlens.coding.labels` makes of it, each
event made by whoever made the code.
"""

from __future__ import annotations

import json

import duckdb

from faithlens import access, store
from faithlens.coding import library
from faithlens.coding.events import LATEST_CODE, Submission
from faithlens.coding.labels import label_writes, write_labels
from faithlens.coding.sessions import Session, get


def close(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> Session:
    """Close the session once and for all (admins only): its codes are final, and its coders may see the
    others' codes, the agreement and the adjudication; a blind session's codes join the label sources.
    Closing a closed session changes nothing."""
    access.require(actor, "close_session")
    if not session.closed:
        store.write_retrying(conn, f"coding close {session.name}", lambda cur: _close(cur, actor, session))
    return get(conn, session.name)


def _close(cur: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> None:
    inserted = cur.execute(
        "INSERT INTO coding_close (session_id, closed_by, closed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING "
        "RETURNING session_id",
        [session.session_id, actor.id, store.stamp()],
    ).fetchall()
    if inserted and session.blind:
        release(cur, session)


def release(cur: duckdb.DuckDBPyConnection, session: Session) -> int:
    """Write every current code of the session as label events or tags, inside the caller's
    transaction; returns how many codes were written."""
    book = library.get(cur, session.codebook, session.codebook_version)
    rows = cur.execute(
        f"""
        SELECT coder, unit_id, codes, note, CAST(detail AS VARCHAR), made_by FROM (
            SELECT coder, unit_id, codes, note, detail, made_by, event_id FROM coding_event WHERE session_id = ?
            {LATEST_CODE}
        ) WHERE len(codes) > 0 ORDER BY event_id
        """,
        [session.session_id],
    ).fetchall()
    for coder, unit, codes, note, detail, made_by in rows:
        sub = Submission(unit, tuple(codes), note, json.loads(detail) if detail else None)
        write_labels(cur, session, book, coder, made_by, label_writes(session, book, coder, sub))
    return len(rows)
