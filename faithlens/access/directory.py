"""Everyone FaithLens knows and what holds for them now, read from the stored people and access events.

A page run asks who is acting on every run, so the answer must cost almost nothing: the directory
is kept per connection and read again only when the access tables changed (`current`); a lookup is
then a dictionary read, and a browser session is looked up once. The rules that turn events into state:

- a person's role is their latest 'role' event; without one, the first person ever to sign in is an
  admin, a name-only coder of an older session a coder, anyone else a viewer;
- their budget is their latest 'budget' event (no event: no limit for an admin, none to spend else);
- a browser session is valid when it was signed in, not signed out, and made after the person's
  latest 'revoke' without a link (which ends every session and link of theirs).
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from faithlens.access.rules import Person

ADJUDICATED = "adjudicated"
"""The coding sessions' pseudo-coder for settled labels (faithlens.coding.sessions.ADJUDICATED): no person."""
LEGACY_CODERS = f"""
SELECT coder FROM coding_coder
UNION SELECT coder FROM coding_event
UNION SELECT unnest(coders) FROM coding_session
EXCEPT SELECT '{ADJUDICATED}'
"""


@dataclass(frozen=True)
class Budget:
    """Dollars a person may spend on paid calls a day and a calendar month; None: no limit."""

    day_usd: float | None
    month_usd: float | None


NO_LIMIT = Budget(None, None)
NOTHING = Budget(0.0, 0.0)


@dataclass(frozen=True)
class Link:
    link_id: str
    person_id: str
    expires_at: datetime
    created_at: datetime
    revoked: bool


FINGERPRINT = "SELECT count(*) FROM access_event"
"""Changes with every access write, replayed ones included: each adds an event and none is ever
removed (a count, not the newest id: the team store hands ids out in the order they are drawn, and
events arrive in the order they were committed)."""
CHANGES = """
SELECT e.event_id, e.person_id, e.kind, e.role, e.day_usd, e.month_usd, e.link_id, l.token_sha256, l.expires_at,
       l.created_at
FROM access_event e LEFT JOIN sign_in_link l ON e.kind = 'link' AND l.link_id = e.link_id
WHERE e.kind IN ('role', 'budget', 'link', 'revoke')
UNION ALL
(SELECT event_id, person_id, 'first', NULL, NULL, NULL, NULL, NULL, NULL, NULL
 FROM access_event WHERE kind = 'sign_in' ORDER BY event_id LIMIT 1)
ORDER BY 1
"""
"""The few events that change roles, budgets and links, in order (a link's row beside its event), and
the first sign-in ever (whose person is an admin unless a role event says otherwise)."""
LAST_SEEN = "SELECT person_id, max(created_at) FROM access_event WHERE kind = 'sign_in' GROUP BY person_id"
SESSION = """
SELECT e.kind, e.event_id, p.person_id, p.name, p.email, p.sign_in, p.subject
FROM access_event e JOIN person p USING (person_id) WHERE e.session_sha256 = ?
"""
"""A browser session's sign-in and, if it ended so, its sign-out, with the person they are about."""
PEOPLE = "SELECT person_id, name, email, sign_in, subject FROM person"


@dataclass
class Directory:
    """People with their roles, budgets, links and last sign-ins, as of one state of the access tables;
    browser sessions are looked up one at a time (`session`) and remembered. A page run's directory
    (`current`) leaves `people` empty: its sessions bring their person along."""

    fingerprint: int = -1
    people: dict[str, Person] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    budgets: dict[str, Budget] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    link_hashes: dict[str, str] = field(default_factory=dict)
    """token sha256 -> link id."""
    last_seen: dict[str, datetime] = field(default_factory=dict)
    revoked_before: dict[str, int] = field(default_factory=dict)
    """person id -> their latest revocation of everything: sessions signed in before it have ended."""
    sessions: dict[str, tuple[Person | None, bool]] = field(default_factory=dict)
    """session sha256 -> (its person or None if unknown, whether it ended), as looked up so far."""

    def role(self, person_id: str) -> str:
        return self.roles.get(person_id, "viewer")

    def budget(self, person_id: str) -> Budget:
        if person_id in self.budgets:
            return self.budgets[person_id]
        return NO_LIMIT if self.role(person_id) == "admin" else NOTHING

    def session(self, conn: duckdb.DuckDBPyConnection, session_sha256: str) -> tuple[Person | None, bool]:
        """(the person a browser session belongs to, or None; whether it ended: signed out or revoked)."""
        if session_sha256 not in self.sessions:
            with conn.cursor() as cur:
                rows = cur.execute(SESSION, [session_sha256]).fetchall()
            signed_in = next((row for row in rows if row[0] == "sign_in"), None)
            if signed_in is None:
                self.sessions[session_sha256] = (None, False)
            else:
                person = Person(*signed_in[2:])
                revoked = self.revoked_before.get(person.id, -1) > signed_in[1]
                signed_out = any(row[0] == "sign_out" for row in rows)
                self.sessions[session_sha256] = (person, revoked or signed_out)
        person, ended = self.sessions[session_sha256]
        return (None if ended else person), ended


