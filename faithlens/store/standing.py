"""What a read of a server's replica stands at: the last team-store event the file applied, and when
that event was written, so a read-only command that cannot catch up says how current its figures are.

A replica applies the store's events before each page run of its server and every second while it
runs; a command reading the file (stats, metrics, coding agreement, ...) reads it as of then.
`faithlens.store.snapshot.open_for_reading` brings it up to date first when the store answers, and
else says what these figures stand at (`note`).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from faithlens import config
from faithlens.store.connection import STORE_KEY, get_meta
from faithlens.store.replica import PULLED_AT_KEY, PULLED_KEY


@dataclass(frozen=True)
class Standing:
    """The last event of the team store a replica file applied (0: none) and when it was written."""

    event_id: int
    written: str | None = None

    def words(self) -> str:
        if not self.event_id:
            return "these figures hold none of its events yet"
        return f"these figures stand at its event {self.event_id}" + (
            f", written {self.written}" if self.written else ""
        )


def of(conn: duckdb.DuckDBPyConnection) -> Standing | None:
    """Where the file of `conn` stands, or None when it is no replica of a team store."""
    if get_meta(conn, STORE_KEY) is None:
        return None
    return Standing(int(get_meta(conn, PULLED_KEY) or 0), get_meta(conn, PULLED_AT_KEY))


def unreachable(name: str) -> str | None:
    """Why the replica file `name` cannot catch up now (no store URL set, or the store does not take a
    connection), in words; None when the store answers. psycopg is loaded only when a URL is set."""
    url = config.get("events_url")
    if not url:
        return f"{name} is a server's copy of a team store, and FAITHLENS_EVENTS_URL is not set"
    from faithlens.store import team

    reason = team.probe(url)
    return None if reason is None else f"the team store {team.describe(url)} did not answer ({reason})"


def note(found: Standing, why_not: str | None, where: str = "") -> str:
    """The line a read-only command prints about a replica: caught up, or why not and where it stands."""
    if why_not is None:
        return f"caught up with the team store {where}: {found.words()}"
    return f"{why_not}: {found.words()}, the last this copy of it applied"
