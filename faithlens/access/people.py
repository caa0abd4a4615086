"""Writing who people are and what they may do: sign-ins and sign-outs, people an admin adds, roles,
budgets and revocations. Each is one `store.write`, so with a team store it replicates like a code.

Every function but the sign-ins takes the acting `Actor` and passes `require` first; a sign-in is
made by the person themself (the provider or a link vouched for them). A person's id is what events
record; for someone signing in through a provider it is made once from their name or email (letters,
digits, '.', '_', '-', space, as coders' names are) and never reuses anyone's id, a name-only coder's
of an older session included: a newcomer must not inherit someone else's codes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

from faithlens import store
from faithlens.access import tokens
from faithlens.access.directory import LEGACY_CODERS, read
from faithlens.access.rules import ROLES, Actor, Person, require
from faithlens.errors import FaithLensError

PERSON_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}")
"""A person's id: what a coder's name may be (faithlens.coding.sessions.CODER_NAME)."""


@dataclass(frozen=True)
class Identity:
    """Who an OpenID Connect provider says signed in: `sub` and what it tells of them."""

    subject: str
    email: str | None = None
    name: str | None = None


def check_id(person_id: str) -> str:
    person_id = person_id.strip()
    if not PERSON_ID.fullmatch(person_id) or person_id.lower() == "adjudicated":
        raise FaithLensError(
            f"person name {person_id!r} is not usable",
            "use up to 40 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit",
        )
    return person_id


def _taken(cur: duckdb.DuckDBPyConnection) -> set[str]:
    """Every id in use: people's and the name-only coders' of older sessions (compared without case)."""
    rows = cur.execute(f"SELECT person_id FROM person UNION {LEGACY_CODERS}").fetchall()
    return {row[0].lower() for row in rows}


def usable_id(wanted: str) -> str:
    """`wanted` made into an id: characters an id may not hold become '-', at most 36 of them."""
    return re.sub(r"[^A-Za-z0-9 _.-]+", "-", wanted).strip(" _.-")[:36] or "person"


def _free_id(cur: duckdb.DuckDBPyConnection, identity: Identity) -> str:
    """An unused id made from the person's email (before '@'), else name, else `sub`."""
    base = usable_id((identity.email or "").split("@", 1)[0] or identity.name or identity.subject)
    taken = _taken(cur)
    candidate, number = base, 1
    while candidate.lower() in taken or candidate.lower() == "adjudicated":
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def append_event(cur: duckdb.DuckDBPyConnection, person_id: str, kind: str, made_by: str, **values: object) -> None:
    columns = ["event_id", "person_id", "kind", *values, "made_by", "created_at"]
    params = [store.next_id(cur, "access_event_seq"), person_id, kind, *values.values(), made_by, store.stamp()]
    cur.execute(f"INSERT INTO access_event ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", params)


def insert_person(cur: duckdb.DuckDBPyConnection, person: Person, made_by: str) -> None:
    cur.execute(
        "INSERT INTO person (person_id, name, email, sign_in, subject, made_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [person.id, person.name, person.email, person.sign_in, person.subject, made_by, store.stamp()],
    )


def sign_in_oidc(conn: duckdb.DuckDBPyConnection, identity: Identity, session_key: str) -> Person:
    """Record that the provider's person `identity` signed in on a browser whose session is `session_key`;
    someone new becomes a person (the first ever to sign in, an admin: see `directory`)."""

    def body(cur: duckdb.DuckDBPyConnection) -> Person:
        row = cur.execute("SELECT person_id, name, email FROM person WHERE subject = ?", [identity.subject]).fetchone()
        if row is None:
            person_id = _free_id(cur, identity)
            person = Person(person_id, identity.name or person_id, identity.email, "oidc", identity.subject)
            insert_person(cur, person, person_id)
        else:
            person = Person(row[0], row[1], row[2], "oidc", identity.subject)
        append_event(cur, person.id, "sign_in", person.id, session_sha256=tokens.digest(session_key), sign_in="oidc")
        return person

    return store.write_retrying(conn, "access sign-in (provider)", body)


def record_sign_in(cur: duckdb.DuckDBPyConnection, person_id: str, session_key: str, link_id: str) -> None:
    """A sign-in through a link, inside the caller's write (`links.redeem`)."""
    append_event(
        cur, person_id, "sign_in", person_id, session_sha256=tokens.digest(session_key), sign_in="link", link_id=link_id
    )


