"""Where codebooks come from: the built-in files (taken from the papers) and the lab's own, saved in
the `codebook` table one version per edit. A session copies the version it uses into that table, so
its codes can always be read against the exact definitions they were made with."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

import duckdb

from faithlens import access, store
from faithlens.coding.codebook import Codebook, read_file
from faithlens.errors import FaithLensError, InputError, NotFoundError


@functools.cache
def builtin() -> dict[str, Codebook]:
    """The codebooks shipped in `faithlens/coding/codebooks/`, by name."""
    folder = resources.files("faithlens.coding").joinpath("codebooks")
    found = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            book = read_file(Path(str(entry)))
            if f"{book.name}.yaml" != entry.name:
                raise FaithLensError(f"{entry.name}: names codebook {book.name!r}", "make the file name match")
            found[book.name] = book
    return found


def remember(cur: duckdb.DuckDBPyConnection, book: Codebook, origin: str) -> None:
    """Store this version (inside the caller's transaction) unless it is stored already."""
    cur.execute(
        "INSERT INTO codebook (name, version, origin, body, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [book.name, book.version, origin, book.to_json(), store.stamp()],
    )


def save(conn: duckdb.DuckDBPyConnection, actor: access.Actor, book: Codebook) -> Codebook:
    """Save a lab's codebook (new, edited, or loaded from a file) as its newest version: admins only."""
    access.require(actor, "manage_codebooks")
    if book.name in builtin():
        raise InputError("codebook", "name", f"{book.name!r} is a built-in codebook; give your edited copy a new name")
    with store.write(conn, f"codebook {book.label}") as cur:
        remember(cur, book, "custom")
        cur.execute(
            "UPDATE codebook SET created_at = ?, made_by = ? WHERE name = ? AND version = ?",
            [store.stamp(), actor.id, book.name, book.version],
        )
    return book


def custom(cur: duckdb.DuckDBPyConnection) -> dict[str, Codebook]:
    """The lab's codebooks, each at its newest version, by name."""
    rows = cur.execute(
        "SELECT name, body FROM codebook WHERE origin = 'custom' "
        "QUALIFY row_number() OVER (PARTITION BY name ORDER BY created_at DESC, version) = 1 ORDER BY name"
    ).fetchall()
    return {name: Codebook.from_json(body) for name, body in rows}


def available(cur: duckdb.DuckDBPyConnection) -> dict[str, Codebook]:
    """Every codebook a session can use: built-in ones first, then the lab's."""
    return {**builtin(), **custom(cur)}


def get(cur: duckdb.DuckDBPyConnection, name: str, version: str | None = None) -> Codebook:
    """A codebook by name, at `version` (as a session recorded it) or its current one."""
    if version is None:
        found = available(cur)
        if name not in found:
            raise NotFoundError(f"no codebook {name!r}", f"use one of {', '.join(found)} or load one from a file")
        return found[name]
    row = cur.execute("SELECT body FROM codebook WHERE name = ? AND version = ?", [name, version]).fetchone()
    if row is not None:
        return Codebook.from_json(row[0])
    book = builtin().get(name)
    if book is not None and book.version == version:
        return book
    raise NotFoundError(f"no codebook {name}@{version}", "the session names a version this database does not hold")
