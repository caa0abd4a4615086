"""Saving a coder's code: checked against the session, its codebook and its mode, then appended as a
`coding_event` together with the coder's label events (or tags) in one transaction, so a code is
durable when the page says "Saved" and the read side (Explore, Compare) sees the coder as a source;
in a blind session, only once an admin closes it (`faithlens.coding.closing`).

The current code of a (coder, unit) is its latest event; an undo appends the code it returns to.

Every write takes the acting person (`Actor`) and passes `faithlens.access.require` before anything is
written: a code is always the actor's own (the coder recorded is `actor.id`, never a name a page
passes), undo takes back the actor's own codes only, and recording other people's codes at once (an
import) is an admin's."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import duckdb

from faithlens import access, store
from faithlens.coding import library, modes
from faithlens.coding.checks import CodingError, check_codes, refuse_closed, refuse_closed_since, require_note
from faithlens.coding.codebook import Codebook
from faithlens.coding.labels import LabelWrite, label_writes, write_labels
from faithlens.coding.sessions import ADJUDICATED, Session, check_coder, is_member

ACTIONS = ("code", "undo", "import", "adjudicate")
LATEST_CODE = "QUALIFY row_number() OVER (PARTITION BY coder, unit_id ORDER BY event_id DESC) = 1"
"""The current-code rule: the latest event of each (coder, unit) of a session; every reader applies it."""


@dataclass(frozen=True)
class Submission:
    """What a coder submits for one unit: the codes (keys of the codebook), a note (the explanation),
    and what the mode asks beyond codes (`detail`, see `faithlens.coding.modes`)."""

    unit: str
    codes: tuple[str, ...] = ()
    note: str | None = None
    detail: dict | None = None


@dataclass(frozen=True)
class Current:
    """A coder's current code on a unit (the latest event)."""

    coder: str
    unit_id: str
    codes: tuple[str, ...]
    note: str | None
    detail: dict | None
    event_id: int
    made_by: str
    codebook_version: str
    action: str = "code"


def check(
    cur: duckdb.DuckDBPyConnection, session: Session, book: Codebook, sub: Submission, settled: bool = False
) -> Submission:
    """The submission as it will be stored (codes in codebook order, the mode's detail completed), or a
    CodingError saying what is wrong. An adjudicator's decision (`settled`) is the unit's code alone."""
    if sub.unit not in session.unit_set:
        raise CodingError(f"unit {sub.unit!r} is not in session {session.name!r}", "code one of the session's units")
    where = f"{session.name} / {sub.unit}"
    note = (sub.note or "").strip() or None
    if settled:
        codes = _check_offered(session, book, check_codes(book, tuple(sub.codes), where), where)
        require_note(book, codes, note, where)
        return Submission(sub.unit, codes, note, None)
    if session.mode == "line-by-line":
        return _line_by_line(cur, session, book, sub, note)
    if session.mode == "hybrid":
        return _hybrid(cur, session, book, sub, note)
    codes = check_codes(book, tuple(sub.codes), where)
    require_note(book, codes, note, where)
    if session.mode == "arm-faithfulness":
        shown = modes.context(cur, session, sub.unit)
        text = shown.original if shown.shown == modes.ORIGINAL else shown.rewrite
        return Submission(sub.unit, codes, note, {"shown": shown.shown, "text": text})
    if session.mode == "arm-preference":
        return _preference(cur, session, sub, codes, note)
    return Submission(sub.unit, codes, note, None)


def _check_offered(session: Session, book: Codebook, codes: tuple[str, ...], where: str) -> tuple[str, ...]:
    """Refuse a code the mode does not offer for the unit (N/A for a whole summary in hybrid)."""
    refused = [key for key in codes if key not in modes.offered_codes(session.mode, book)]
    if refused:
        raise CodingError(
            f"{where}: {book.code(refused[0]).name} is an answer for a line, not for a whole summary",
            "label the summary consistent or inconsistent",
        )
    return codes


