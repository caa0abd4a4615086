"""Opening the database file with its schema in place."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import duckdb

from faithlens.errors import DatabaseLockedError, FaithLensError
from faithlens.store.sql import LATEST_LABEL

SCHEMA_VERSION = "1"
CURRENT_LABEL_VIEW = f"CREATE OR REPLACE VIEW current_label AS SELECT * FROM label {LATEST_LABEL}"


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
    conn.execute(resources.files("faithlens.store").joinpath("schema.sql").read_text(encoding="utf-8"))
    conn.execute(CURRENT_LABEL_VIEW)
    found = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if found is None:
        conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
    elif found[0] != SCHEMA_VERSION:
        raise FaithLensError(
            f"database schema version {found[0]} differs from this code's {SCHEMA_VERSION}",
            "delete the database file and run `python -m faithlens ingest` to rebuild it",
        )


def get_meta(conn: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def set_meta(conn: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])
