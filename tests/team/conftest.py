"""Team-store fixtures: one throwaway PostgreSQL cluster per test session (tests/pgcluster.py), a
fresh database in it per test, and server replicas: private copies of the bundled DuckDB file
opened with FAITHLENS_EVENTS_URL set, as an app server opens its own."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from faithlens import config, store
from tests.pgcluster import Cluster

RETRY_S = "1"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    cluster = Cluster().init()
    yield cluster
    cluster.remove()


@pytest.fixture
def team_url(pg_cluster: Cluster) -> str:
    """A new, empty database of the cluster: each test its own team store."""
    name = f"team_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{pg_cluster.url.rsplit('/', 1)[0]}/{name}"


@pytest.fixture
def servers(
    team_url: str, built_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], duckdb.DuckDBPyConnection]]:
    """Factory: `servers("a")` opens server a's replica (a copy of the bundled database the first
    time, the same file when opened again after `store.close`)."""
    monkeypatch.setenv(config.SETTINGS["events_url"].env, team_url)
    monkeypatch.setenv(config.SETTINGS["events_retry"].env, RETRY_S)
    opened: list[duckdb.DuckDBPyConnection] = []

    def open_server(name: str) -> duckdb.DuckDBPyConnection:
        path = tmp_path / f"{name}.duckdb"
        if not path.exists():
            shutil.copy(built_db, path)
        conn = store.connect(path)
        opened.append(conn)
        return conn

    yield open_server
    for conn in opened:
        try:
            store.close(conn)
        except duckdb.ConnectionException:
            pass


def events(url: str) -> list[tuple[int, str]]:
    """The store's events (id, what) as PostgreSQL holds them."""
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT event_id, what FROM faithlens_event ORDER BY event_id").fetchall()
