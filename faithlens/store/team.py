"""The team store: one PostgreSQL event log that several app servers share (FAITHLENS_EVENTS_URL).

This module is PostgreSQL's side only: the tables (team_schema.sql), appending an event, reading
the events after an id, drawing shared ids, and knowing whether the store answers. Replaying the
events into a server's DuckDB file is `faithlens.store.replica`'s job.

An append is acknowledged only once PostgreSQL has committed it. An append that finds the store
not answering (restarting, unreachable) is tried again with the same event key until its deadline,
so a commit whose answer was lost is found rather than made twice; past the deadline the write fails
with `WritesPausedError`. Everything else here is one attempt, and a connection is given up when
the network stops carrying it (TCP keepalives and a user timeout), so nothing waits on a dead peer
for the kernel's quarter of an hour.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from importlib import resources

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from faithlens.errors import WritesPausedError
from faithlens.store.replica import Health

log = logging.getLogger("faithlens.team")

LOCK_KEY = 0x4661697468  # the advisory lock that orders appends: event ids become visible in id order
CHANNEL = "faithlens_events"
SHARED_SEQUENCES = (
    "coding_session_seq",
    "coding_event_seq",
    "coding_comment_seq",
    "llm_call_seq",
    "llm_run_seq",
    "llm_run_event_seq",
    "access_event_seq",
)
CONNECT_TIMEOUT_S = 2
READ_WAIT_S = 0.5
PROBE_PAUSE_S = 0.2
LINK = {
    "connect_timeout": CONNECT_TIMEOUT_S,
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 2,
    "tcp_user_timeout": 5000,
}
"""Connection settings: a peer that stops answering is noticed within seconds."""
UNREACHABLE = (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)


@dataclass(frozen=True)
class Event:
    event_id: int
    event_key: str
    what: str
    statements: list[dict[str, object]]
    created_at: datetime | None = None
    """When the store committed it (the writer's moment, in this machine's local time)."""


def _userinfo(url: str) -> str:
    """`user:password` of a URL, found by the last '@' so that a password holding '/' or '@' is whole."""
    rest = url.split("://", 1)[-1]
    return rest.rsplit("@", 1)[0] if "@" in rest else ""


def describe(url: str) -> str:
    """The store's address for messages: host, port and database as written, never a user or password."""
    return url.split("://", 1)[-1].rsplit("@", 1)[-1].split("?", 1)[0]


