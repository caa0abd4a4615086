"""Coding sessions: made once by an admin (name, dataset, level, protocol, codebook, a fixed unit set,
invited coders), joined by a coder themself, closed once and for all by an admin (`faithlens.coding.closing`), and read back with
each coder's order of the units.

Who may make or join a session is `faithlens.access`'s rule, checked here before anything is
written: the acting person (`Actor`) is the one who joins, never a name a page passes.

The unit set comes from the same selection as LLM runs (all units, a split, the current Explore
filter, a claim set), optionally narrowed to a seeded random sample of N, and is fixed when the
session is made so every coder codes the same units."""

from __future__ import annotations

import dataclasses
import functools
import random
import re
from dataclasses import dataclass, field

import duckdb

from faithlens import access, store
from faithlens.coding import library, modes
from faithlens.coding.codebook import Codebook
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.llm.runs.spec import Selection, select_units
from faithlens.unit_filter import level_noun
from faithlens.vocab import LEVELS

ADJUDICATED = "adjudicated"
"""The session's settled label: a pseudo-coder whose codes the adjudicator makes."""
SESSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}")
CODER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}")
ORDERINGS = ("seeded", "fixed")


@dataclass(frozen=True)
class SessionSpec:
    """What a new session is: everything the setup form or a CSV import says."""

    name: str
    dataset: str
    level: str
    codebook: str
    mode: str = "codes"
    selection: Selection = field(default_factory=Selection)
    sample: int | None = None
    seed: int = 0
    ordering: str = "seeded"
    blind: bool = True
    suggestions: str | None = None
    coders: tuple[str, ...] = ()
    units: tuple[str, ...] | None = None
    """Exactly these units (an import's), each checked to be in the selection; None: all of it."""
    units_from: str = "a list"
    """Where `units` come from, for the set in words ("12 summaries named by codes.csv")."""


@dataclass(frozen=True)
class Session:
    """A session as stored."""

    session_id: int
    name: str
    dataset: str
    level: str
    mode: str
    codebook: str
    codebook_version: str
    selection: str
    units: tuple[str, ...]
    ordering: str
    seed: int
    blind: bool
    suggestions: str | None
    coders: tuple[str, ...]
    closed_by: str | None = None
    """The admin who closed the session (None: open); not a column of coding_session but of coding_close."""

    @property
    def closed(self) -> bool:
        return self.closed_by is not None

    @functools.cached_property
    def unit_set(self) -> frozenset[str]:
        """The units, for membership tests (an import checks thousands of rows)."""
        return frozenset(self.units)

    def source(self, coder: str) -> str:
        """The label source a coder's codes feed: `coding/<session>/<coder>`."""
        return f"coding/{self.name}/{coder}"

    def order_for(self, coder: str) -> tuple[str, ...]:
        """The units in the order this coder gets them: the fixed reading order, or shuffled by a seed
        of the session's and the coder's own (the same every time they come back)."""
        if self.ordering == "fixed":
            return self.units
        units = list(self.units)
        random.Random(f"{self.seed}:{coder}").shuffle(units)
        return tuple(units)


def check_coder(name: str) -> str:
    name = name.strip()
    if not CODER_NAME.fullmatch(name) or name.lower() == ADJUDICATED:
        raise FaithLensError(
            f"coder name {name!r} is not usable",
            "use up to 40 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit "
            f"(and not {ADJUDICATED!r})",
        )
    return name


