"""A server's DuckDB file as a replica of the team store (`faithlens.store.team`).

A shared write runs in three steps. First its body runs in a DuckDB transaction through a
`Recording` cursor, which remembers every statement that changes data (with its parameters) and
draws shared ids from PostgreSQL. Second, the statements are appended to PostgreSQL as one event:
committed there, the write is acknowledged. Third, the replica applies every event it has not
applied, in id order, its own included (its own usually by committing the tentative transaction),
in DuckDB transactions that also record the last event id in `meta` (`events_pulled`), so pulling
twice changes nothing and a server that was down catches up where it stopped.

An event whose replay breaks a constraint (two servers creating one session name at once) breaks it
on every replica alike: it is skipped everywhere, named in `write_log`, and its writer gets the
error as if the write had failed locally. Any other DuckDB error stops the pull (a full disk must
not skip an event on one replica only).

The tentative run, the first append attempt and the replays of one process hold one lock, so they
never see each other's uncommitted rows; an append the store did not answer is tried again outside it.
Timestamps are written by the writer (`store.stamp()`), so every replica holds the same ones.
"""

from __future__ import annotations

import atexit
import logging
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

from faithlens.errors import FaithLensError, WritesPausedError
from faithlens.store.connection import STORE_KEY, get_meta, set_meta

if TYPE_CHECKING:  # team.py loads psycopg, which a server without a team store never needs
    from faithlens.store.team import Event, TeamStore

log = logging.getLogger("faithlens.team")

PULLED_KEY = "events_pulled"
PULLED_AT_KEY = "events_pulled_at"
"""meta: when the last applied event was written (local time), to say what a read stands at."""
PULL_BATCH = 500
STOP_WAIT_S = 3.0
CHANGES = re.compile(r"\s*(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)
RESULT_READERS = frozenset({"fetchone", "fetchall", "fetchmany", "description"})
SHARED_TABLES = tuple(
    "coding_session coding_close coding_event coding_comment codebook llm_call llm_run person sign_in_link access_event".split()
)
"""Tables only the event log writes once a file is a replica: a file holding rows in them from
before (written without the store) would disagree with every other replica, so it may not join."""

_replicas: dict[int, Replica] = {}
_stores: dict[str, TeamStore] = {}
_registry_lock = threading.Lock()


@dataclass(frozen=True)
class Health:
    """Whether the team store answered at the last contact, and since when it has not."""

    up: bool
    down_since: datetime | None = None
    reason: str = ""


class Recording:
    """A DuckDB cursor that also notes each data-changing statement, for replay on every replica."""

    def __init__(self, cur: duckdb.DuckDBPyConnection, team: TeamStore, what: str) -> None:
        self._cur = cur
        self._team = team
        self._what = what
        self.statements: list[dict[str, object]] = []

    def execute(self, sql: str, params: object = None) -> Recording:
        if CHANGES.match(sql):
            self.statements.append({"sql": sql, "params": _plain(params)})
        if params is None:
            self._cur.execute(sql)
        else:
            self._cur.execute(sql, params)
        return self

    def next_id(self, sequence: str) -> int:
        return self._team.next_id(sequence, self._what)

    def __getattr__(self, name: str) -> Any:
        """Reading a result only: any other way to change data (executemany, a registered frame) would
        be committed here and never reach the other replicas."""
        if name not in RESULT_READERS:
            raise AttributeError(f"a shared write may not use cursor.{name}: only execute() is replayed")
        return getattr(self._cur, name)


def _applied(cur: duckdb.DuckDBPyConnection) -> int:
    """The id of the last event this file applied (0: none), as committed."""
    return int(get_meta(cur, PULLED_KEY) or 0)


def _mark_pulled(cur: duckdb.DuckDBPyConnection, event_id: int, written: datetime | None) -> None:
    set_meta(cur, PULLED_KEY, str(event_id))
    set_meta(cur, PULLED_AT_KEY, (written or datetime.now()).isoformat(sep=" ", timespec="seconds"))


def _replay(cur: duckdb.DuckDBPyConnection, event: Event) -> None:
    for statement in event.statements:
        cur.execute(statement["sql"], statement["params"])


def _plain(value: object) -> object:
    """Parameters as JSON can carry them: tuples become lists; anything else JSON lacks is refused."""
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"a shared write's parameter of type {type(value).__name__} cannot be replayed")


