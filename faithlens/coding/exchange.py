"""Codes in and out of a session: every current code exported with its provenance (CSV, JSON Lines or
Parquet) for analysis elsewhere, the session's discussion (its comments) likewise, and codes made elsewhere (a spreadsheet, another annotation tool)
imported from a CSV of `unit_id, coder, code[, note]`.

An import is checked in full before anything is written, row by row against the dataset, the session
and its codebook, so a bad file names its first faulty line and leaves the database as it was. The
codes are then written in one transaction (`events.save_many`)."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from faithlens import access, store
from faithlens.coding import comments, events, library, sessions
from faithlens.coding.checks import refuse_closed
from faithlens.coding.codebook import Codebook
from faithlens.coding.events import CodingError, Submission
from faithlens.coding.sessions import ADJUDICATED, Session, SessionSpec
from faithlens.datasets.readers import read_csv
from faithlens.errors import FaithLensError, InputError, NotFoundError
from faithlens.llm.runs.spec import Selection, select_units
from faithlens.store.claim_sets import claim_set_sql
from faithlens.vocab import LEVELS

FORMATS = ("csv", "jsonl", "parquet")
EXPORTS = ("codes", "comments")
COLUMNS = (
    "session",
    "dataset",
    "level",
    "mode",
    "codebook",
    "codebook_version",
    "unit_id",
    "coder",
    "codes",
    "verdict",
    "note",
    "detail",
    "made_by",
    "action",
    "event_id",
    "first_coded_at",
    "coded_at",
)
IMPORT_REQUIRED = ("unit_id", "coder", "code")
IMPORT_OPTIONAL = ("note",)
SEPARATOR = "|"
"""Between the codes of one unit: in a multi-choice import's `code` column and in a CSV export."""
_SENTENCE_ID = re.compile(r"#s\d+$")
_CLAIM_ID = re.compile(r"#(?:c|x[^#]*c)\d+$")
"""A dataset's own claim (`<summary>#c3`) or one of an extracted claim set (`<summary>#x1a2b3c4d.0c3`)."""


# ----------------------------------------------------------------------------------------------- export


def export(
    conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session, fmt: str, out: Path, what: str = "codes"
) -> int:
    """Write the session's current codes (or its discussion, `what="comments"`) to `out` as `fmt` (csv,
    jsonl or parquet); returns the rows written. Codes: one row per coder and unit (the adjudicated label
    as coder `adjudicated`), in the session's reading order, then by coder with the adjudicated label
    last. Comments: one row per comment (`comments.EXPORT_COLUMNS`), every coder's and the adjudicator's.
    Either holds every coder's work, so in a blind session still open only adjudicators and admins export."""
    access.require(actor, "read_blind_others", blind=session.blind, closed=session.closed)
    if fmt not in FORMATS:
        raise FaithLensError(f"unknown export format {fmt!r}", f"use one of {', '.join(FORMATS)}")
    if what not in EXPORTS:
        raise FaithLensError(f"unknown export {what!r}", f"use one of {', '.join(EXPORTS)}")
    if not out.parent.is_dir():
        raise FaithLensError(f"{out}: the folder {out.parent} does not exist", "create it first, or write elsewhere")
    rows = export_rows(conn, session) if what == "codes" else comments.export_rows(conn, session)
    columns = COLUMNS if what == "codes" else comments.EXPORT_COLUMNS
    {"csv": _write_csv, "jsonl": _write_jsonl, "parquet": _write_parquet}[fmt](rows, out, columns)
    return len(rows)


def export_rows(conn: duckdb.DuckDBPyConnection, session: Session) -> list[dict]:
    """The rows `export` writes, as dicts of `COLUMNS` (codes a list, absent values None)."""
    current = events.current(conn, session)
    with conn.cursor() as cur:
        times = {
            (coder, unit): (first, last)
            for coder, unit, first, last in cur.execute(
                "SELECT coder, unit_id, min(created_at), max(created_at) FROM coding_event "
                "WHERE session_id = ? GROUP BY coder, unit_id",
                [session.session_id],
            ).fetchall()
        }
        books = {v: library.get(cur, session.codebook, v) for v in {code.codebook_version for code in current.values()}}
    order = {unit: position for position, unit in enumerate(session.units)}
    keys = sorted(current, key=lambda key: (order.get(key[1], len(order)), key[0] == ADJUDICATED, key[0]))
    return [_row(session, current[key], books[current[key].codebook_version], times[key]) for key in keys]