def _check(cur: duckdb.DuckDBPyConnection, spec: SessionSpec, book: Codebook) -> None:
    if not SESSION_NAME.fullmatch(spec.name):
        raise FaithLensError(
            f"session name {spec.name!r} is not usable",
            "use up to 64 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit",
        )
    if cur.execute("SELECT count(*) FROM coding_session WHERE name = ?", [spec.name]).fetchone()[0]:
        raise FaithLensError(f"a session named {spec.name!r} exists", "pick another name")
    if spec.level not in LEVELS:
        raise FaithLensError(f"unknown level {spec.level!r}", f"use one of {', '.join(LEVELS)}")
    if spec.ordering not in ORDERINGS:
        raise FaithLensError(f"unknown ordering {spec.ordering!r}", f"use one of {', '.join(ORDERINGS)}")
    if spec.sample is not None and spec.sample < 1:
        raise FaithLensError(f"sample {spec.sample} is out of range", "sample 1 or more units, or none for all")
    modes.mode(spec.mode).check(cur, spec.dataset, spec.level, book, spec.suggestions)
    for coder in spec.coders:
        check_coder(coder)


def plan_units(cur: duckdb.DuckDBPyConnection, spec: SessionSpec) -> tuple[list[str], str]:
    """The session's units in reading order, and the set in words."""
    units, described = select_units(cur, spec.dataset, spec.level, spec.selection)
    units, described = modes.mode(spec.mode).narrow(cur, spec.dataset, spec.level, spec.suggestions, units, described)
    if spec.units is not None:
        noun = level_noun(spec.level, len(spec.units))
        return _named(units, spec), f"{len(spec.units):,} {noun} named by {spec.units_from}"
    if spec.sample is not None and spec.sample < len(units):
        chosen = set(random.Random(spec.seed).sample(units, spec.sample))
        noun = level_noun(spec.level, spec.sample)
        described = f"{spec.sample:,} {noun} drawn at random (seed {spec.seed}) from {described}"
        units = [unit for unit in units if unit in chosen]
    if not units:
        raise FaithLensError(f"no units: {described}", "widen the unit set (split, Explore filter or sample)")
    return units, described


def _named(selectable: list[str], spec: SessionSpec) -> list[str]:
    """`spec.units` in reading order, each one of the selectable units."""
    allowed = set(selectable)
    outside = next((unit for unit in spec.units if unit not in allowed), None)
    if outside is not None:
        raise FaithLensError(
            f"unit {outside!r} is not a {spec.level} of {spec.dataset} this session can take",
            "name units of the dataset at the session's level",
        )
    named = set(spec.units)
    return [unit for unit in selectable if unit in named]


def draft(cur: duckdb.DuckDBPyConnection, spec: SessionSpec) -> Session:
    """The session `spec` makes, checked, before it is stored (its id is 0 until `insert`)."""
    book = library.get(cur, spec.codebook)
    _check(cur, spec, book)
    units, described = plan_units(cur, spec)
    return Session(
        session_id=0,
        name=spec.name,
        dataset=spec.dataset,
        level=spec.level,
        mode=spec.mode,
        codebook=book.name,
        codebook_version=book.version,
        selection=described,
        units=tuple(units),
        ordering=spec.ordering,
        seed=spec.seed,
        blind=spec.blind,
        suggestions=spec.suggestions,
        coders=tuple(dict.fromkeys(check_coder(c) for c in spec.coders)),
    )


def insert(cur: duckdb.DuckDBPyConnection, session: Session, made_by: str) -> Session:
    """Store a drafted session (and the codebook version it uses) made by `made_by`, inside the caller's
    transaction."""
    book = library.get(cur, session.codebook, session.codebook_version)
    library.remember(cur, book, "builtin" if session.codebook in library.builtin() else "custom")
    made = dataclasses.replace(session, session_id=store.next_id(cur, "coding_session_seq"))
    columns = list(STORED)
    cur.execute(
        f"INSERT INTO coding_session ({', '.join(columns)}, made_by, created_at) "
        f"VALUES ({', '.join('?' * len(columns))}, ?, ?)",
        [
            *(list(value) if isinstance(value, tuple) else value for value in (getattr(made, c) for c in columns)),
            made_by,
            store.stamp(),
        ],
    )
    return made


def create(conn: duckdb.DuckDBPyConnection, actor: access.Actor, spec: SessionSpec) -> Session:
    """Make the session (and store the codebook version it uses) in one transaction: admins only."""
    access.require(actor, "manage_sessions")
    with conn.cursor() as cur:
        drafted = draft(cur, spec)
    with store.write(conn, f"coding session {spec.name}") as cur:
        return insert(cur, drafted, actor.id)


