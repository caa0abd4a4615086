"""What one dataset format is: how `import` reads a file of it, whether a vendored copy is rebuilt
by `ingest`, and which paper table the Overview draws for datasets of this format."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from faithlens.analysis.figures import BarFigure
from faithlens.datasets.bundle import Bundle

PaperTables = Callable[[duckdb.DuckDBPyConnection, str], list[BarFigure]]


@dataclass(frozen=True)
class ImportRequest:
    """One `import` call: the file, the dataset it creates or attaches to, and a label source name."""

    path: Path
    dataset: str
    source: str | None
    cur: duckdb.DuckDBPyConnection


@dataclass(frozen=True)
class Vendored:
    """A copy of the benchmark under data/<folder>, rebuilt by `ingest` as dataset `name`."""

    name: str
    folder: str
    description: str
    license: str
    citation: str
    load: Callable[[Path, str], Bundle]
    """(data/<folder>, dataset name) -> Bundle."""


@dataclass(frozen=True)
class Adapter:
    """One format. `attaches` formats add to an existing dataset instead of creating one."""

    name: str
    help: str
    load: Callable[[ImportRequest], Bundle]
    default_dataset: Callable[[Path], str]
    attaches: bool = False
    vendored: Vendored | None = None
    paper_tables: PaperTables | None = None
    """Per-generator tables as the benchmark's paper reports them (None: the generic table)."""
