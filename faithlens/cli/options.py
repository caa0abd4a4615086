"""Options and database access several commands share."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from faithlens import config, store


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="database file (default: $FAITHLENS_DB or data/faithlens.duckdb)")


@contextmanager
def reading(db: str | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The database for a read-only command. While the app holds it, a snapshot, said on stderr."""
    with store.open_for_reading(config.db_path(db)) as opened:
        if opened.note:
            print(f"note: {opened.note}", file=sys.stderr)
        yield opened.conn
