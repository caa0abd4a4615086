"""A fingerprint of every row of every table, to prove a failed ingest changed nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

TABLES = (
    "meta",
    "dataset",
    "document",
    "summary",
    "unit",
    "label_source",
    "label",
    "tag",
    "key_point",
    "alignment",
    "ingest_log",
    "write_log",
)


def fingerprint(path: Path) -> str:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        digest = hashlib.sha256()
        for table in TABLES:
            digest.update(table.encode())
            digest.update(repr(conn.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()).encode())
        return digest.hexdigest()
    finally:
        conn.close()