def _people(cur: duckdb.DuckDBPyConnection, found: Directory, legacy: bool) -> None:
    rows = cur.execute(f"{PEOPLE} ORDER BY created_at").fetchall()
    for person_id, name, email, sign_in, subject in rows:
        found.people[person_id] = Person(person_id, name, email, sign_in, subject)
    for (coder,) in cur.execute(LEGACY_CODERS).fetchall() if legacy else []:
        if coder not in found.people:
            found.people[coder] = Person(coder, coder, None, "legacy")
            found.roles[coder] = "coder"


def _state(cur: duckdb.DuckDBPyConnection, found: Directory) -> None:
    """Roles (the first to sign in is an admin unless a role event says otherwise), budgets, and links
    with their revocations, in one pass over CHANGES."""
    first, explicit = None, set()
    for event_id, person_id, kind, role, day, month, link_id, token_sha256, expires_at, made_at in cur.execute(
        CHANGES
    ).fetchall():
        if kind == "first":
            first = person_id
        elif kind == "role":
            found.roles[person_id] = role
            explicit.add(person_id)
        elif kind == "budget":
            found.budgets[person_id] = Budget(day, month)
        elif kind == "link" and token_sha256 is not None:
            found.links[link_id] = Link(link_id, person_id, expires_at, made_at, revoked=False)
            found.link_hashes[token_sha256] = link_id
        elif kind == "revoke":
            _revoke(found, event_id, person_id, link_id)
    if first is not None and first not in explicit:
        found.roles[first] = "admin"


def _revoke(found: Directory, event_id: int, person_id: str, link_id: str | None) -> None:
    """One link, or every link of the person so far and (through `revoked_before`) their sessions."""
    if not link_id:
        found.revoked_before[person_id] = event_id
    ended = [link_id] if link_id else [key for key, link in found.links.items() if link.person_id == person_id]
    for key in ended:
        if key in found.links:
            found.links[key] = dataclasses.replace(found.links[key], revoked=True)


def read(cur: duckdb.DuckDBPyConnection, legacy: bool = True) -> Directory:
    """The directory as the database holds it now, everyone included; with `legacy`, the name-only
    coders of older sessions too (a scan of the codes: the People page wants them, a write's check
    of a link or a role does not)."""
    found = Directory(fingerprint=cur.execute(FINGERPRINT).fetchone()[0])
    _people(cur, found, legacy)
    _state(cur, found)
    found.last_seen = dict(cur.execute(LAST_SEEN).fetchall())
    return found


_cache: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, tuple[str, Directory]] = weakref.WeakKeyDictionary()
"""connection -> (data version, directory); weak, so a closed and dropped connection's entry goes with it
and a new connection never finds an old file's directory."""
_cache_lock = threading.Lock()


def current(conn: duckdb.DuckDBPyConnection, version: str) -> Directory:
    """A page run's directory (roles, budgets, links; sessions looked up as they come) at data version
    `version` of the root connection `conn` (store.data_version). The same version costs nothing; a new
    one costs one query while the access tables are as they were (a code was saved), two when they
    changed."""
    held = _cache.get(conn)
    if held is not None and held[0] == version:
        return held[1]
    with conn.cursor() as cur:
        fingerprint = cur.execute(FINGERPRINT).fetchone()[0]
        if held is not None and held[1].fingerprint == fingerprint:
            found = held[1]
        else:
            found = Directory(fingerprint=fingerprint)
            _state(cur, found)
    with _cache_lock:
        _cache[conn] = (version, found)
    return found


def person_with_subject(conn: duckdb.DuckDBPyConnection, subject: str) -> Person | None:
    """The person a provider's `sub` belongs to, if they ever signed in."""
    with conn.cursor() as cur:
        row = cur.execute(f"{PEOPLE} WHERE subject = ?", [subject]).fetchone()
    return Person(*row) if row else None
