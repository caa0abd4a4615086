"""Fixtures of the coding pages' tests: the app on a private copy of the bundled database."""

from __future__ import annotations

import pytest

from faithlens import config
from tests.coding import support

LOCAL_USER = "ana"
"""Local mode's one user (an admin) while these tests run: the coder the Code page codes as."""


@pytest.fixture
def db_path(app_test, db_copy, monkeypatch):
    """The app on a private copy of the bundled database: coders' codes become label sources, which
    every other page would then show (Compare lists every source)."""
    monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))
    monkeypatch.setenv(config.SETTINGS["user"].env, LOCAL_USER)
    return db_copy


@pytest.fixture
def db(db_path):
    """A connection to the app's database, for making sessions and reading back what pages wrote."""
    with support.connected(db_path) as conn:
        yield conn


@pytest.fixture
def page(open_page, db_path):
    """Open a page on StorySumm, the dataset the coding pages' tests code."""

    def make(script: str, **params: str):
        return open_page(script, dataset="storysumm", **params)

    return make
