"""The store's contracts: writes are all-or-nothing and bump the data version every cache is keyed
on; query rows map to dataclasses by column name, so a changed query fails loudly, not silently."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.store import writes


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


def test_writes_of_concurrent_threads_commit_together_and_one_failing_loses_no_other(db_copy: Path) -> None:
    """A run's answers are stored by `write_grouped`: writes that wait while another commits go in
    one transaction; each caller sees its own write committed on return, and a write that fails
    fails alone."""
    conn = store.connect(db_copy)
    first_running, release = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def tag(value: str, fail: bool = False) -> Callable[[duckdb.DuckDBPyConnection], str]:
        def body(cur: duckdb.DuckDBPyConnection) -> str:
            if value == "first":
                first_running.set()
                release.wait(10)
            cur.execute("INSERT INTO tag VALUES ('storysumm', 'summary', 'x', 'grouped', ?, 'coder:ana')", [value])
            if fail:
                raise ValueError(f"{value} is refused")
            return value

        return body

    def writer(value: str, fail: bool = False) -> None:
        try:
            seen[value] = store.write_grouped(conn, f"tag {value}", tag(value, fail))
        except ValueError as exc:
            seen[value] = exc
            return
        with conn.cursor() as cur:  # committed before write_grouped returned: another cursor sees it
            found = cur.execute("SELECT count(*) FROM tag WHERE kind = 'grouped' AND value = ?", [value]).fetchone()
        seen[value + " visible"] = found[0]

    try:
        threads = [threading.Thread(target=writer, args=("first",))]
        threads[0].start()
        assert first_running.wait(10)
        waiting = [("a", False), ("b", True), ("c", False), ("d", False)]
        threads += [threading.Thread(target=writer, args=item) for item in waiting]
        for thread in threads[1:]:
            thread.start()
        deadline = time.monotonic() + 10
        while len(writes._group(conn).waiting) < len(waiting) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(writes._group(conn).waiting) == len(waiting)  # all four wait for the first one's commit
        release.set()
        for thread in threads:
            thread.join(10)
        stored = conn.execute("SELECT list(value ORDER BY value) FROM tag WHERE kind = 'grouped'").fetchone()[0]
        logged = conn.execute("SELECT list(what ORDER BY what) FROM write_log WHERE what LIKE 'tag %'").fetchone()[0]
    finally:
        conn.close()
    assert stored == ["a", "c", "d", "first"]
    assert logged == ["tag a", "tag c", "tag d", "tag first"]
    assert isinstance(seen["b"], ValueError) and [seen[v] for v in ("a", "c", "d", "first")] == ["a", "c", "d", "first"]
    assert all(seen[f"{v} visible"] == 1 for v in ("a", "c", "d", "first"))
