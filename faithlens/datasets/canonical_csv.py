"""The canonical format as CSV (documented in README.md): one row per summary sentence.

Required columns `document_id, summary_id, sentence, label` (filled on every row, except that a
`label` cell may be empty: an unlabelled sentence); optional `explanation`, `error_types` and
`ambiguity_types` (`;`-separated, so the cell needs no CSV quoting), `model`, `split`, `topic`,
`summary_label` and `document` (the source text). A summary's rows are consecutive and in sentence
order, so there is no position to repeat; its summary-level cells may be filled on one row or
repeated, but never disagree. Claims are JSON Lines only.
"""

from __future__ import annotations

from pathlib import Path

from faithlens.datasets import canonical
from faithlens.datasets.bundle import Bundle
from faithlens.datasets.readers import read_csv
from faithlens.errors import InputError

FORMAT = "canonical-csv"
REQUIRED = ("document_id", "summary_id", "sentence", "label")
OPTIONAL = ("explanation", "error_types", "ambiguity_types", "model", "split", "topic", "summary_label", "document")
SUMMARY_COLUMNS = ("document_id", "model", "split", "topic", "summary_label", "document")
TYPES_SEPARATOR = ";"
"""Splits an `error_types` or `ambiguity_types` cell."""

Rows = list[tuple[int, dict[str, str]]]
"""CSV rows with their file line numbers."""


def load(path: Path, dataset: str) -> Bundle:
    name = str(path)
    groups = _group(name, read_csv(path, REQUIRED, optional=OPTIONAL))
    summaries = [_summary(name, summary_id, rows) for summary_id, rows in groups.items()]
    return canonical.build(name, path, dataset, summaries)


def _group(name: str, rows: Rows) -> dict[str, Rows]:
    """Rows by summary_id; a summary's rows must be consecutive (their order is the sentence order)."""
    groups: dict[str, Rows] = {}
    previous = None
    for line, row in rows:
        where = f"line {line}"
        for column in ("document_id", "summary_id"):
            canonical.nonempty(name, where, f"column {column!r}", row[column], f"a {column.replace('_', ' ')}")
        summary_id = row["summary_id"]
        if summary_id in groups and summary_id != previous:
            raise InputError(
                name,
                where,
                f"summary {summary_id!r} continues here after other summaries (its rows start on line "
                f"{groups[summary_id][0][0]}); expected each summary's rows together, in sentence order",
            )
        groups.setdefault(summary_id, []).append((line, row))
        previous = summary_id
    return groups


def _summary_cells(name: str, summary_id: str, rows: Rows) -> dict[str, str | None]:
    """The summary-level cells of one summary: each filled on one row or more, never two values."""
    cells: dict[str, tuple[int, str]] = {}
    for line, row in rows:
        for column in SUMMARY_COLUMNS:
            value = row.get(column) or None
            if value is None:
                continue
            if column == "summary_label":
                canonical.verdict(name, f"line {line}", value)
            first = cells.setdefault(column, (line, value))
            if first[1] != value:
                raise InputError(
                    name,
                    f"line {line}",
                    f"column {column!r} differs from line {first[0]} within summary {summary_id!r}; "
                    "expected one value per summary (or the cell left empty)",
                )
    return {column: cells[column][1] if column in cells else None for column in SUMMARY_COLUMNS}


def _summary(name: str, summary_id: str, rows: Rows) -> canonical.Summary:
    cells = _summary_cells(name, summary_id, rows)
    return canonical.Summary(
        where=f"line {rows[0][0]}",
        document_id=rows[0][1]["document_id"],
        summary_id=summary_id,
        sentences=_sentences(name, summary_id, rows),
        document=cells["document"],
        model=cells["model"],
        split=cells["split"],
        topic=cells["topic"],
        label=cells["summary_label"],
    )


def _sentences(name: str, summary_id: str, rows: Rows) -> tuple[canonical.Unit, ...]:
    """One unit per row; a sentence repeated verbatim in one summary is refused (a pasted-twice row)."""
    first_line: dict[str, int] = {}
    units = []
    for line, row in rows:
        where = f"line {line}"
        given = canonical.Unit(
            text=row["sentence"],
            label=canonical.verdict(name, where, row["label"] or None),
            explanation=row.get("explanation") or None,
            error_types=_types(row.get("error_types", "")),
            ambiguity_types=_types(row.get("ambiguity_types", "")),
        )
        units.append(canonical.checked_unit(name, (where, "column 'sentence'"), given))
        if given.text in first_line:
            raise InputError(
                name,
                where,
                f"sentence repeats line {first_line[given.text]} of summary {summary_id!r}; expected each sentence once",
            )
        first_line[given.text] = line
    return tuple(units)


def _types(cell: str) -> tuple[str, ...]:
    """The cell's values, blanks and repeats dropped (a tag is there or not)."""
    return tuple(dict.fromkeys(part.strip() for part in cell.split(TYPES_SEPARATOR) if part.strip()))
