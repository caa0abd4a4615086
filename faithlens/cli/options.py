"""Options and database access several commands share."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from faithlens import config, store
from faithlens.access import Actor, cli_actor
from faithlens.analysis.mapping import DEFAULT
from faithlens.analysis.thresholds import Thresholds
from faithlens.errors import FaithLensError


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="database file (default: $FAITHLENS_DB or data/faithlens.duckdb)")


def add_actor(parser: argparse.ArgumentParser) -> None:
    """--as NAME: whom a writing command records (default: $FAITHLENS_USER, else the OS user name)."""
    parser.add_argument(
        "--as",
        dest="as_name",
        metavar="NAME",
        help="act as this person, with admin rights (default: $FAITHLENS_USER, else your user name)",
    )


def actor(args: argparse.Namespace) -> Actor:
    """The CLI's acting person: `--as NAME` or FAITHLENS_USER, an admin (whoever has the file has it all)."""
    return cli_actor(getattr(args, "as_name", None))


def add_mapping_and_thresholds(parser: argparse.ArgumentParser) -> None:
    """--mapping and --threshold, as `metrics` and `errors` read them (`Mapping.parse`, `thresholds_option`)."""
    parser.add_argument(
        "--mapping",
        help="in-between labels to binary, e.g. partial=exclude,unverifiable=exclude,ambiguous=exclude "
        f"(default: {DEFAULT}); each takes unfaithful, faithful or exclude",
    )
    parser.add_argument(
        "--threshold",
        action="append",
        metavar="SOURCE=NUMBER",
        help="use this threshold for a score source instead of tuning it on val/dev (repeatable)",
    )


@contextmanager
def reading(db: str | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The database for a read-only command. While the app holds it, a snapshot; a server's replica
    of a team store, brought up to date first, or with what its figures stand at; each said on stderr."""
    with store.open_for_reading(config.db_path(db)) as opened:
        for note in (opened.note, opened.team):
            if note:
                print(f"note: {note}", file=sys.stderr)
        yield opened.conn


def thresholds_option(items: list[str]) -> Thresholds:
    """Each repeated `--threshold SOURCE=NUMBER`, read as one `Thresholds`."""
    values: dict[str, float] = {}
    for item in items:
        try:
            values.update(Thresholds.parse(item))
        except FaithLensError as exc:
            raise FaithLensError(f"--{exc.message}", exc.hint) from None
    return Thresholds.of(values)


def table(rows: list[dict[str, object]], columns: tuple[str, ...]) -> str:
    """Rows as aligned text columns (floats to 3 significant digits, None blank); `columns` when empty."""
    names = list(rows[0]) if rows else list(columns)
    cells = [
        [("" if row[c] is None else f"{row[c]:.3g}" if isinstance(row[c], float) else str(row[c])) for c in names]
        for row in rows
    ]
    widths = [max([len(c), *(len(line[i]) for line in cells)]) for i, c in enumerate(names)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(names, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(lines)