def sign_out(conn: duckdb.DuckDBPyConnection, actor: Actor, session_key: str) -> None:
    """End this browser session at once: every tab of it is signed out at its next run."""
    store.write_retrying(
        conn,
        f"access sign-out {actor.id}",
        lambda cur: append_event(cur, actor.id, "sign_out", actor.id, session_sha256=tokens.digest(session_key)),
    )


def add_person(
    conn: duckdb.DuckDBPyConnection,
    actor: Actor,
    person_id: str,
    name: str = "",
    email: str | None = None,
    role: str | None = None,
) -> Person:
    """A person who will sign in with a link an admin makes them (`links.create`), in `role` if given
    (in the same write). A name-only coder of an older session may be named: their codes become this
    person's."""
    require(actor, "manage_people")
    person = Person(check_id(person_id), name.strip() or person_id.strip(), email, "link")
    _check_role(role or "viewer")

    def body(cur: duckdb.DuckDBPyConnection) -> Person:
        if cur.execute("SELECT count(*) FROM person WHERE lower(person_id) = lower(?)", [person.id]).fetchone()[0]:
            raise FaithLensError(f"a person named {person.id!r} exists", "pick another name, or make them a link")
        insert_person(cur, person, actor.id)
        append_event(cur, person.id, "person", actor.id)
        if role is not None:
            append_event(cur, person.id, "role", actor.id, role=role)
        return person

    return store.write_retrying(conn, f"access add {person.id}", body)


def _known(cur: duckdb.DuckDBPyConnection, person_id: str) -> str:
    """`person_id` as it is stored (ids compare without case: `BOB` names bob), else one line."""
    for (known,) in cur.execute(f"SELECT person_id FROM person UNION {LEGACY_CODERS}").fetchall():
        if known.lower() == person_id.strip().lower():
            return known
    raise FaithLensError(
        f"no person named {person_id!r}",
        "check the spelling, or add them first (People page, or `python -m faithlens people add`)",
    )


def _last_admin(cur: duckdb.DuckDBPyConnection, person_id: str) -> bool:
    """Whether `person_id` is the only admin (the rule of roles is the directory's). A store with no
    admin yet (a `links` server before its first admin) has no last admin to keep."""
    found = read(cur, legacy=False)
    admins = {pid for pid, held in found.roles.items() if held == "admin" and found.people.get(pid) is not None}
    return admins == {person_id}


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise FaithLensError(f"unknown role {role!r}", f"use one of {', '.join(ROLES)}")


def set_role(conn: duckdb.DuckDBPyConnection, actor: Actor, person_id: str, role: str) -> None:
    require(actor, "manage_people")
    _check_role(role)

    def body(cur: duckdb.DuckDBPyConnection) -> None:
        who = _known(cur, person_id)
        if role != "admin" and _last_admin(cur, who):
            raise FaithLensError(
                f"{who} is the last admin",
                "make someone else an admin first; the CLI, which acts as an admin, can too",
            )
        append_event(cur, who, "role", actor.id, role=role)

    store.write_retrying(conn, f"access role {person_id} {role}", body)


def set_budget(
    conn: duckdb.DuckDBPyConnection, actor: Actor, person_id: str, day_usd: float | None, month_usd: float | None
) -> None:
    """Dollars `person_id` may spend a day and a calendar month on paid calls (None: no limit)."""
    require(actor, "manage_people")
    for limit in (day_usd, month_usd):
        if limit is not None and not limit >= 0:
            raise FaithLensError(
                f"budget {limit} is not a sum of dollars", "give 0 or more, or leave it empty for no limit"
            )

    def body(cur: duckdb.DuckDBPyConnection) -> None:
        append_event(cur, _known(cur, person_id), "budget", actor.id, day_usd=day_usd, month_usd=month_usd)

    store.write_retrying(conn, f"access budget {person_id}", body)


def revoke_person(conn: duckdb.DuckDBPyConnection, actor: Actor, person_id: str) -> None:
    """End every sign-in link and signed-in browser of `person_id` now (their codes stay)."""
    require(actor, "manage_people")

    def body(cur: duckdb.DuckDBPyConnection) -> None:
        append_event(cur, _known(cur, person_id), "revoke", actor.id)

    store.write_retrying(conn, f"access revoke {person_id}", body)
