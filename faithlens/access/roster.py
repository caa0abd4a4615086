"""The People page's table: everyone, name-only coders of older sessions included, with their role,
budget, spending so far, when they last signed in, and their sign-in links (never a token: those are
shown once, when made). Reading it is not an action anyone is refused; changing it is (`people`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from faithlens.access.directory import Budget, Link, read
from faithlens.access.rules import Actor, Person, require
from faithlens.access.spending import Spending

SPENT_BY_PERSON = """
SELECT person,
       coalesce(sum(cost_usd) FILTER (created_at >= $day), 0),
       coalesce(sum(cost_usd) FILTER (created_at >= $month), 0),
       count(*) FILTER (cost_usd IS NULL AND created_at >= $month)
FROM llm_call WHERE person IS NOT NULL AND created_at >= $month GROUP BY person
"""
LINK_USES = (
    "SELECT link_id, max(created_at) FROM access_event WHERE kind = 'sign_in' AND link_id IS NOT NULL GROUP BY 1"
)


@dataclass(frozen=True)
class Member:
    """One row of the People page."""

    person: Person
    role: str
    spending: Spending
    last_seen: datetime | None
    links: tuple[Link, ...]
    link_uses: dict[str, datetime] = field(default_factory=dict)
    """link id -> when it last signed someone in (links never used are absent)."""


def roster(cur: duckdb.DuckDBPyConnection, now: datetime | None = None) -> list[Member]:
    """Everyone FaithLens knows, people with a sign-in first (in the order they came), then the
    name-only coders by name."""
    found = read(cur)
    day = (now or datetime.now()).replace(hour=0, minute=0, second=0, microsecond=0)
    rows = cur.execute(SPENT_BY_PERSON, {"day": day, "month": day.replace(day=1)}).fetchall()
    sums = {person: (float(today), float(month), int(unknown)) for person, today, month, unknown in rows}
    uses = dict(cur.execute(LINK_USES).fetchall())
    members = []
    for person in found.people.values():
        budget: Budget = found.budget(person.id)
        today, month, unknown = sums.get(person.id, (0.0, 0.0, 0))
        links = tuple(link for link in found.links.values() if link.person_id == person.id)
        members.append(
            Member(
                person,
                found.role(person.id),
                Spending(person.id, today, month, unknown, budget),
                found.last_seen.get(person.id),
                links,
                {link.link_id: uses[link.link_id] for link in links if link.link_id in uses},
            )
        )
    return sorted(members, key=lambda m: (m.person.sign_in == "legacy", m.person.sign_in == "legacy" and m.person.id))


def members(conn: duckdb.DuckDBPyConnection, actor: Actor) -> list[Member]:
    """The People page's table, for an admin (it shows who may do what and spend how much)."""
    require(actor, "manage_people")
    with conn.cursor() as cur:
        return roster(cur)