class Replica:
    """One DuckDB connection kept up to date from `team`, and the way its shared writes go."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, team: TeamStore) -> None:
        self.conn = conn
        self.team = team
        self._lock = threading.RLock()
        self._pulled: int | None = None
        self._mine: set[str] = set()
        """Event keys this process appended and waits to see applied."""
        self._rejected: dict[str, duckdb.ConstraintException] = {}
        self._listening: threading.Event | None = None
        self._listener: threading.Thread | None = None
        self._joined = False

    def pulled(self) -> int:
        if self._pulled is None:
            with self.conn.cursor() as cur:
                self._pulled = _applied(cur)
        return self._pulled

    def _join(self) -> None:
        """Check, once, that this file may replay this store (see SHARED_TABLES), and remember the store."""
        if self._joined:
            return
        store_id = self.team.store_id()
        with self._lock, self.conn.cursor() as cur:
            known = get_meta(cur, STORE_KEY)
            if known is None:
                held = {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in SHARED_TABLES}
                if any(held.values()):
                    rows = ", ".join(f"{n} in {t}" for t, n in held.items() if n)
                    raise FaithLensError(
                        f"This server's database holds rows written without the team store {self.team.where} "
                        f"({rows}), so it cannot join it: its history would differ from the other servers'.",
                        "Give this server a fresh database file (FAITHLENS_DB=... make run-team builds one), "
                        "or unset FAITHLENS_EVENTS_URL to use this file on its own.",
                    )
                set_meta(cur, STORE_KEY, store_id)
            elif known != store_id:
                raise FaithLensError(
                    f"This server's database replays another team store (id {known}), not {self.team.where} "
                    f"(id {store_id}).",
                    "Point FAITHLENS_EVENTS_URL at the store this file came from, or give the server a fresh file.",
                )
        self._joined = True

    def catch_up(self) -> Health:
        """Apply what is new, if anything (one query when nothing is); the store's health after it."""
        newest = self.team.newest()
        if newest is None:
            return self.team.health
        try:
            self._join()
        except WritesPausedError:  # the store went away since `newest`: a page run only reads
            return self.team.health
        if newest > self.pulled():
            self.pull()
        return self.team.health

    def pull(self) -> None:
        """Apply every event after the last applied one, in id order; stop quietly when the store
        does not answer (the next page run or the background thread goes on)."""
        self._join()
        while True:
            with self._lock:
                events = self.team.events_after(self.pulled(), PULL_BATCH)
                if events:
                    self._apply_all(events)
            if events is None or len(events) < PULL_BATCH:
                return

    def _apply_all(self, events: list[Event]) -> None:
        """Apply `events` in one transaction (one commit for many, which is what makes catching up
        fast); when one of them is refused, again one by one, so only that one is skipped."""
        with self.conn.cursor() as cur:
            cur.begin()
            try:
                done = _applied(cur)
                for event in events:
                    if event.event_id > done:
                        _replay(cur, event)
                        cur.execute("INSERT INTO write_log (what) VALUES (?)", [event.what])
                if events[-1].event_id > done:
                    _mark_pulled(cur, events[-1].event_id, events[-1].created_at)
                cur.commit()
            except duckdb.ConstraintException:
                cur.rollback()
                for event in events:
                    self._apply(event)
                return
            except BaseException:
                cur.rollback()
                raise
        self._pulled = max(done, events[-1].event_id)

    def _apply(self, event: Event) -> None:
        with self.conn.cursor() as cur:
            cur.begin()
            try:
                if _applied(cur) >= event.event_id:
                    cur.rollback()
                    return
                _replay(cur, event)
                self._commit(cur, event.event_id, event.what, event.created_at)
            except duckdb.ConstraintException as exc:
                cur.rollback()
                self._reject(cur, event, exc)
                self._pulled = event.event_id
            except BaseException:
                cur.rollback()
                raise

    def _commit(self, cur: duckdb.DuckDBPyConnection, event_id: int, what: str, written: datetime | None) -> None:
        """End an event's transaction: logged like any write, and marked applied in the same commit."""
        cur.execute("INSERT INTO write_log (what) VALUES (?)", [what])
        _mark_pulled(cur, event_id, written)
        cur.commit()
        self._pulled = event_id

    def _reject(self, cur: duckdb.DuckDBPyConnection, event: Event, exc: duckdb.ConstraintException) -> None:
        log.warning("team event %s (%s) skipped: %s", event.event_id, event.what, exc)
        if event.event_key in self._mine:
            self._rejected[event.event_key] = exc
        cur.begin()
        cur.execute("INSERT INTO write_log (what) VALUES (?)", [f"skipped team event {event.event_id}: {event.what}"])
        _mark_pulled(cur, event.event_id, event.created_at)
        cur.commit()

    @contextmanager
    def write(self, what: str, patience_s: float) -> Iterator[Recording]:
        """A shared write: tentative run, append to the store, pull (see the module's docstring).

        The tentative run and a first append attempt hold the lock; when the store does not answer,
        the same statements under the same event key are appended outside it, until the store's retry
        window or `patience_s` has passed, so one server's writes never queue behind a dead store.
        When the store numbers the event right after the last one applied here, the tentative
        transaction is exactly its replay, so it is committed as the replay instead of run twice.
        Committed to the store, the write is done even if the store stops answering before this
        replica has applied it: the next pull applies it."""
        key = uuid.uuid4().hex
        deadline = time.monotonic() + max(patience_s, self.team.retry_s)
        if not self.team.health.up:
            self.team.answers()
        self.pull()
        self._mine.add(key)
        try:
            with self._lock, self.conn.cursor() as cur:
                cur.begin()
                recording = Recording(cur, self.team, what)
                try:
                    yield recording
                    if not recording.statements:
                        cur.rollback()
                        return
                    event_id = self._first_append(key, what, recording.statements)
                except BaseException:
                    cur.rollback()
                    raise
                if event_id == self.pulled() + 1:
                    self._commit(cur, event_id, what, datetime.now())
                    return
                cur.rollback()
            if event_id is None:
                self.team.append(key, what, recording.statements, deadline)
            self.pull()
        finally:
            self._mine.discard(key)
        rejected = self._rejected.pop(key, None)
        if rejected is not None:
            raise type(rejected)(str(rejected))

    def _first_append(self, key: str, what: str, statements: list[dict[str, object]]) -> int | None:
        """One attempt (inside the lock); None when the store did not answer."""
        try:
            return self.team.append(key, what, statements, deadline=0)
        except WritesPausedError:
            return None

    def listen(self) -> None:
        """Pull in the background: on each NOTIFY from the store, and every second."""
        if self._listening is not None:
            return
        self._listening = threading.Event()
        self._listener = threading.Thread(
            target=self.team.listen, args=(self._pull_quietly, self._listening), daemon=True, name="faithlens-team-pull"
        )
        self._listener.start()

    def _pull_quietly(self) -> None:
        try:
            self.catch_up()
        except FaithLensError as exc:
            log.warning("team pull: %s", exc)
        except duckdb.Error:
            log.exception("team pull failed")

    def stop(self) -> None:
        """Stop the background pull and wait for its current pull to end (it holds the connection)."""
        if self._listening is not None:
            self._listening.set()
        if self._listener is not None:
            self._listener.join(STOP_WAIT_S)


