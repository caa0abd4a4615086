"""Figures as plain data: what a chart shows, the same numbers as a table, and how they were
computed. Components draw them; the core never imports a plotting library.

Tables are plain Python (`Table`), not pandas frames: the Overview builds its first chart before
pandas is imported, which is most of what a cold start costs beyond Streamlit's own.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported at run time: the Overview's first chart waits for every import
    from faithlens.analysis.beside import Beside

BAR_COLUMNS = ("group", "series", "percent", "n", "total")


def round1(value: float) -> float:
    """`value` to one decimal as numpy and pandas round (scale, round half to even, unscale), so
    the figures match those computed with pandas before, and the papers' published tables."""
    return round(value * 10) / 10


@dataclass(frozen=True)
class Table:
    """A small table: column names and rows of values in that order; None is a blank cell."""

    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]

    @classmethod
    def of(cls, columns: Iterable[str], rows: Iterable[Iterable[object]]) -> Table:
        return cls(tuple(columns), tuple(tuple(row) for row in rows))

    @classmethod
    def from_records(cls, columns: Iterable[str], records: Iterable[dict[str, object]]) -> Table:
        """Rows from dicts keyed by column name; a missing key is a blank cell."""
        names = tuple(columns)
        return cls.of(names, ([record.get(name) for name in names] for record in records))

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list[object]:
        index = self.columns.index(name)
        return [row[index] for row in self.rows]

    def records(self) -> Iterator[dict[str, object]]:
        """Each row as a dict keyed by column name."""
        return (dict(zip(self.columns, row, strict=True)) for row in self.rows)

    def to_csv(self) -> str:
        """The table as CSV: a header line, then one line per row; None is an empty field."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(self.rows)
        return out.getvalue()


@dataclass(frozen=True)
class BarFigure:
    """Percentages per group (a generator, a label source): drawn as bars, listed as a table."""

    key: str
    """Stable id: widget keys and the CSV file name."""
    title: str
    caption: str
    """One line: which label source, which level, which denominator."""
    bars: Table
    """Long form (BAR_COLUMNS), one bar segment a row: group, series, percent, n, total."""
    table: Table
    """The same figures laid out like the paper's table; this is what the CSV holds."""
    stacked: bool
    """True: series are shares stacking to 100% per group. False: side-by-side rates."""
    axis: str
    """Value axis title."""
    beside: Beside | None = None
    """The paper's printed figures beside these, where the figure stands for a paper's table
    (`faithlens.analysis.beside`)."""
    notes: tuple[str, ...] = ()
    """Lines a reader must read beside the figure (what a group is, what it is not)."""


@dataclass(frozen=True)
class ScoreFigure:
    """Score-only label sources (a score, no verdict): their score distribution per level."""

    key: str
    title: str
    caption: str
    table: Table
    """One row per (source, level): n, min, q1, median, q3, max, mean."""
