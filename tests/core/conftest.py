"""Fixtures shared by the core tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.hand_errors import build_hand_db


@pytest.fixture(scope="session")
def hand_db(built_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled database plus a hand-checkable import and a coder's codes (tests/core/hand_errors.py)."""
    return build_hand_db(built_db, tmp_path_factory.mktemp("hand"))