def _line_by_line(cur, session: Session, book: Codebook, sub: Submission, note: str | None) -> Submission:
    """Every sentence coded (an unfaithful one explained); messages name a sentence as the form does, S1 to Sn."""
    sentences = [uid for uid, _ in modes.context(cur, session, sub.unit).sentences]
    named = {uid: f"S{number}" for number, uid in enumerate(sentences, start=1)}
    given = (sub.detail or {}).get("sentences") or {}
    missing = [named[uid] for uid in sentences if uid not in given]
    if missing or set(given) - set(sentences):
        raise CodingError(
            f"{session.name} / {sub.unit}: {', '.join(missing) or 'sentences outside this summary'} not coded as asked",
            "code every sentence of the summary, and only those",
        )
    coded = {}
    for uid in sentences:
        codes = check_codes(book, (given[uid].get("code"),), named[uid])
        sentence_note = (given[uid].get("note") or "").strip() or None
        if book.code(codes[0]).explanation == "required" and not sentence_note:
            raise CodingError(f"{named[uid]} needs an explanation ({book.code(codes[0]).name})", "say why under it")
        coded[uid] = {"code": codes[0], "note": sentence_note}
    verdicts = {book.code(part["code"]).verdict for part in coded.values()}
    follows = "unfaithful" if "unfaithful" in verdicts else "faithful"
    summary_code = next((code.key for code in book.codes if code.verdict == follows), None)
    if summary_code is None:
        raise CodingError(f"{book.name} has no {follows} code", "use a codebook with faithful and unfaithful codes")
    return Submission(sub.unit, (summary_code,), note, {"sentences": coded})


def _hybrid(cur, session: Session, book: Codebook, sub: Submission, note: str | None) -> Submission:
    where = f"{session.name} / {sub.unit}"
    suggested = modes.context(cur, session, sub.unit).suggestions
    answers = (sub.detail or {}).get("suggestions") or []
    if len(answers) != len(suggested):
        raise CodingError(f"{where}: {len(answers)} of {len(suggested)} suggestions answered", "answer each one")
    judged = []
    for number, (text, answer) in enumerate(zip(suggested, answers, strict=True), start=1):
        why = (answer.get("why") or "").strip()
        if not isinstance(answer.get("agree"), bool) or not why:
            raise CodingError(f"{where}: suggestion {number} needs agree or disagree and why", "answer it, then save")
        judged.append({"text": text, "agree": answer["agree"], "why": why})
    codes = _check_offered(session, book, check_codes(book, tuple(sub.codes), where), where)
    require_note(book, codes, note, where)
    return Submission(sub.unit, codes, note, {"suggestions": judged})


def _preference(cur, session: Session, sub: Submission, codes: tuple[str, ...], note: str | None) -> Submission:
    where = f"{session.name} / {sub.unit}"
    shown = modes.context(cur, session, sub.unit)
    marks = (sub.detail or {}).get("points")
    if codes[0] == modes.REWRITE and shown.points:
        if not isinstance(marks, list) or len(marks) != len(shown.points) or set(marks) - set(modes.POINT_MARKS):
            raise CodingError(
                f"{where}: mark each of the {len(shown.points)} explanation points", "IMPORTANT, NEUTRAL or WRONG"
            )
    else:
        marks = None
    return Submission(sub.unit, codes, note, {"order": list(shown.order), "points": marks})


def save(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session, sub: Submission) -> int:
    """Check and store the actor's own code on one unit (event + label events/tags, one transaction):
    they must code, have joined the session, and it must be open. Returns the event id."""
    coder = check_coder(actor.id)
    with conn.cursor() as cur:
        member = is_member(cur, session, coder)
    access.require(actor, "code", member=member, closed=session.closed)
    return store_code(conn, session, coder, sub, coder, "code")


def store_code(
    conn: duckdb.DuckDBPyConnection, session: Session, coder: str, sub: Submission, made_by: str, action: str
) -> int:
    """Check and store one code once the caller has passed `access.require` (`save`, `report.adjudicate`)."""
    with conn.cursor() as cur:
        book = library.get(cur, session.codebook, session.codebook_version)
        checked = check(cur, session, book, sub, settled=coder == ADJUDICATED)
    writes = label_writes(session, book, coder, checked)
    return _append(conn, session, book, coder, checked, made_by, action, writes)


