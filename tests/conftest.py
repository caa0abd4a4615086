"""Shared fixtures: one database built from the bundled data per test session, copies for tests
that write, and an AppTest factory that points the app at its own copy."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from faithlens import config
from faithlens.build import ingest
from tests.apptest import clean

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


@pytest.fixture(scope="session")
def built_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database built from data/ once per session. Read it only; copy it to write."""
    path = tmp_path_factory.mktemp("db") / "bundled.duckdb"
    ingest.ingest(path, DATA)
    return path


@pytest.fixture
def db_copy(built_db: Path, tmp_path: Path) -> Path:
    """A private, writable copy of the bundled database."""
    path = tmp_path / "copy.duckdb"
    shutil.copy(built_db, path)
    return path


@pytest.fixture(scope="session")
def apptest_db(built_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The copy AppTest runs use (the app holds its file open while cached)."""
    path = tmp_path_factory.mktemp("apptest") / "app.duckdb"
    shutil.copy(built_db, path)
    return path


@pytest.fixture
def app_test(apptest_db: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., object]]:
    """Factory: `app_test("pages/explore.py", dataset="storysumm")` -> an AppTest ready to `run()`."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(config.SETTINGS["db"].env, str(apptest_db))
    st.cache_data.clear()
    st.cache_resource.clear()

    def make(script: str = "app.py", **query_params: str | list[str]) -> AppTest:
        at = AppTest.from_file(str(ROOT / script), default_timeout=30)
        for key, value in query_params.items():
            at.query_params[key] = value
        return at

    yield make
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def open_page(app_test) -> Callable[..., object]:
    """Factory: `open_page("pages/compare.py", dataset="storysumm")` -> the page entered from app.py with
    `switch_page`, as in the app (so its links resolve), run once and checked clean."""

    def make(script: str, **query_params: str | list[str]):
        at = app_test("app.py", **query_params)
        at.switch_page(script)
        at.run()
        clean(at)
        return at

    return make
