"""The one write path. Core functions open `write()`; it owns the transaction and records the write
in `write_log` inside it, so `data_version` (the newest write id, and how many) changes exactly when
committed data does, and every cache keyed on it sees every writer's changes. Pages never open transactions or clear
caches themselves."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TypeVar

import duckdb

from faithlens.errors import WritesPausedError
from faithlens.store import replica

T = TypeVar("T")
CONFLICT_ATTEMPTS = 5
PAUSED_WAIT_S = 0.5


@contextmanager
def write(
    conn: duckdb.DuckDBPyConnection, what: str, local: bool = False, patience_s: float = 0
) -> Iterator[duckdb.DuckDBPyConnection]:
    """One all-or-nothing write on a fresh cursor: commit on success, roll back on any error.

    `what` says what the write was ("ingest", "import storysumm", "alignment tofueval"); it is kept
    in `write_log` beside the id that bumps the data version. When `conn` is a replica of a team
    store, the write goes through the store first (`faithlens.store.replica`) unless it is `local`:
    building a server's copy of the bundled data from its own raw files. `patience_s` is how long an
    append may wait for a store that does not answer, beyond its retry window (see `write_retrying`).
    """
    shared = None if local else replica.of(conn)
    if shared is not None:
        with shared.write(what, patience_s) as recording:
            yield recording
        return
    with conn.cursor() as cur:
        cur.begin()
        try:
            yield cur
            cur.execute("INSERT INTO write_log (what) VALUES (?)", [what])
        except BaseException:
            cur.rollback()
            raise
        cur.commit()


def write_retrying(
    conn: duckdb.DuckDBPyConnection, what: str, body: Callable[[duckdb.DuckDBPyConnection], T], patience_s: float = 0
) -> T:
    """`write` for a body that may touch a row another thread's open transaction changes or adds (two
    answers creating the same label source): DuckDB refuses the later one ("Conflict on update", or a
    duplicate key against the other's uncommitted row), so the whole body runs again after a short
    random wait, as DuckDB's concurrency guide advises. A real duplicate fails every attempt.

    With a team store, a write that finds the store not answering runs again every PAUSED_WAIT_S for
    the store's retry window (FAITHLENS_EVENTS_RETRY), so a save during a restart goes through by
    itself; one that holds something already paid for (an LLM answer) is given `patience_s` instead,
    so a longer outage does not cost the answer. Nothing of a write is in the store before its one
    append, which keeps its event key across its own retries: running the body again adds nothing twice."""
    shared = replica.of(conn)
    deadline = time.monotonic() + (max(patience_s, shared.team.retry_s) if shared else 0)
    attempt = 0
    while True:
        attempt += 1
        try:
            with write(conn, what, patience_s=patience_s) as cur:
                return body(cur)
        except (duckdb.TransactionException, duckdb.ConstraintException):
            if attempt >= CONFLICT_ATTEMPTS:
                raise
            time.sleep(random.uniform(0.005, 0.02) * attempt)
        except WritesPausedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(PAUSED_WAIT_S)


def stamp() -> str:
    """The time of a write as its rows store it (`created_at`): given by the writer rather than each
    replica's `current_timestamp` at replay, so every replica holds the time the write was made."""
    return datetime.now().isoformat(sep=" ")


def next_id(cur: duckdb.DuckDBPyConnection, sequence: str) -> int:
    """A new id from `sequence` inside a write: the team store's when the write is shared, so every
    replica stores the same id, else the DuckDB file's."""
    if isinstance(cur, replica.Recording):
        return cur.next_id(sequence)
    return cur.execute("SELECT nextval(?)", [sequence]).fetchone()[0]


def data_version(conn: duckdb.DuckDBPyConnection) -> str:
    """A cheap stamp that changes with every committed write: the cache key for readers.

    The count rides with the newest id because writes of a run's threads commit in any order: when
    a lower id commits after a higher one, the maximum stays and only the count moves."""
    newest, count = conn.execute("SELECT coalesce(max(write_id), 0), count(*) FROM write_log").fetchone()
    return f"{newest}.{count}"
