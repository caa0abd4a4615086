"""Bringing a database built by older code up to today's schema without losing what it holds.

`ensure_schema` runs schema.sql's `CREATE ... IF NOT EXISTS` statements, which add new tables but
cannot change an existing one. A change to an existing table is one step here: `before` runs ahead
of the schema statements, `after` once they have created the new shape, both inside the same
transaction, so a database is either fully upgraded or untouched.

- Alignments gained a ranker (issue 29). Rows of the older `alignment` table were computed by
  rapidfuzz's token_set_ratio, so they move to the new table under that ranker; their version is
  recorded as unknown, as the older code did not record it.
"""

from __future__ import annotations

import duckdb

OLD_ALIGNMENT = "alignment_before_rankers"
UNRECORDED = "unrecorded: aligned by token_set_ratio before alignments recorded their ranker's version"


def _columns(conn: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?",
        [table],
    ).fetchall()
    return {name for (name,) in rows}


def before(conn: duckdb.DuckDBPyConnection) -> None:
    """Move tables whose shape changed out of the way of schema.sql's statements."""
    columns = _columns(conn, "alignment")
    if columns and "ranker" not in columns:
        conn.execute(f"ALTER TABLE alignment RENAME TO {OLD_ALIGNMENT}")


def after(conn: duckdb.DuckDBPyConnection) -> None:
    """Copy the moved tables' rows into their new shape, then drop them."""
    if not _columns(conn, OLD_ALIGNMENT):
        return
    conn.execute(
        f"""
        INSERT INTO alignment (dataset, unit_id, ranker, rank, start_char, end_char, score)
        SELECT dataset, unit_id, 'token_set_ratio', rank, start_char, end_char, score FROM {OLD_ALIGNMENT}
        """
    )
    conn.execute(
        f"""
        INSERT INTO alignment_ranker (dataset, document_id, ranker, version, aligned_at)
        SELECT DISTINCT s.dataset, s.document_id, 'token_set_ratio', ?, current_timestamp
        FROM {OLD_ALIGNMENT} a
        JOIN unit u ON u.dataset = a.dataset AND u.unit_id = a.unit_id
        JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
        """,
        [UNRECORDED],
    )
    conn.execute(f"DROP TABLE {OLD_ALIGNMENT}")
