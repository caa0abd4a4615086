"""Re-ingest is idempotent, rebuilds only when raw files change, and keeps what users imported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb

from faithlens import cli
from faithlens.build import ingest
from faithlens.views import catalog
from tests import raw
from tests.dbsnapshot import fingerprint


def _stats(path: Path) -> dict:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return catalog.stats(conn)
    finally:
        conn.close()


def _content(path: Path) -> list:
    """Rows without timestamps and sequence ids, which a rebuild legitimately renews."""
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return [
            conn.execute("SELECT * EXCLUDE (event_id, created_at) FROM label ORDER BY ALL").fetchall(),
            conn.execute("SELECT * FROM unit ORDER BY ALL").fetchall(),
            conn.execute("SELECT * FROM summary ORDER BY ALL").fetchall(),
            conn.execute("SELECT * EXCLUDE (logged_at) FROM ingest_log ORDER BY ALL").fetchall(),
        ]
    finally:
        conn.close()


def test_reingest_gives_the_same_database(db_copy: Path, built_db: Path) -> None:
    ingest.ingest(db_copy, raw.DATA)
    assert _content(db_copy) == _content(built_db)


def test_if_stale_skips_an_up_to_date_database(db_copy: Path, capsys) -> None:
    before = fingerprint(db_copy)
    assert cli.main(["ingest", "--if-stale", "--db", str(db_copy), "--data-dir", str(raw.DATA)]) == 0
    assert "up to date" in capsys.readouterr().out
    assert fingerprint(db_copy) == before


def test_a_changed_raw_file_makes_the_database_stale(db_copy: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(raw.DATA, data, ignore=shutil.ignore_patterns("*.duckdb*"))
    assert not ingest.is_stale(db_copy, data)
    booklist = data / "fables" / "booklist.md"
    booklist.write_text(booklist.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert ingest.is_stale(db_copy, data)
    assert ingest.is_stale(tmp_path / "missing.duckdb", data)


def test_env_variable_chooses_the_database(tmp_path: Path, monkeypatch, capsys) -> None:
    target = tmp_path / "env.duckdb"
    monkeypatch.setenv("FAITHLENS_DB", str(target))
    line = {"document_id": "d", "summary_id": "s", "sentences": [{"text": "x", "label": "faithful"}]}
    source = tmp_path / "mine.jsonl"
    source.write_text(json.dumps(line), encoding="utf-8")
    assert cli.main(["import", str(source), "--format", "canonical"]) == 0
    assert _stats(target)["mine"]["sentences"] == 1


def test_imports_survive_a_rebuild_of_the_bundled_data(db_copy: Path, tmp_path: Path) -> None:
    line = {
        "document_id": "d",
        "summary_id": "s",
        "sentences": [{"text": "x", "label": "unfaithful"}],
        "label": "unfaithful",
    }
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps(line), encoding="utf-8")
    ingest.import_file(db_copy, mine, "canonical")
    summary_id = next(iter(raw.storysumm_records()))
    preds = tmp_path / "my-evaluator.json"
    preds.write_text(json.dumps({summary_id: {"label": 0, "probs": "reasoning"}}), encoding="utf-8")
    ingest.import_file(db_copy, preds, "storysumm-predictions")
    docs = tmp_path / "docs.csv"
    docs.write_text("doc_id,source\nNPR-5615,HOST: Hello and welcome.\n", encoding="utf-8")
    ingest.import_file(db_copy, docs, "tofueval-docs")

    ingest.ingest(db_copy, raw.DATA)

    stats = _stats(db_copy)
    assert stats["mine"]["labels"]["gold"] == {"sentence": {"unfaithful": 1}, "summary": {"unfaithful": 1}}
    assert stats["storysumm"]["labels"]["my-evaluator"] == {"summary": {"unfaithful": 1}}
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        text = conn.execute("SELECT text FROM document WHERE dataset='tofueval' AND document_id='NPR-5615'").fetchone()[
            0
        ]
        aligned = conn.execute(
            "SELECT count(*) FROM alignment WHERE dataset='tofueval' AND unit_id LIKE 'NPR-5615 / %'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert text == "HOST: Hello and welcome."
    assert aligned > 0


def test_reimporting_a_dataset_replaces_it(db_copy: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.jsonl"
    for sentences in (3, 1):
        line = {"document_id": "d", "summary_id": "s", "sentences": [{"text": f"x{i}"} for i in range(sentences)]}
        mine.write_text(json.dumps(line), encoding="utf-8")
        ingest.import_file(db_copy, mine, "canonical")
    assert _stats(db_copy)["mine"]["sentences"] == 1


def test_importing_over_a_bundled_dataset_is_refused(db_copy: Path, tmp_path: Path, capsys) -> None:
    mine = tmp_path / "x.jsonl"
    mine.write_text(json.dumps({"document_id": "d", "summary_id": "s", "sentences": [{"text": "x"}]}), encoding="utf-8")
    before = fingerprint(db_copy)
    assert cli.main(["import", str(mine), "--format", "canonical", "--name", "storysumm", "--db", str(db_copy)]) == 2
    assert "bundled benchmark" in capsys.readouterr().err
    assert fingerprint(db_copy) == before