def save_many(
    conn: duckdb.DuckDBPyConnection,
    actor: access.Actor,
    session: Session,
    codes: list[tuple[str, Submission]],
    action: str = "import",
) -> list[int]:
    """Record other people's codes (an import: admins only, into an open session), each event made by
    the actor. Every (coder, submission) is checked first, then all are stored in one transaction: the
    first fault is raised and nothing is written."""
    access.require(actor, "manage_sessions")
    refuse_closed(session)
    with conn.cursor() as cur:
        book = library.get(cur, session.codebook, session.codebook_version)
        checked = check_all(cur, session, book, codes)
    return store.write_retrying(
        conn,
        f"coding {action} {session.name} ({len(checked)} codes)",
        lambda cur: insert_all(cur, session, book, checked, actor.id, action),
    )


def check_all(
    cur: duckdb.DuckDBPyConnection, session: Session, book: Codebook, codes: list[tuple[str, Submission]]
) -> list[tuple[str, Submission]]:
    """Every (coder, submission) as it will be stored; the first fault is raised."""
    return [(check_coder(coder), check(cur, session, book, sub)) for coder, sub in codes]


def insert_all(
    cur: duckdb.DuckDBPyConnection,
    session: Session,
    book: Codebook,
    checked: list[tuple[str, Submission]],
    made_by: str,
    action: str,
) -> list[int]:
    """Append checked codes with their label writes inside the caller's transaction."""
    return [
        _insert(cur, session, book, coder, sub, made_by, action, label_writes(session, book, coder, sub))
        for coder, sub in checked
    ]


