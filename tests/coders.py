"""The people tests act as (faithlens.access): an admin who makes sessions, saves codebooks and imports,
and coders who join a session and code as themselves through the real core calls, so every fixture
passes the same permission checks a page or the CLI does."""

from __future__ import annotations

import duckdb

from faithlens.access import Actor, Person
from faithlens.coding import comments, events, sessions

ADMIN = Actor(Person("lead", "lead", None, "cli"), "admin")
"""The lab's admin: makes sessions and codebooks, imports codes (as the CLI does)."""


def person(name: str, role: str = "coder") -> Actor:
    """`name` acting in `role` (a coder unless said), signed in through a link."""
    return Actor(Person(name, name, None, "link"), role)


def joined(conn: duckdb.DuckDBPyConnection, session: sessions.Session, name: str, role: str = "coder") -> Actor:
    """`name` in `role`, having joined the session (as the Code page's Join does)."""
    actor = person(name, role)
    sessions.join(conn, actor, session)
    return actor


def code(
    conn: duckdb.DuckDBPyConnection, session: sessions.Session, coder: str, sub: events.Submission, role: str = "coder"
) -> int:
    """`coder` joins (a no-op when they have) and saves their own code, as the Code page does."""
    return events.save(conn, joined(conn, session, coder, role), session, sub)


def undo(conn: duckdb.DuckDBPyConnection, session: sessions.Session, coder: str, unit: str) -> events.Current | None:
    """`coder` takes back their own latest code on `unit`."""
    return events.undo(conn, person(coder), session, unit)


def comment(
    conn: duckdb.DuckDBPyConnection, session: sessions.Session, unit: str, text: str, author: str, role: str
) -> int:
    """`author`'s comment, as a coder who joined the session or as an adjudicator."""
    actor = joined(conn, session, author) if role == "coder" else person(author, "adjudicator")
    return comments.add(conn, actor, session, unit, text, role)


def reader(name: str | None) -> Actor:
    """Who reads a thread: a coder by name, or (None) the adjudication view's adjudicator."""
    return person("dee", "adjudicator") if name is None else person(name)