class TeamStore:
    """The PostgreSQL event log at `url`, through a connection pool shared by the process's threads."""

    def __init__(self, url: str, retry_s: float) -> None:
        self.url = url
        self.where = describe(url)
        self.retry_s = retry_s
        self.origin = f"{socket.gethostname()}:{os.getpid()}"
        self._health = Health(up=True)
        self._schema_ready = False
        self._contacted = False
        self._lock = threading.Lock()
        self.pool = self._new_pool()

    def _new_pool(self) -> ConnectionPool:
        pool = ConnectionPool(
            self.url,
            min_size=1,
            max_size=16,
            open=False,
            kwargs={"autocommit": True, **LINK},
            check=ConnectionPool.check_connection,
            name="faithlens-team",
        )
        pool.open(wait=False)
        return pool

    def answers(self) -> bool:
        """Whether the store takes a new connection now. The pool's own reconnection backs off (up to
        minutes after a long outage), so once the store answers again a fresh pool replaces it."""
        try:
            psycopg.connect(self.url, **LINK).close()
        except UNREACHABLE:
            return False
        self._recovered()
        return True

    def _recovered(self) -> None:
        if self._health.up:
            return
        with self._lock:
            stale, self.pool = self.pool, self._new_pool()
        threading.Thread(target=stale.close, kwargs={"timeout": 1.0}, daemon=True).start()
        self.mark(True)

    @property
    def health(self) -> Health:
        return self._health

    def mark(self, up: bool, reason: str = "") -> None:
        if up:
            self._health = Health(up=True)
        elif self._health.up:
            self._health = Health(up=False, down_since=datetime.now(), reason=reason)

    @contextmanager
    def _connection(self, timeout: float) -> Iterator[psycopg.Connection]:
        try:
            with self.pool.connection(timeout=timeout) as conn:
                self._ensure_schema(conn)
                yield conn
        except UNREACHABLE as exc:
            self.mark(False, self.quiet(exc))
            raise
        self._contacted = True
        self.mark(True)

    def _read_timeout(self) -> float:
        """How long a page run's read waits for a pooled connection: a connection's set-up the first
        time (the pool opens without waiting), then READ_WAIT_S, so a store that went away costs a page
        run little before it says writes are paused."""
        return READ_WAIT_S if self._contacted else CONNECT_TIMEOUT_S

    def _ensure_schema(self, conn: psycopg.Connection) -> None:
        if self._schema_ready:
            return
        with self._lock, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
            conn.execute(resources.files("faithlens.store").joinpath("team_schema.sql").read_text(encoding="utf-8"))
            conn.execute(
                "INSERT INTO faithlens_store (store_id) SELECT %s WHERE NOT EXISTS (SELECT FROM faithlens_store)",
                [str(uuid.uuid4())],
            )
        self._schema_ready = True

    def _once(self, what: str, work: Callable[[psycopg.Connection], object]) -> object:
        """`work` on a pooled connection, one attempt; `WritesPausedError` when the store does not answer."""
        try:
            with self._connection(timeout=CONNECT_TIMEOUT_S if self._health.up else READ_WAIT_S) as conn:
                return work(conn)
        except UNREACHABLE as exc:
            raise self.paused(what, exc) from None

    def until(self, what: str, work: Callable[[psycopg.Connection], object], deadline: float) -> object:
        """`work` again and again while the store does not answer, until `deadline` (time.monotonic)."""
        while True:
            try:
                return self._once(what, work)
            except WritesPausedError:
                if time.monotonic() >= deadline:
                    raise
                if not self.answers():
                    time.sleep(PROBE_PAUSE_S)

    def paused(self, what: str, exc: BaseException) -> WritesPausedError:
        return WritesPausedError(
            f"Not saved: the team store {self.where} did not answer for {self.retry_s:g} s "
            f"({self.quiet(exc)}); nothing of this write ({what}) was stored.",
            "Nothing was lost: what you entered is still here. Save again once the 'writes paused' banner "
            "is gone; pages keep showing this server's copy meanwhile.",
        )

    def quiet(self, exc: BaseException) -> str:
        return quiet(self.url, exc)

    def store_id(self) -> str:
        deadline = time.monotonic() + self.retry_s
        return self.until(
            "the check of the store",
            lambda c: c.execute("SELECT store_id FROM faithlens_store").fetchone()[0],
            deadline,
        )

    def next_id(self, sequence: str, what: str) -> int:
        """A fresh id of a shared sequence (gaps are fine; every replica stores the same ids); one attempt."""
        if sequence not in SHARED_SEQUENCES:
            raise ValueError(f"{sequence} is not a shared sequence")
        return self._once(what, lambda c: c.execute("SELECT nextval(%s)", [sequence]).fetchone()[0])

    def append(self, event_key: str, what: str, statements: list[dict[str, object]], deadline: float) -> int:
        """Commit one event and return its id, trying until `deadline` (0: once); the same `event_key`
        again returns the first one's id."""
        body = json.dumps(statements, ensure_ascii=False)

        def work(conn: psycopg.Connection) -> int:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
                found = conn.execute(
                    "SELECT event_id FROM faithlens_event WHERE event_key = %s", [event_key]
                ).fetchone()
                if found:
                    return found[0]
                event_id = conn.execute(
                    "INSERT INTO faithlens_event (event_key, what, origin, statements) VALUES (%s, %s, %s, %s) "
                    "RETURNING event_id",
                    [event_key, what, self.origin, body],
                ).fetchone()[0]
                conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, str(event_id)])
                return event_id

        return self.until(what, work, deadline)

    def newest(self) -> int | None:
        """The newest event id (0 for none), or None when the store does not answer right now (or has
        not since it last failed: the background listener notices first when it is back)."""
        if not self._health.up:
            return None
        try:
            with self._connection(timeout=self._read_timeout()) as conn:
                return conn.execute("SELECT coalesce(max(event_id), 0) FROM faithlens_event").fetchone()[0]
        except UNREACHABLE:
            return None

    def events_after(self, event_id: int, limit: int = 500) -> list[Event] | None:
        """Events after `event_id` in id order, or None when the store does not answer right now."""
        if not self._health.up:
            return None
        try:
            with self._connection(timeout=self._read_timeout()) as conn:
                rows = conn.execute(
                    "SELECT event_id, event_key, what, statements, created_at FROM faithlens_event "
                    "WHERE event_id > %s ORDER BY event_id LIMIT %s",
                    [event_id, limit],
                ).fetchall()
        except UNREACHABLE:
            return None
        return [Event(*row[:3], json.loads(row[3]), row[4].astimezone().replace(tzinfo=None)) for row in rows]

    def listen(self, on_change: Callable[[], None], stop: threading.Event) -> None:
        """Call `on_change` when another server appends (PostgreSQL NOTIFY) and at least every second;
        reconnects while the store is down. Runs until `stop` is set (a daemon thread's loop)."""
        while not stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, **LINK) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not stop.is_set():
                        self._recovered()
                        on_change()
                        for _ in conn.notifies(timeout=1.0, stop_after=1):
                            pass
            except UNREACHABLE as exc:
                self.mark(False, self.quiet(exc))
                stop.wait(1.0)
            except Exception:  # noqa: BLE001 - the background pull must outlive any one failure
                log.exception("team store listener")
                stop.wait(1.0)

    def close(self) -> None:
        self.pool.close()


def probe(url: str) -> str | None:
    """Why the store at `url` does not take a connection now (the driver's first line, no secrets),
    or None when it does. One direct attempt, no pool: a read-only command asks once."""
    try:
        psycopg.connect(url, **LINK).close()
    except UNREACHABLE as exc:
        return quiet(url, exc)
    return None


def quiet(url: str, exc: BaseException) -> str:
    """The first line of a driver error, with the URL's user and password blanked out, and every
    piece of them between ':', '@' and '/' too: libpq cuts an unencoded password at those and may
    quote a piece as a host name."""
    text = _first_line(exc)
    userinfo = _userinfo(url)
    for secret in sorted({userinfo, *re.split(r"[:@/]", userinfo)} - {""}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