def _insert(
    cur: duckdb.DuckDBPyConnection,
    session: Session,
    book: Codebook,
    coder: str,
    sub: Submission,
    made_by: str,
    action: str,
    writes: list[LabelWrite],
) -> int:
    refuse_closed_since(cur, session)
    event_id = store.next_id(cur, "coding_event_seq")
    cur.execute(
        """
        INSERT INTO coding_event (event_id, session_id, coder, unit_id, action, codes, note, detail, codebook_version,
                                  made_by, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [
            event_id,
            session.session_id,
            coder,
            sub.unit,
            action,
            list(sub.codes),
            sub.note,
            json.dumps(sub.detail) if sub.detail is not None else None,
            book.version,
            made_by,
            store.stamp(),
        ],
    )
    if not session.blind:
        write_labels(cur, session, book, coder, made_by, writes)
    return event_id


def _append(
    conn,
    session: Session,
    book: Codebook,
    coder: str,
    sub: Submission,
    made_by: str,
    action: str,
    writes: list[LabelWrite],
) -> int:
    return store.write_retrying(
        conn,
        f"coding {action} {session.name} {coder}",
        lambda cur: _insert(cur, session, book, coder, sub, made_by, action, writes),
    )


def undo(
    conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session, unit: str, coder: str | None = None
) -> Current | None:
    """Return the actor's code on `unit` to what it was before their latest event (uncoded when there
    was none), by appending that code as a new event. Returns the code now current. Naming another
    `coder` is refused: undo takes back your own codes only."""
    coder = actor.id if coder is None else coder
    access.require(actor, "undo_own", owner=coder, closed=session.closed)
    with conn.cursor() as cur:
        book = library.get(cur, session.codebook, session.codebook_version)
    history = _history(conn, session, coder, unit)
    if not history or not history[0].codes:
        return None
    before = _restored(history)
    if before is not None:
        sub = Submission(unit, before.codes, before.note, before.detail)
        writes = label_writes(session, book, coder, sub)
    else:
        # Uncoded again: every label the latest code wrote (sentences, the rewrite's source) is cleared.
        latest = history[0]
        sub = Submission(unit)
        writes = [
            dataclasses.replace(write, codes=(), note=None)
            for write in label_writes(session, book, coder, Submission(unit, latest.codes, None, latest.detail))
        ]
    _append(conn, session, book, coder, sub, coder, "undo", writes)
    return current(conn, session, coder).get(unit)


def _decoded(rows: list[Current]) -> list[Current]:
    """Events as read (`detail` JSON text) with `detail` decoded."""
    return [dataclasses.replace(r, detail=json.loads(r.detail) if r.detail else None) for r in rows]


def _restored(history: list[Current]) -> Current | None:
    """The code an undo returns to. Replaying the events oldest first, a code pushes and an undo pops;
    undoing pops once more and returns to the code then on top (None: uncoded). So undo twice goes
    back two codes, never forth."""
    stack: list[Current] = []
    for event in reversed(history):
        if event.action == "undo":
            stack = stack[:-1]
        else:
            stack.append(event)
    return stack[-2] if len(stack) > 1 else None


_CURRENT = "coder, unit_id, codes, note, CAST(detail AS VARCHAR) AS detail, event_id, made_by, codebook_version, action"


def current(conn: duckdb.DuckDBPyConnection, session: Session, coder: str | None = None) -> dict:
    """The current codes of a session: {unit: Current} for one coder, or {(coder, unit): Current} for all.
    A unit an undo returned to uncoded is absent."""
    with conn.cursor() as cur:
        found = cur.execute(
            f"""
            SELECT * FROM (
                SELECT {_CURRENT} FROM coding_event WHERE session_id = ? AND (? IS NULL OR coder = ?)
                {LATEST_CODE}
            ) WHERE len(codes) > 0
            """,
            [session.session_id, coder, coder],
        ).fetchall()
    # Built positionally (the columns are _CURRENT's, in Current's order): a 10k-code session reads in a
    # few ms, where mapping each row by name took tens.
    rows = [
        Current(who, unit, tuple(codes), note, json.loads(detail) if detail else None, *rest)
        for who, unit, codes, note, detail, *rest in found
    ]
    if coder is not None:
        return {r.unit_id: r for r in rows}
    return {(r.coder, r.unit_id): r for r in rows}


def coded_units(conn: duckdb.DuckDBPyConnection, session: Session, coder: str) -> frozenset[str]:
    """The units a coder has a current code on (progress and where to resume), without the codes."""
    with conn.cursor() as cur:
        rows = cur.execute(
            f"""
            SELECT unit_id FROM (
                SELECT coder, unit_id, codes, event_id FROM coding_event WHERE session_id = ? AND coder = ?
                {LATEST_CODE}
            ) WHERE len(codes) > 0
            """,
            [session.session_id, coder],
        ).fetchall()
    return frozenset(row[0] for row in rows)


def latest(conn: duckdb.DuckDBPyConnection, session: Session, coder: str, unit: str) -> Current | None:
    """A coder's current code on one unit (None when uncoded): what a page says after a save."""
    found = _history(conn, session, coder, unit, newest_only=True)
    return found[0] if found and found[0].codes else None


def _history(
    conn: duckdb.DuckDBPyConnection, session: Session, coder: str, unit: str, newest_only: bool = False
) -> list[Current]:
    """A coder's events on one unit, newest first, `detail` decoded."""
    with conn.cursor() as cur:
        rows = store.fetch_all(
            cur,
            Current,
            f"SELECT {_CURRENT} FROM coding_event WHERE session_id = ? AND coder = ? AND unit_id = ? "
            f"ORDER BY event_id DESC{' LIMIT 1' if newest_only else ''}",
            [session.session_id, coder, unit],
        )
    return _decoded(rows)


def current_codes(conn: duckdb.DuckDBPyConnection, session: Session) -> dict[str, dict[str, str]]:
    """unit -> coder -> current code (several joined by '|'), coders only: what agreement reads, without
    the notes and details `current` carries (a 10k-unit, 5-coder session reads in a few ms this way)."""
    with conn.cursor() as cur:
        rows = cur.execute(
            f"""
            SELECT unit_id, coder, array_to_string(codes, '|') FROM coding_event WHERE session_id = ? AND coder <> ?
            {LATEST_CODE}
            """,
            [session.session_id, ADJUDICATED],
        ).fetchall()
    table: dict[str, dict[str, str]] = {}
    for unit, coder, codes in rows:
        if codes:
            table.setdefault(unit, {})[coder] = codes
    return table
