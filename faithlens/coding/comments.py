"""The discussion of a session's units: coders explain their codes and the adjudicator asks and
answers, one thread per unit (the adjudication view shows the disputed units' threads).

Comments are events like codes: appended, never changed, each in its own write (`store.write_retrying`),
so with a team store they replicate to every server like a code, and they leave with the session's
export (`faithlens.coding.exchange`, `what="comments"`). Who wrote a comment is one field, `author`: the
acting person (`Actor`), who must code in the session (as a coder) or adjudicate it (as the adjudicator),
checked by `faithlens.access.require` before anything is written.

Blind stays blind: where a reader may not see other coders' codes (a blind session still open, to anyone
but adjudicators and admins), they read only their own comments, not the other coders' nor the
adjudicator's, which would tell them how others coded."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import duckdb

from faithlens import access, store
from faithlens.coding.checks import CodingError
from faithlens.coding.sessions import Session, check_coder, is_member

ROLES = ("coder", "adjudicator")
MAX_CHARS = 4000
EXPORT_COLUMNS = ("session", "dataset", "unit_id", "comment_id", "author", "role", "text", "created_at")


@dataclass(frozen=True)
class Comment:
    comment_id: int
    unit_id: str
    author: str
    role: str
    text: str
    created_at: datetime


def add(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session, unit: str, text: str, role: str) -> int:
    """Append the actor's comment on `unit`, written as a coder of the session or as its adjudicator;
    returns its id. Committed when it returns, so the page shows it only once it is stored."""
    if role not in ROLES:
        raise ValueError(f"role {role!r}: expected one of {ROLES}")
    author = check_coder(actor.id)
    if role == "coder":
        with conn.cursor() as cur:
            member = is_member(cur, session, author)
        access.require(actor, "code", member=member, closed=session.closed)
    else:
        access.require(actor, "adjudicate", closed=session.closed)
    where = f"{session.name} / {unit}"
    if unit not in session.unit_set:
        raise CodingError(f"unit {unit!r} is not in session {session.name!r}", "comment on one of the session's units")
    body = (text or "").strip()
    if not body:
        raise CodingError(f"{where}: the comment is empty", "write what you want to say, then post it")
    if len(body) > MAX_CHARS:
        raise CodingError(f"{where}: the comment has {len(body):,} characters", f"keep it to {MAX_CHARS:,}")

    def write(cur: duckdb.DuckDBPyConnection) -> int:
        comment_id = store.next_id(cur, "coding_comment_seq")
        cur.execute(
            "INSERT INTO coding_comment (comment_id, session_id, unit_id, author, role, text, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [comment_id, session.session_id, unit, author, role, body, store.stamp()],
        )
        return comment_id

    return store.write_retrying(conn, f"coding comment {session.name} {role}:{author}", write)


def _visible(session: Session, reader: access.Actor) -> tuple[str, list[object]]:
    """The condition on `coding_comment` of what `reader` may read: everything when they may see the other
    coders' codes (`read_blind_others`), else their own comments as a coder."""
    if access.allowed(reader, "read_blind_others", blind=session.blind, closed=session.closed):
        return "session_id = ?", [session.session_id]
    return "session_id = ? AND role = 'coder' AND author = ?", [session.session_id, reader.id]


def thread(conn: duckdb.DuckDBPyConnection, session: Session, unit: str, reader: access.Actor) -> list[Comment]:
    """The comments on `unit` that `reader` may read, oldest first."""
    where, params = _visible(session, reader)
    with conn.cursor() as cur:
        return store.fetch_all(
            cur,
            Comment,
            "SELECT comment_id, unit_id, author, role, text, created_at FROM coding_comment "
            f"WHERE {where} AND unit_id = ? ORDER BY comment_id",
            [*params, unit],
        )


def threads(
    conn: duckdb.DuckDBPyConnection, session: Session, units: tuple[str, ...], reader: access.Actor
) -> dict[str, list[Comment]]:
    """`thread` of several units in one read: unit -> its comments `reader` may read (units without any
    left out)."""
    where, params = _visible(session, reader)
    with conn.cursor() as cur:
        found = store.fetch_all(
            cur,
            Comment,
            "SELECT comment_id, unit_id, author, role, text, created_at FROM coding_comment "
            f"WHERE {where} AND list_contains(?, unit_id) ORDER BY comment_id",
            [*params, list(units)],
        )
    out: dict[str, list[Comment]] = {}
    for comment in found:
        out.setdefault(comment.unit_id, []).append(comment)
    return out


def export_rows(conn: duckdb.DuckDBPyConnection, session: Session) -> list[dict]:
    """Every comment of the session as `EXPORT_COLUMNS` rows: the units in reading order, each thread
    oldest first (an export is the adjudication view: all comments)."""
    with conn.cursor() as cur:
        found = store.fetch_all(
            cur,
            Comment,
            "SELECT comment_id, unit_id, author, role, text, created_at FROM coding_comment WHERE session_id = ? "
            "ORDER BY comment_id",
            [session.session_id],
        )
    order = {unit: position for position, unit in enumerate(session.units)}
    found.sort(key=lambda c: (order.get(c.unit_id, len(order)), c.comment_id))
    return [
        {
            "session": session.name,
            "dataset": session.dataset,
            "unit_id": c.unit_id,
            "comment_id": c.comment_id,
            "author": c.author,
            "role": c.role,
            "text": c.text,
            "created_at": c.created_at.isoformat(),
        }
        for c in found
    ]
