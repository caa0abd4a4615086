"""The store's contracts: writes are all-or-nothing and bump the data version every cache is keyed
on; query rows map to dataclasses by column name, so a changed query fails loudly, not silently."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from faithlens import store


@dataclass(frozen=True)
class SummaryRow:
    summary_id: str
    model: str | None
    split: str | None = None


def test_a_committed_write_changes_the_data_version_and_a_failed_one_does_not(db_copy: Path) -> None:
    conn = store.connect(db_copy)
    try:
        before = store.data_version(conn)
        with pytest.raises(RuntimeError), store.write(conn, "half a write") as cur:
            cur.execute("DELETE FROM summary WHERE dataset = 'storysumm'")
            raise RuntimeError("disk full")
        assert store.data_version(conn) == before
        assert conn.execute("SELECT count(*) FROM summary WHERE dataset = 'storysumm'").fetchone()[0] > 0
        with store.write(conn, "tag one summary") as cur:
            cur.execute("INSERT INTO tag VALUES ('storysumm', 'summary', 'x', 'note', 'checked', 'coder:ana')")
        after = store.data_version(conn)
        logged = conn.execute("SELECT what FROM write_log ORDER BY write_id DESC LIMIT 1").fetchone()[0]
    finally:
        conn.close()
    assert after != before and logged == "tag one summary"


def test_rows_map_to_dataclasses_by_column_name(built_db: Path) -> None:
    conn = store.connect(built_db, read_only=True)
    try:
        rows = store.fetch_all(
            conn,
            SummaryRow,
            "SELECT model, summary_id FROM summary WHERE dataset = ? ORDER BY summary_id LIMIT 2",
            ["storysumm"],
        )
        named = store.fetch_one(
            conn,
            SummaryRow,
            "SELECT summary_id, model FROM summary WHERE dataset = $dataset LIMIT 1",
            {"dataset": "fables", "unused": 1},
        )
        with pytest.raises(ValueError, match="unknown \\['text'\\]"):
            store.fetch_all(conn, SummaryRow, "SELECT summary_id, model, text FROM summary LIMIT 1")
        with pytest.raises(ValueError, match="missing \\['model'\\]"):
            store.fetch_all(conn, SummaryRow, "SELECT summary_id FROM summary LIMIT 1")
    finally:
        conn.close()
    assert [row.split for row in rows] == [None, None] and all(row.model for row in rows)
    assert named is not None and " / " in named.summary_id
