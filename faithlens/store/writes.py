"""The one write path. Core functions open `write()`; it owns the transaction and records the write
in `write_log` inside it, so `data_version` (the newest write id, and how many) changes exactly when
committed data does, and every cache keyed on it sees every writer's changes. Pages never open transactions or clear
caches themselves."""

from __future__ import annotations

import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

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


def write_grouped(
    conn: duckdb.DuckDBPyConnection, what: str, body: Callable[[duckdb.DuckDBPyConnection], T], patience_s: float = 0
) -> T:
    """`write_retrying` for many small writes of concurrent threads (a run's answers): the writes
    waiting while another commits are committed together, one transaction with a `write_log` row
    each, so a run pays DuckDB's begin and commit once per group rather than once per answer. Each
    caller returns only once its write is committed, with its body's result or error: a group that
    fails in any way runs each of its writes alone (`write_retrying`), so one write's conflict or
    error is never another's. A replica's writes are not grouped: each is its own team store event."""
    if replica.of(conn) is not None:
        return write_retrying(conn, what, body, patience_s)
    group = _group(conn)
    mine = _Pending(what, body, patience_s)
    with group.turn:
        group.waiting.append(mine)
        while not mine.settled and group.busy:
            group.turn.wait()
        if not mine.settled:
            group.busy, batch, group.waiting = True, group.waiting, []
    if not mine.settled:
        try:
            _commit_group(conn, batch)
        finally:
            with group.turn:
                group.busy = False
                group.turn.notify_all()
    if mine.error is not None:
        raise mine.error
    return mine.result


@dataclass
class _Pending:
    """One write waiting in its connection's group, and once committed (settled) its outcome."""

    what: str
    body: Callable[[duckdb.DuckDBPyConnection], Any]
    patience_s: float
    settled: bool = False
    result: Any = None
    error: BaseException | None = None


@dataclass
class _Group:
    """The writes of one connection waiting to commit, and whether a thread is committing some."""

    turn: threading.Condition = field(default_factory=threading.Condition)
    waiting: list[_Pending] = field(default_factory=list)
    busy: bool = False


_GROUPS: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, _Group] = weakref.WeakKeyDictionary()
_GROUPS_LOCK = threading.Lock()


def _group(conn: duckdb.DuckDBPyConnection) -> _Group:
    with _GROUPS_LOCK:
        return _GROUPS.setdefault(conn, _Group())


def _commit_group(conn: duckdb.DuckDBPyConnection, batch: list[_Pending]) -> None:
    """Commit `batch` as one transaction; when that fails, each write alone. Every write ends settled."""
    try:
        results = _together(conn, batch) if len(batch) > 1 else None
        if results is not None:
            for pending, result in zip(batch, results, strict=True):
                pending.result, pending.settled = result, True
            return
        for pending in batch:
            try:
                pending.result = write_retrying(conn, pending.what, pending.body, pending.patience_s)
            except Exception as exc:  # noqa: BLE001 - handed to the thread whose write it is
                pending.error = exc
            pending.settled = True
    finally:
        for pending in batch:
            if not pending.settled:
                pending.error, pending.settled = RuntimeError("the write was interrupted before it committed"), True


def _together(conn: duckdb.DuckDBPyConnection, batch: list[_Pending]) -> list[Any] | None:
    """The bodies' results once committed in one transaction, or None when any of it failed (then
    nothing of it is stored, and each write runs again alone)."""
    with conn.cursor() as cur:
        cur.begin()
        try:
            results = [pending.body(cur) for pending in batch]
            rows = ", ".join(["(?)"] * len(batch))
            cur.execute(f"INSERT INTO write_log (what) VALUES {rows}", [pending.what for pending in batch])
        except Exception:  # noqa: BLE001 - a conflict or one body's error: the caller runs each alone
            cur.rollback()
            return None
        try:
            cur.commit()
        except duckdb.Error:  # a conflict found at commit: DuckDB has rolled the transaction back
            return None
    return results


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


def new_id(cur: duckdb.DuckDBPyConnection, sequence: str) -> tuple[str, list[int]]:
    """A new id from `sequence` as an INSERT's value: (its SQL, its parameters). A shared write takes
    the team store's id as a `?` parameter (see `next_id`); a local one has DuckDB's `nextval` inline,
    one statement fewer per row, which a run storing an answer per item feels."""
    if isinstance(cur, replica.Recording):
        return "?", [cur.next_id(sequence)]
    return f"nextval('{sequence}')", []


def data_version(conn: duckdb.DuckDBPyConnection) -> str:
    """A cheap stamp that changes with every committed write: the cache key for readers.

    The count rides with the newest id because writes of a run's threads commit in any order: when
    a lower id commits after a higher one, the maximum stays and only the count moves."""
    newest, count = conn.execute("SELECT coalesce(max(write_id), 0), count(*) FROM write_log").fetchone()
    return f"{newest}.{count}"