STORED = tuple(f.name for f in dataclasses.fields(Session) if f.name != "closed_by")
"""Session's fields that are coding_session's columns."""
_COLUMNS = ", ".join(f"s.{name}" for name in STORED)


SELECT = (
    f"SELECT {_COLUMNS}, c.closed_by AS closed_by FROM coding_session s "
    "LEFT JOIN coding_close c ON c.session_id = s.session_id"
)
SELECT_BEFORE_CLOSING = f"SELECT {_COLUMNS}, NULL AS closed_by FROM coding_session s"
"""A read-only copy made before sessions could be closed has no coding_close (a read-only open adds no
table): its sessions are all open."""


def _fetch(cur: duckdb.DuckDBPyConnection, where: str, params: list[object]) -> list[Session]:
    try:
        return store.fetch_all(cur, Session, f"{SELECT} {where}", params)
    except duckdb.CatalogException:
        return store.fetch_all(cur, Session, f"{SELECT_BEFORE_CLOSING} {where}", params)


def get(conn: duckdb.DuckDBPyConnection, name: str) -> Session:
    with conn.cursor() as cur:
        rows = _fetch(cur, "WHERE s.name = ?", [name])
        found = rows[0] if rows else None
        if found is None:
            names = [row[0] for row in cur.execute("SELECT name FROM coding_session ORDER BY name").fetchall()]
            raise NotFoundError(
                f"no coding session {name!r}",
                f"use one of {', '.join(names)}" if names else "make one on the Sessions page or with `coding import`",
            )
    return found


def listed(cur: duckdb.DuckDBPyConnection, dataset: str | None = None) -> list[Session]:
    """Every session (of a dataset), newest first."""
    return _fetch(cur, "WHERE ? IS NULL OR s.dataset = ? ORDER BY s.session_id DESC", [dataset, dataset])


def is_member(cur: duckdb.DuckDBPyConnection, session: Session, person_id: str) -> bool:
    """Whether the person codes in the session: invited, joined, or with codes in it (an import's)."""
    if person_id in session.coders:
        return True
    return cur.execute(
        "SELECT EXISTS (SELECT 1 FROM coding_coder WHERE session_id = $s AND coder = $p) "
        "OR EXISTS (SELECT 1 FROM coding_event WHERE session_id = $s AND coder = $p)",
        {"s": session.session_id, "p": person_id},
    ).fetchone()[0]


def join(conn: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session) -> str:
    """The acting person joins the session (joining twice is a no-op): anyone who codes may join an
    open session. Returns the coder name as stored (the person's id)."""
    access.require(actor, "join", closed=session.closed)
    coder = check_coder(actor.id)
    with conn.cursor() as cur:
        known = is_member(cur, session, coder)
    if not known:
        store.write_retrying(
            conn,
            f"coding join {session.name}",
            lambda cur: cur.execute(
                "INSERT INTO coding_coder (session_id, coder, joined_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [session.session_id, coder, store.stamp()],
            ),
        )
    return coder


def coders(cur: duckdb.DuckDBPyConnection, session: Session) -> tuple[str, ...]:
    """Invited coders, then those who joined or have codes, in that order (the adjudicator apart)."""
    joined = cur.execute(
        """
        SELECT coder FROM (
            SELECT coder, min(joined_at) AS since FROM coding_coder WHERE session_id = ? GROUP BY coder
            UNION ALL
            SELECT coder, min(created_at) FROM coding_event WHERE session_id = ? AND coder <> ? GROUP BY coder
        ) AS seen GROUP BY coder ORDER BY min(since), coder
        """,
        [session.session_id, session.session_id, ADJUDICATED],
    ).fetchall()
    return tuple(dict.fromkeys([*session.coders, *(row[0] for row in joined)]))