def catch_up(conn: duckdb.DuckDBPyConnection) -> tuple[Health, int, str] | None:
    """Before a page run: apply what other servers wrote since the last one. Returns the store's
    health, the events applied so far and the store's address; None without a team store."""
    found = _replicas.get(id(conn))
    if found is None:
        return None
    return found.catch_up(), found.pulled(), found.team.where


def is_replica(conn: duckdb.DuckDBPyConnection) -> bool:
    """Whether `conn` replays a team store (other servers write to it too)."""
    return id(conn) in _replicas


def listen(conn: duckdb.DuckDBPyConnection) -> None:
    """Pull in the background too (the app server's root connection); nothing without a team store."""
    found = _replicas.get(id(conn))
    if found is not None:
        found.listen()


def close(conn: duckdb.DuckDBPyConnection) -> None:
    """Close `conn`; a replica also stops pulling, and its store's pool closes with its last replica."""
    with _registry_lock:
        found = _replicas.pop(id(conn), None)
        last = found is not None and all(other.team is not found.team for other in _replicas.values())
        if last:
            _stores.pop(found.team.url, None)
    if found is not None:
        found.stop()
        if last:
            found.team.close()
    conn.close()


def of(conn: duckdb.DuckDBPyConnection) -> Replica | None:
    """The replica `conn` is, if any. A shared write on an unattached connection while this process
    has replicas is a bug (a cursor passed where the root connection belongs): it would stay local."""
    found = _replicas.get(id(conn))
    if found is None and _replicas:
        raise RuntimeError("a shared write on a connection that is not the replica's root connection")
    return found


@atexit.register
def _close_all() -> None:
    """A server stopping closes its replicas, so each file is checkpointed and its log folded in,
    as it is without a team store (the background pull would otherwise keep the connection alive)."""
    for replica in list(_replicas.values()):
        close(replica.conn)


def join_team(conn: duckdb.DuckDBPyConnection, url: str, retry_s: float) -> Replica:
    """Make `conn` a replica of the store at `url` (one pool per store and process). Nothing is
    contacted yet: the first page run or write checks the store and catches up."""
    from faithlens.store.team import TeamStore

    with _registry_lock:
        team = _stores.get(url)
        if team is None:
            team = _stores[url] = TeamStore(url, retry_s)
        replica = _replicas[id(conn)] = Replica(conn, team)
    return replica
