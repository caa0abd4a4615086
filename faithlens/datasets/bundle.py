"""What a loader produces: rows for each canonical table of one dataset, plus the ingest log.

Loaders build a Bundle in memory (validating as they go) through its typed helpers; `write_bundle`
inserts it inside the caller's transaction, each table in one `INSERT ... SELECT` from NumPy columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from faithlens.errors import InputError
from faithlens.vocab import GOLD

if TYPE_CHECKING:
    import numpy as np

COLUMNS: dict[str, tuple[str, ...]] = {
    "dataset": ("name", "format", "origin", "source_files", "description", "license", "citation"),
    "document": ("dataset", "document_id", "title", "text", "text_note", "source", "split", "attributes"),
    "summary": (
        "dataset",
        "summary_id",
        "document_id",
        "model",
        "split",
        "topic",
        "topic_type",
        "text",
        "general_comment",
        "attributes",
    ),
    "unit": ("dataset", "unit_id", "summary_id", "kind", "position", "text", "attributes"),
    "label_source": ("dataset", "source", "kind", "description", "origin_file", "origin"),
    "label": (
        "dataset",
        "source",
        "level",
        "target_id",
        "value",
        "raw_value",
        "score",
        "explanation",
        "evidence",
        "reasons",
    ),
    "tag": ("dataset", "level", "target_id", "kind", "value", "source"),
    "key_point": ("dataset", "document_id", "topic", "position", "text"),
    "ingest_log": ("dataset", "file", "position", "kind", "message"),
    "document_text": ("dataset", "document_id", "text", "text_origin"),
}
UPDATES = {"document_text"}
JSON_COLUMNS = {"attributes"}
LIST_COLUMNS = {"source_files", "evidence", "reasons"}
_KNOWN = {table: frozenset(columns) for table, columns in COLUMNS.items()}
_TO_JSON = json.JSONEncoder(ensure_ascii=False).encode
"""One encoder for every JSON value: `json.dumps` with an option builds a new one per call."""


def unit_id(summary_id: str, kind: str, position: int) -> str:
    """Stable id of the `position`-th sentence or claim of a summary."""
    return f"{summary_id}#{kind[0]}{position}"


@dataclass
class Bundle:
    """Rows for each table of dataset `dataset`, keyed by table name, in insertion order."""

    dataset: str
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {table: [] for table in COLUMNS})

    def add(self, table: str, **row: Any) -> None:
        """One row of `table`; its `dataset` column is this bundle's dataset."""
        if "dataset" in COLUMNS[table]:
            row = {"dataset": self.dataset, **row}
        if not row.keys() <= _KNOWN[table]:
            raise ValueError(f"unknown columns for {table}: {sorted(row.keys() - _KNOWN[table])}")
        self.rows[table].append(row)

    def extend(self, other: Bundle) -> None:
        """Append every row of `other` (a bundle of the same dataset)."""
        for table, rows in other.rows.items():
            self.rows[table].extend(rows)

    def unit(self, summary_id: str, kind: str, position: int, text: str, **attributes: Any) -> str:
        """A sentence or claim of `summary_id`; returns its unit id."""
        target = unit_id(summary_id, kind, position)
        self.add(
            "unit",
            unit_id=target,
            summary_id=summary_id,
            kind=kind,
            position=position,
            text=text,
            attributes=attributes or None,
        )
        return target

    def label(self, level: str, target_id: str, value: str | None, source: str = GOLD, **fields: Any) -> None:
        """A label event of `source` on a summary (`level` 'summary') or a unit."""
        self.add("label", source=source, level=level, target_id=target_id, value=value, **fields)

    def tag(self, level: str, target_id: str, kind: str, value: str, source: str = GOLD) -> None:
        self.add("tag", level=level, target_id=target_id, kind=kind, value=value, source=source)

    def label_source(self, source: str, kind: str, origin: str, origin_file: str, description: str) -> None:
        self.add(
            "label_source", source=source, kind=kind, origin=origin, origin_file=origin_file, description=description
        )

    def log(self, file: str, position: str, kind: str, message: str) -> None:
        self.add("ingest_log", file=file, position=position, kind=kind, message=message)

    def count(self, table: str) -> int:
        return len(self.rows[table])


def check_unique(file: str, what: str, ids: list[str]) -> None:
    """Raise on the first repeated id: duplicates would silently overwrite or double-count."""
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise InputError(file, f"{what} {item!r}", f"duplicate {what}; each {what} must appear once")
        seen.add(item)


def _columns(table: str, rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The rows as one NumPy object array per column of `table`, which DuckDB scans as a table
    without pandas (importing it would cost a fresh `ingest` more than its whole write). JSON columns
    travel as JSON text; list columns as Python lists, which DuckDB converts itself (`_select`)."""
    # Imported here: the Overview reaches this module (for the paper tables) and draws its first
    # chart before numpy is loaded; only ingest and import write bundles.
    import numpy as np

    columns = {}
    for column in COLUMNS[table]:
        values = [row.get(column) for row in rows]
        if column in JSON_COLUMNS:
            values = [None if value is None else _TO_JSON(value) for value in values]
        columns[column] = np.empty(len(values), dtype=object)
        columns[column][:] = values
    return columns


def _select(column: str) -> str:
    """A column of the scanned bundle as its table stores it: a list column cast to a list of text
    (DuckDB guessed its type from the Python lists; an all-empty column would read as a list of NULL)."""
    return f"CAST({column} AS VARCHAR[])" if column in LIST_COLUMNS else column


def write_bundle(cur: duckdb.DuckDBPyConnection, bundle: Bundle) -> None:
    """Insert every row of `bundle` using the caller's cursor (and so its transaction)."""
    for table, columns in COLUMNS.items():
        rows = bundle.rows[table]
        if not rows:
            continue
        cur.register("bundle_frame", _columns(table, rows))
        try:
            if table in UPDATES:
                _attach_texts(cur)
            else:
                names, values = ", ".join(columns), ", ".join(_select(column) for column in columns)
                cur.execute(f"INSERT INTO {table} ({names}) SELECT {values} FROM bundle_frame")
        finally:
            cur.unregister("bundle_frame")


def _attach_texts(cur: duckdb.DuckDBPyConnection) -> None:
    """Fill document texts that arrive after the dataset (TofuEval transcripts)."""
    cur.execute(
        """
        UPDATE document SET text = f.text, text_origin = f.text_origin, text_note = NULL
        FROM bundle_frame f
        WHERE document.dataset = f.dataset AND document.document_id = f.document_id
        """
    )