def _row(session: Session, code: events.Current, book: Codebook, times: tuple) -> dict:
    return {
        "session": session.name,
        "dataset": session.dataset,
        "level": session.level,
        "mode": session.mode,
        "codebook": session.codebook,
        "codebook_version": code.codebook_version,
        "unit_id": code.unit_id,
        "coder": code.coder,
        "codes": list(code.codes),
        "verdict": book.code(code.codes[0]).verdict if book.verdicts else None,
        "note": code.note,
        "detail": json.dumps(code.detail, ensure_ascii=False) if code.detail is not None else None,
        "made_by": code.made_by,
        "action": code.action,
        "event_id": code.event_id,
        "first_coded_at": times[0].isoformat(),
        "coded_at": times[1].isoformat(),
    }


def _write_csv(rows: list[dict], out: Path, columns: tuple[str, ...]) -> None:
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "codes": SEPARATOR.join(row["codes"])} if "codes" in row else row)


def _write_jsonl(rows: list[dict], out: Path, columns: tuple[str, ...]) -> None:
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({column: row[column] for column in columns}, ensure_ascii=False) + "\n")


def _write_parquet(rows: list[dict], out: Path, columns: tuple[str, ...]) -> None:
    """Through an in-memory DuckDB (no pyarrow): the columns go in as typed lists, unnested side by side."""
    types = {"codes": "VARCHAR[][]", "event_id": "BIGINT[]", "comment_id": "BIGINT[]"}
    select = ", ".join(f"unnest(?::{types.get(column, 'VARCHAR[]')}) AS {column}" for column in columns)
    with duckdb.connect() as memory:
        memory.execute(f"CREATE TABLE codes AS SELECT {select}", [[row[c] for row in rows] for c in columns])
        quoted = str(out).replace("'", "''")
        memory.execute(f"COPY codes TO '{quoted}' (FORMAT parquet)")


# ----------------------------------------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportResult:
    session: Session
    rows: int
    coders: tuple[str, ...]
    created: bool
    """True when the import made the session, False when it added codes to an existing one."""


@dataclass(frozen=True)
class _Line:
    """One CSV row, its coder checked, its codes still as written."""

    line: int
    unit: str
    coder: str
    code: str
    note: str | None


def import_codes(
    conn: duckdb.DuckDBPyConnection,
    actor: access.Actor,
    path: Path,
    dataset: str,
    session_name: str,
    codebook: str,
    level: str | None = None,
) -> ImportResult:
    """Add a CSV's codes to the session `session_name`, making it if there is none (see `_new_session`
    for its units). Every fault is one InputError naming the line; nothing is written until all rows pass.
    The codes are the CSV's coders' (its `coder` column), recorded as made by the actor: recording other
    people's codes and making sessions is an admin's (the CLI is one)."""
    access.require(actor, "manage_sessions")
    name = str(path)
    lines = _lines(name, read_csv(path, required=IMPORT_REQUIRED, optional=IMPORT_OPTIONAL))
    with conn.cursor() as cur:
        existing = next((s for s in sessions.listed(cur) if s.name == session_name), None)
        if existing is not None:
            _same_session(name, existing, dataset, codebook, level)
            refuse_closed(existing)
            session, where = existing, f"in session {existing.name!r}"
        else:
            spec = _spec(cur, path, lines, dataset, session_name, codebook, level)
            session, where = _drafted(cur, name, spec, lines)
        book = library.get(cur, session.codebook, session.codebook_version)
        codes = [(line.coder, _checked(cur, name, session, book, line, where)) for line in lines]

    def body(cur: duckdb.DuckDBPyConnection) -> Session:
        stored = sessions.insert(cur, session, actor.id) if existing is None else session
        events.insert_all(cur, stored, book, codes, actor.id, "import")
        return stored

    session = store.write_retrying(conn, f"coding import {path.name} into {session_name}", body)
    coders = tuple(dict.fromkeys(line.coder for line in lines))
    return ImportResult(session, len(codes), coders, existing is None)


def _drafted(cur: duckdb.DuckDBPyConnection, name: str, spec: SessionSpec, lines: list[_Line]) -> tuple[Session, str]:
    """The new session, made of exactly the file's units; a unit the dataset lacks names its line."""
    claims = spec.selection.claim_set
    where = f"a {spec.level} of dataset {spec.dataset!r}" + (f" among the claims {claims} extracted" if claims else "")
    selectable = set(select_units(cur, spec.dataset, spec.level, spec.selection)[0])
    outside = next((line for line in lines if line.unit not in selectable), None)
    if outside is not None:
        raise InputError(
            name, f"line {outside.line}", f"unit {outside.unit!r} is not {where}; expected one of its units"
        )
    return sessions.draft(cur, spec), where


