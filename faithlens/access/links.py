"""Sign-in links, for a lab without an identity provider (FAITHLENS_AUTH=links).

An admin makes a link for a person; the link carries a random token (`tokens.new_token`) shown once,
and only its sha256 is stored. Opening it (`redeem`) signs that person in on that browser: a sign-in
event with a new random session key, which the app keeps in a signed cookie (`tokens.seal`). A link
works until it expires or is revoked (alone, or with every link and session of its person).

Failed attempts are rate-limited per client key (the app passes the browser's address): after
MAX_FAILURES failures within WINDOW_S, that key is refused, valid token or not, until the oldest
failure leaves the window. The count is kept in this process only (several servers of a team each
count their own), which bounds guessing to MAX_FAILURES per WINDOW_S per server and address; against
256-bit tokens this limit is a courtesy to logs rather than the defence, which is the token's size.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from datetime import datetime, timedelta
from urllib.parse import urlencode

import duckdb

from faithlens import store
from faithlens.access import people, tokens
from faithlens.access.directory import read
from faithlens.access.rules import Actor, Person, require
from faithlens.errors import FaithLensError

MAX_FAILURES = 5
WINDOW_S = 600.0
MAX_CLIENTS = 10_000
"""Client keys remembered at most; the ones with the oldest failures are forgotten first."""
DEFAULT_VALID = timedelta(days=14)
SIGN_IN_PATH = "/signin/link"
"""The server's route that opens a sign-in link (`token` in its query) and sets the session cookie."""


class SignInRefused(FaithLensError):
    """A sign-in link that does not sign anyone in (unknown, expired, revoked) or a client refused for
    too many failures. Nothing was written."""


class FailureLimit:
    """Failed attempts per client key in a sliding window, in this process (thread-safe)."""

    def __init__(self, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        held = self._failures.get(client, deque())
        while held and held[0] <= now - self.window_s:
            held.popleft()
        return held

    def wait_s(self, client: str, now: float | None = None) -> float:
        """Seconds until `client` may try again (0: now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            held = self._recent(client, now)
            return 0.0 if len(held) < self.max_failures else held[0] + self.window_s - now

    def fail(self, client: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            held = self._recent(client, now)
            held.append(now)
            self._failures[client] = held
            if len(self._failures) > MAX_CLIENTS:
                oldest = min(self._failures, key=lambda key: self._failures[key][-1] if self._failures[key] else 0)
                del self._failures[oldest]


LIMIT = FailureLimit()
"""The process's count of failed sign-in attempts."""


def create(
    conn: duckdb.DuckDBPyConnection, actor: Actor, person_id: str, valid_for: timedelta = DEFAULT_VALID
) -> tuple[str, str]:
    """A new sign-in link for `person_id`: (link id, token). The token is returned this once and never
    stored; a name-only coder of an older session becomes a person who signs in with links."""
    require(actor, "manage_people")
    if valid_for <= timedelta(0):
        raise FaithLensError(f"a link valid for {valid_for} expires at once", "give it a positive lifetime")
    token, link_id = tokens.new_token(), secrets.token_hex(8)  # hex: an id never reads as a CLI option ('-x')

    def body(cur: duckdb.DuckDBPyConnection) -> None:
        directory = read(cur)
        person = directory.people.get(person_id)
        if person is None:
            raise FaithLensError(
                f"no person named {person_id!r}",
                "add them first, on the People page or with `python -m faithlens people add`",
            )
        if person.sign_in == "legacy":
            people.insert_person(cur, Person(person.id, person.name, None, "link"), actor.id)
        now = datetime.now()
        cur.execute(
            "INSERT INTO sign_in_link (link_id, person_id, token_sha256, expires_at, made_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [link_id, person_id, tokens.digest(token), (now + valid_for).isoformat(sep=" "), actor.id, store.stamp()],
        )
        people.append_event(cur, person_id, "link", actor.id, link_id=link_id)

    store.write_retrying(conn, f"access link {person_id}", body)
    return link_id, token


def sign_in_url(base_url: str, token: str) -> str:
    """The full sign-in link an admin sends: the server's address as people open it, and the token."""
    return f"{base_url.rstrip('/')}{SIGN_IN_PATH}?{urlencode({'token': token})}"


def revoke(conn: duckdb.DuckDBPyConnection, actor: Actor, link_id: str, person_id: str | None = None) -> None:
    """Withdraw one link: opening it no longer signs anyone in (sessions it already made stay). With
    `person_id`, the link must be theirs (the CLI names both, so a mistyped id revokes nobody else's)."""
    require(actor, "manage_people")

    def body(cur: duckdb.DuckDBPyConnection) -> None:
        link = read(cur, legacy=False).links.get(link_id)
        if link is None or (person_id is not None and link.person_id != person_id):
            whose = f" of {person_id}" if person_id is not None else ""
            raise FaithLensError(f"no sign-in link {link_id!r}{whose}", "pick a link from the People page")
        people.append_event(cur, link.person_id, "revoke", actor.id, link_id=link_id)

    store.write_retrying(conn, f"access revoke link {link_id}", body)


def _check(cur: duckdb.DuckDBPyConnection, token: str) -> tuple[Person, str] | str:
    """(the person, the link id) the token signs in, or why it does not."""
    directory = read(cur, legacy=False)
    link = directory.links.get(directory.link_hashes.get(tokens.digest(token), ""))
    if link is None:
        return "this sign-in link is not known here"
    if link.revoked:
        return "this sign-in link was revoked"
    if link.expires_at <= datetime.now():
        return f"this sign-in link expired on {link.expires_at:%Y-%m-%d %H:%M}"
    return directory.people[link.person_id], link.link_id


def redeem(conn: duckdb.DuckDBPyConnection, token: str, client: str, limit: FailureLimit = LIMIT) -> tuple[Person, str]:
    """Sign in with a link's token from `client` (the browser's address): (the person, the new browser
    session key). Refused (SignInRefused, nothing written) when the token signs nobody in, or when
    `client` failed too often lately."""
    wait = limit.wait_s(client)
    if wait > 0:
        raise SignInRefused(
            "too many failed sign-in attempts from this address", f"try again in {max(1, round(wait / 60))} min"
        )
    with conn.cursor() as cur:
        found = _check(cur, token)
    if isinstance(found, str):
        limit.fail(client)
        raise SignInRefused(found, "ask an admin for a new link")
    session_key = tokens.new_token()

    def body(cur: duckdb.DuckDBPyConnection) -> Person:
        again = _check(cur, token)  # revoked meanwhile, here or on another server: the write rolls back
        if isinstance(again, str):
            raise SignInRefused(again, "ask an admin for a new link")
        people.record_sign_in(cur, again[0].id, session_key, again[1])
        return again[0]

    return store.write_retrying(conn, "access sign-in (link)", body), session_key
