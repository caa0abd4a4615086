"""Access fixtures: a fresh database file (schema only) per test, the team-store fixtures of
tests/team (a throwaway PostgreSQL cluster and server replicas), and a count of every row a refused
action must not add."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from tests.team.conftest import pg_cluster, servers, team_url  # noqa: F401 - fixtures shared with tests/team

WRITTEN_TABLES = ("person", "sign_in_link", "access_event", "llm_call", "coding_event", "coding_coder", "write_log")


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A new database file with the schema and no data (people and events need no datasets)."""
    opened = store.connect(tmp_path / "access.duckdb")
    yield opened
    store.close(opened)


def row_counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows of every table a sign-in, a role change, a code or a paid answer writes to."""
    return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in WRITTEN_TABLES}
