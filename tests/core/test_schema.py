"""The model takes later label sources (coders, LLM runs) without schema changes."""

from __future__ import annotations

from pathlib import Path

import duckdb

from faithlens import store
from faithlens.store.connection import SCHEMA_DIGEST_KEY


def test_coder_history_is_append_only_and_current_label_is_the_latest(db_copy: Path) -> None:
    conn = duckdb.connect(str(db_copy))
    try:
        target = conn.execute(
            "SELECT unit_id FROM unit WHERE dataset='storysumm' AND kind='sentence' ORDER BY unit_id LIMIT 1"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO label_source (dataset, source, kind, coder, codebook, origin) VALUES ('storysumm', 'coder:ana', 'coder', 'ana', 'v1', 'import')"
        )
        for value in ("unfaithful", "ambiguous"):
            conn.execute(
                "INSERT INTO label (dataset, source, level, target_id, value, created_by) VALUES ('storysumm', 'coder:ana', 'sentence', ?, ?, 'ana')",
                [target, value],
            )
        history = conn.execute("SELECT value FROM label WHERE source='coder:ana' ORDER BY event_id").fetchall()
        current = conn.execute("SELECT value FROM current_label WHERE source='coder:ana'").fetchall()
    finally:
        conn.close()
    assert history == [("unfaithful",), ("ambiguous",)]
    assert current == [("ambiguous",)]


def test_an_llm_run_stores_its_raw_output_parse_rewrite_and_cost(db_copy: Path) -> None:
    conn = duckdb.connect(str(db_copy))
    try:
        conn.execute(
            "INSERT INTO label_source (dataset, source, kind, provider, model, prompt_version, parameters, origin)"
            " VALUES ('fables', 'llm:arm-v1', 'llm', 'openai', 'gpt-x', 'arm/1', '{\"temperature\": 0}', 'import')"
        )
        target = conn.execute("SELECT unit_id FROM unit WHERE dataset='fables' LIMIT 1").fetchone()[0]
        conn.execute(
            "INSERT INTO label (dataset, source, level, target_id, value, raw_output, rewrite, input_tokens, output_tokens, cost_usd)"
            " VALUES ('fables', 'llm:arm-v1', 'claim', ?, 'ambiguous', '{\"label\": \"ambiguous\"}', 'A rewrite.', 120, 30, 0.0012)",
            [target],
        )
        row = conn.execute(
            "SELECT value, rewrite, input_tokens FROM current_label WHERE source='llm:arm-v1'"
        ).fetchone()
    finally:
        conn.close()
    assert row == ("ambiguous", "A rewrite.", 120)


def test_a_file_from_an_older_schema_gets_what_it_lacks_on_open(db_copy: Path) -> None:
    """Opening skips the schema statements only when the file says it has this code's schema."""
    conn = duckdb.connect(str(db_copy))
    try:
        conn.execute("DROP VIEW current_label")
        conn.execute("UPDATE meta SET value = 'an older schema' WHERE key = ?", [SCHEMA_DIGEST_KEY])
    finally:
        conn.close()
    store.connect(db_copy).close()
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        assert conn.execute("SELECT count(*) FROM current_label").fetchone()[0] > 0
    finally:
        conn.close()


def test_a_current_file_keeps_its_own_objects_on_open(db_copy: Path) -> None:
    """With this code's schema recorded, an open runs no schema statement: a view the schema would
    replace stays as the file has it (the measure of "skipped", as timings are not asserted)."""
    conn = duckdb.connect(str(db_copy))
    try:
        conn.execute("CREATE OR REPLACE VIEW current_label AS SELECT * FROM label WHERE false")
    finally:
        conn.close()
    store.connect(db_copy).close()
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        assert conn.execute("SELECT count(*) FROM current_label").fetchone()[0] == 0
    finally:
        conn.close()
