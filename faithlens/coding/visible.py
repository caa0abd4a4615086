"""What the acting person may read of a session: the reads the Code and Sessions pages make, each taking
the `Actor` and passing `faithlens.access` first, so that blind stays blind whatever a URL asks.

- A coder's own codes are always theirs to read; another coder's codes (and the gold label, in
  `faithlens.views.coding_unit.gold_labels`) only where `read_blind_others` allows: a session that is
  not blind, or closed, or to adjudicators and admins.
- Agreement and the adjudication view (every coder's codes side by side) only where `read_agreement`
  allows: adjudicators and admins, everyone once an admin closes the session.
- Progress (how many units each coder has coded) tells nothing of how anyone coded: open to all.

A refusal is `access.PermissionDenied` with one line saying why; nothing is read.
"""

from __future__ import annotations

import duckdb

from faithlens import access
from faithlens.coding import events, report
from faithlens.coding.sessions import Session


def sees_others(actor: access.Actor, session: Session) -> bool:
    """Whether the actor may see the other coders' codes, gold and LLM labels of this session."""
    return access.allowed(actor, "read_blind_others", blind=session.blind, closed=session.closed)


def sees_agreement(actor: access.Actor, session: Session) -> bool:
    """Whether the actor may see the session's agreement and its adjudication view."""
    return access.allowed(actor, "read_agreement", closed=session.closed)


def _require_others(actor: access.Actor, session: Session, coder: str) -> None:
    if coder != actor.id:
        access.require(actor, "read_blind_others", blind=session.blind, closed=session.closed)


def coded_units(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session, coder: str) -> frozenset[str]:
    """The units `coder` has a current code on (their own, or another's where the actor may see it)."""
    _require_others(actor, session, coder)
    return events.coded_units(conn, session, coder)


def latest(
    conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session, coder: str, unit: str
) -> events.Current | None:
    """`coder`'s current code on one unit (their own, or another's where the actor may see it)."""
    _require_others(actor, session, coder)
    return events.latest(conn, session, coder, unit)


def everyone(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> dict:
    """Every coder's current codes, (coder, unit) -> Current, where the actor may see them."""
    access.require(actor, "read_blind_others", blind=session.blind, closed=session.closed)
    return events.current(conn, session)


def _require_agreement(actor: access.Actor, session: Session) -> None:
    access.require(actor, "read_agreement", closed=session.closed)


def agreement(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> report.SessionAgreement:
    _require_agreement(actor, session)
    return report.session_agreement(conn, session)


def by_unit(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> dict[str, dict[str, str]]:
    """unit -> coder -> code value (the confusion matrices' input)."""
    _require_agreement(actor, session)
    return events.current_codes(conn, session)


def sentence_codes(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> dict[str, dict[str, str]]:
    """Line-by-line: sentence -> coder -> code (the sentence-level confusion matrices' input)."""
    _require_agreement(actor, session)
    return report.sentence_codes(events.current(conn, session))


def disagreements(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> list[report.Disagreement]:
    """The adjudication view's units, every coder's code beside each."""
    _require_agreement(actor, session)
    return report.disagreements(conn, session)
