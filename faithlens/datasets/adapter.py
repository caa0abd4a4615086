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
    """One `import` call: the file, the dataset it creates or attaches to, and the options a format
    may read (a label source name; the TofuEval corpus and split of a renamed CSV)."""

    path: Path
    dataset: str
    cur: duckdb.DuckDBPyConnection
    source: str | None = None
    corpus: str | None = None
    split: str | None = None


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
    """One format. `attaches` formats add to an existing dataset instead of creating one; `options`
    names the optional ImportRequest fields it reads (any other given option is refused)."""

    name: str
    help: str
    load: Callable[[ImportRequest], Bundle]
    default_dataset: Callable[[Path], str]
    attaches: bool = False
    options: tuple[str, ...] = ()
    vendored: Vendored | None = None
    paper_tables: PaperTables | None = None
    """Per-generator tables as the benchmark's paper reports them (None: the generic table)."""
