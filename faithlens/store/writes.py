"""The one write path. Core functions open `write()`; it owns the transaction and records the write
in `write_log` inside it, so `data_version` (the newest write id) changes exactly when committed data
does, and every cache keyed on it sees every writer's changes. Pages never open transactions or clear
caches themselves."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

_WRITING = threading.RLock()
"""Writes of one process go one at a time: DuckDB would otherwise refuse a second transaction that
touches a row another has changed (a run's threads upserting the same label source)."""


@contextmanager
def write(conn: duckdb.DuckDBPyConnection, what: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """One all-or-nothing write on a fresh cursor: commit on success, roll back on any error.

    `what` says what the write was ("ingest", "import storysumm", "alignment tofueval"); it is kept
    in `write_log` beside the id that bumps the data version.
    """
    with _WRITING, conn.cursor() as cur:
        cur.begin()
        try:
            yield cur
            cur.execute("INSERT INTO write_log (what) VALUES (?)", [what])
        except BaseException:
            cur.rollback()
            raise
        cur.commit()


def data_version(conn: duckdb.DuckDBPyConnection) -> str:
    """A cheap stamp that changes with every committed write: the cache key for readers."""
    return str(conn.execute("SELECT coalesce(max(write_id), 0) FROM write_log").fetchone()[0])