def _lines(name: str, rows: list[tuple[int, dict[str, str]]]) -> list[_Line]:
    """The rows with a unit, a usable coder and a code each, no (unit, coder) twice."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for number, row in rows:
        where = f"line {number}"
        unit, coder, code = (row[column].strip() for column in IMPORT_REQUIRED)
        for column, value in (("unit_id", unit), ("coder", coder), ("code", code)):
            if not value:
                raise InputError(name, where, f"column {column} is empty; expected a {column.replace('_', ' ')}")
        try:
            coder = sessions.check_coder(coder)
        except FaithLensError as exc:
            raise InputError(name, where, str(exc)) from None
        if (unit, coder) in seen:
            raise InputError(
                name, where, f"{coder!r} codes unit {unit!r} again (first at line {seen[unit, coder]}); expected once"
            )
        seen[unit, coder] = number
        out.append(_Line(number, unit, coder, code, (row.get("note") or "").strip() or None))
    return out


def _same_session(name: str, session: Session, dataset: str, codebook: str, level: str | None) -> None:
    """An import adds to an existing session only what it was made for."""
    held = {"dataset": session.dataset, "level": session.level, "codebook": session.codebook}
    asked = {"dataset": dataset, "level": level or session.level, "codebook": codebook}
    differ = [f"{key} {held[key]!r}, not {asked[key]!r}" for key in held if held[key] != asked[key]]
    if differ:
        raise InputError(
            name,
            "",
            f"session {session.name!r} exists with {'; '.join(differ)}; "
            "expected the session's dataset, level and codebook, or a new session name",
        )


def unit_level(unit: str) -> str:
    """The level a unit id speaks to, from its shape: `#s<n>` a sentence, `#c<n>` or `#x...c<n>` a claim,
    anything else a summary id."""
    if _SENTENCE_ID.search(unit):
        return "sentence"
    return "claim" if _CLAIM_ID.search(unit) else "summary"


def _spec(
    cur: duckdb.DuckDBPyConnection,
    path: Path,
    lines: list[_Line],
    dataset: str,
    session_name: str,
    codebook: str,
    level: str | None,
) -> SessionSpec:
    """The session an import makes: the file's units in reading order, codes mode, unblinded, the
    file's coders invited."""
    name = str(path)
    if cur.execute("SELECT count(*) FROM dataset WHERE name = ?", [dataset]).fetchone()[0] == 0:
        names = [row[0] for row in cur.execute("SELECT name FROM dataset ORDER BY name").fetchall()]
        raise NotFoundError(f"no dataset {dataset!r}", f"use one of {', '.join(names)}")
    if level is None:
        level = unit_level(lines[0].unit)
        other = next((line for line in lines if unit_level(line.unit) != level), None)
        if other is not None:
            raise InputError(
                name,
                f"line {other.line}",
                f"unit {other.unit!r} is a {unit_level(other.unit)} id but line {lines[0].line} holds a {level} id; "
                "expected units of one level",
            )
    elif level not in LEVELS:
        raise FaithLensError(f"unknown level {level!r}", f"use one of {', '.join(LEVELS)}")
    claim_set = _claim_set(cur, dataset, lines[0].unit) if level == "claim" else None
    return SessionSpec(
        name=session_name,
        dataset=dataset,
        level=level,
        codebook=codebook,
        mode="codes",
        selection=Selection(claim_set=claim_set),
        ordering="fixed",
        blind=False,
        coders=tuple(dict.fromkeys(line.coder for line in lines)),
        units=tuple(dict.fromkeys(line.unit for line in lines)),
        units_from=path.name,
    )


def _claim_set(cur: duckdb.DuckDBPyConnection, dataset: str, unit: str) -> str | None:
    """The claim set of the file's first claim (None: the dataset's own claims, or no such claim)."""
    row = cur.execute(
        f"SELECT {claim_set_sql()} FROM unit WHERE dataset = ? AND unit_id = ?",
        [dataset, unit],
    ).fetchone()
    return row[0] if row else None


def _checked(
    cur: duckdb.DuckDBPyConnection,
    name: str,
    session: Session,
    book: Codebook,
    line: _Line,
    where: str,
) -> Submission:
    """A row as the session takes it, or an InputError naming its line."""
    position = f"line {line.line}"
    if line.unit not in session.unit_set:
        raise InputError(name, position, f"unit {line.unit!r} is not {where}; expected one of its units")
    sub = Submission(
        line.unit, tuple(_key(name, position, book, part) for part in line.code.split(SEPARATOR)), line.note
    )
    try:
        return events.check(cur, session, book, sub)
    except CodingError as exc:
        raise InputError(name, position, str(exc)) from None


def _key(name: str, position: str, book: Codebook, written: str) -> str:
    """A codebook key as written, or one differing from it only by case."""
    written = written.strip()
    if written in book.keys:
        return written
    alike = [key for key in book.keys if key.casefold() == written.casefold()]
    if len(alike) == 1:
        return alike[0]
    several = f", several separated by {SEPARATOR!r}" if book.choice == "multi" else ""
    raise InputError(
        name, position, f"unknown code {written!r}; expected one of {', '.join(book.keys)} ({book.name}{several})"
    )
