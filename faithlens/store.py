"""The DuckDB file: opening it, its schema, transactions and cheap version stamps.

DuckDB allows one read-write process per file; inside a process, every unit of work takes
its own cursor from the root connection (`with root.cursor() as cur:`), never sharing one
across threads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import duckdb

from faithlens.errors import DatabaseLockedError, FaithLensError

SCHEMA_VERSION = "1"


def connect(path: Path | str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the database at `path` with the schema in place."""
    path = Path(path)
    if read_only and not path.exists():
        raise FaithLensError(f"{path}: no database here", "run `python -m faithlens ingest` or `make run` to build it")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        raise _lock_error(path, exc) from None
    if not read_only:
        ensure_schema(conn)
    return conn


def _lock_error(path: Path, exc: Exception) -> FaithLensError:
    text = str(exc)
    if "lock" not in text.lower():
        return FaithLensError(f"{path}: cannot open the database: {text.splitlines()[0]}")
    pid = re.search(r"PID (\d+)", text)
    holder = f"process {pid.group(1)}" if pid else "another process"
    return DatabaseLockedError(
        f"{path}: the database is in use by {holder}",
        "stop that process (for example the running app) and try again, or pass another --db",
    )


def ensure_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Create every table and view if missing (idempotent) and stamp the schema version."""
    conn.execute(resources.files("faithlens").joinpath("schema.sql").read_text(encoding="utf-8"))
    found = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if found is None:
        conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
    elif found[0] != SCHEMA_VERSION:
        raise FaithLensError(
            f"database schema version {found[0]} differs from this code's {SCHEMA_VERSION}",
            "delete the database file and run `python -m faithlens ingest` to rebuild it",
        )


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """One all-or-nothing unit of work on a fresh cursor: commit on success, roll back on any error."""
    with conn.cursor() as cur:
        cur.begin()
        try:
            yield cur
        except BaseException:
            cur.rollback()
            raise
        cur.commit()


def get_meta(conn: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def set_meta(conn: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])


def data_version(conn: duckdb.DuckDBPyConnection) -> str:
    """A cheap stamp that changes whenever labels, datasets or ingest change: a cache key for readers."""
    row = conn.execute(
        "SELECT (SELECT coalesce(max(event_id), 0) FROM label), (SELECT count(*) FROM dataset),"
        " (SELECT coalesce(max(loaded_at)::VARCHAR, '') FROM dataset)"
    ).fetchone()
    return ":".join(str(part) for part in row)
