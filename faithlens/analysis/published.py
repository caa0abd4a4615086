"""The papers' published figures, typed from the papers as data, and how one of ours compares.

Each paper is one TOML file in `published/` (a paper table a file section): the table's name as the
paper prints it ("Table 8"), where it is, its columns, and its rows with the values *as printed*
(strings, so "1.00" keeps its two decimals; "2,048" keeps its thousands separator). A figure a paper
draws without printing its numbers (a bar chart) is an `[[unprinted]]` entry (key, name, title, where,
note, and the numbers its prose states, if any, as `[unprinted.quoted]`), never typed from the picture;
a figure of ours beside it has the status "no printed number". A figure of ours matches a printed one
when it rounds to it: it lies within half a unit of the printed figure's last decimal. The papers round in ways they
do not state (half up, half even, truncation), and a figure exactly on a half unit then counts as
matching either way.

Pages and the CLI put the paper's number beside ours with `compare`; a difference is never silent:
the caller names its cause (`Compared.cause`).

A file:

    citation = "StorySumm (Subbiah et al., EMNLP 2024)"

    [[table]]
    key = "table8"
    name = "Table 8"
    title = "Model scores against the expanded gold labels"
    where = "Section 4 (Results), Table 8"
    columns = ["kappa", "pct_faithful", "balanced_accuracy"]
    note = "optional: what the paper says about how the table was computed"
    rounded_to = {kappa = 2}   # optional, see below
    rows = [
      {key = "gpt-4-0125-preview/justquestion", label = "Binary (GPT-4)", values = ["0.13", "71", "57.8"]},
      {key = "unieval", split = "val", label = "UniEval", values = ["0.34", "33", "69.2"], note = "optional"},
    ]

`rounded_to` is for tables printed by a program that drops trailing zeros (Python's `str(round(x, 2))`
prints 0.3 for 0.30): when the other cells of a column show the table rounds it to 2 decimals, a
printed "0.3" stands for 0.30, and its precision is that of the rounding, not of the print. A row's
`note` says what the paper's text tells about that row (how it was computed, where it comes from).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path

from faithlens.errors import FaithLensError
from faithlens.vocab import DIFFERS, MATCHES, MISSING, UNPRINTED

FOLDER = Path(__file__).with_name("published")


@dataclass(frozen=True)
class Printed:
    """One figure as the paper prints it."""

    text: str
    """As printed: "0.13", "57.8", "71"; "" where the paper leaves the cell blank."""
    places: int | None = None
    """Decimals the table rounds this column to, when its print drops trailing zeros (`rounded_to`)."""

    @property
    def value(self) -> float | None:
        return float(self.text.replace(",", "")) if self.text else None

    @property
    def decimals(self) -> int:
        """Digits after the decimal point as printed ("71" -> 0, "1.00" -> 2), or as rounded (`places`)."""
        exponent = Decimal(self.text.replace(",", "")).as_tuple().exponent if self.text else 0
        return max(0, -int(exponent), self.places or 0)

    def matched_by(self, ours: float | None) -> bool:
        """True when `ours` rounds to the printed figure (within half a unit of its last decimal)."""
        if ours is None or self.value is None or not math.isfinite(ours):
            return False
        return abs(ours - self.value) <= 0.5 * 10**-self.decimals + 1e-9


@dataclass(frozen=True)
class Row:
    key: str
    """What the row is in our terms (a label source, a generator, ...): callers look rows up by it."""
    label: str
    """The row's name as the paper prints it."""
    values: tuple[Printed, ...]
    split: str = "all"
    note: str = ""
    """What the paper says about this row, when it says something (how it was computed)."""


@dataclass(frozen=True)
class PaperTable:
    paper: str
    """The paper's key: the TOML file's name (storysumm, fables, tofueval, arm)."""
    citation: str
    key: str
    name: str
    """As the paper names it: "Table 8", "Figure 4"."""
    title: str
    where: str
    """Where in the paper: section or appendix, page when known."""
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    note: str = ""

    @property
    def reference(self) -> str:
        """The citation and the table's name: "StorySumm (Subbiah et al., EMNLP 2024), Table 8"."""
        return f"{self.citation}, {self.name}"

    def row(self, key: str, split: str = "all") -> Row | None:
        return next((r for r in self.rows if r.key == key and r.split == split), None)

    def printed(self, key: str, column: str, split: str = "all") -> Printed | None:
        row = self.row(key, split)
        return None if row is None else row.values[self.columns.index(column)]


@dataclass(frozen=True)
class Compared:
    """One figure of ours beside the paper's."""

    column: str
    paper: Printed
    ours: float | None
    cause: str = ""
    """Why it differs, when it does: the release's data, the books the paper excludes, ..."""

    @property
    def status(self) -> str:
        if not self.paper.text:
            return UNPRINTED
        if self.ours is None:
            return MISSING
        return MATCHES if self.paper.matched_by(self.ours) else DIFFERS

    @property
    def difference(self) -> float | None:
        """Ours minus the paper's, None when either is missing."""
        if self.ours is None or self.paper.value is None:
            return None
        return self.ours - self.paper.value


def compare(
    table: PaperTable, key: str, ours: dict[str, float | None], split: str = "all", cause: str = ""
) -> list[Compared]:
    """Each printed figure of row `key` beside ours (by column name); `cause` explains differences."""
    row = table.row(key, split)
    if row is None:
        return []
    return [
        Compared(column, printed, ours.get(column), cause)
        for column, printed in zip(table.columns, row.values, strict=True)
        if printed.text
    ]


def _printed(text: object, where: str, places: int | None = None) -> Printed:
    if not isinstance(text, str):
        raise FaithLensError(f"{where}: a printed figure must be a string as printed, got {text!r}")
    try:
        if text:
            Decimal(text.replace(",", ""))  # "2,048" as printed
    except InvalidOperation:
        raise FaithLensError(f"{where}: {text!r} is not a number") from None
    return Printed(text, places)


def _rounded_to(raw: dict, columns: tuple[str, ...], where: str) -> tuple[int | None, ...]:
    places = raw.get("rounded_to", {})
    unknown = set(places) - set(columns)
    if unknown:
        raise FaithLensError(f"{where}: rounded_to names {', '.join(sorted(unknown))}, which are not columns")
    return tuple(places.get(column) for column in columns)


def _table(paper: str, citation: str, raw: dict, where: str) -> PaperTable:
    columns = tuple(raw["columns"])
    places = _rounded_to(raw, columns, where)
    rows = []
    for index, row in enumerate(raw.get("rows", [])):
        place = f"{where}, row {index + 1}"
        if len(row["values"]) != len(columns):
            raise FaithLensError(f"{place}: {len(row['values'])} values for {len(columns)} columns")
        values = tuple(_printed(text, place, digits) for text, digits in zip(row["values"], places, strict=True))
        rows.append(Row(row["key"], row.get("label", row["key"]), values, row.get("split", "all"), row.get("note", "")))
    return PaperTable(
        paper, citation, raw["key"], raw["name"], raw["title"], raw["where"], columns, tuple(rows), raw.get("note", "")
    )


@cache
def paper_tables(paper: str) -> tuple[PaperTable, ...]:
    """Every table of one paper's file, in file order."""
    path = FOLDER / f"{paper}.toml"
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    citation = raw["citation"]
    return tuple(_table(paper, citation, table, f"{path.name}, {table['name']}") for table in raw["table"])


def table(paper: str, key: str) -> PaperTable:
    """One table of one paper by its key ("table8")."""
    for found in paper_tables(paper):
        if found.key == key:
            return found
    raise FaithLensError(f"{paper}: no published table {key!r}")


def papers() -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in FOLDER.glob("*.toml")))


@dataclass(frozen=True)
class Unprinted:
    """A figure a paper draws without printing its numbers (a chart), from its file's `[[unprinted]]`
    entries: listed so that nobody types numbers read off its bars, and so a list of reproduced
    figures can put ours beside it, saying that there is nothing printed to compare."""

    paper: str
    citation: str
    key: str
    name: str
    title: str
    where: str
    note: str
    quoted: PaperTable | None = None
    """Numbers the paper's prose states about the chart, typed as quoted (`[unprinted.quoted]`: columns and
    rows as a table's), compared where a figure of ours stands for them; None when the prose states none."""

    def chart(self, columns: Sequence[str], rows: Sequence[tuple[str, str]]) -> PaperTable:
        """The chart as a table of ours: `columns`, and `rows` as (key, label), with no figure printed."""
        blank = tuple(Printed("") for _ in columns)
        found = tuple(Row(key, label, blank) for key, label in rows)
        return PaperTable(
            self.paper, self.citation, self.key, self.name, self.title, self.where, tuple(columns), found, self.note
        )


def unprinted(paper: str) -> tuple[Unprinted, ...]:
    """The paper's figures that print no numbers, in file order."""
    path = FOLDER / f"{paper}.toml"
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    found = []
    for entry in raw.get("unprinted", []):
        where = f"{path.name}, {entry['name']}"
        quoted = entry.get("quoted")
        prose = None if quoted is None else _table(paper, raw["citation"], {"name": entry["name"], **quoted}, where)
        fields = (entry["key"], entry["name"], entry["title"], entry["where"], entry["note"])
        found.append(Unprinted(paper, raw["citation"], *fields, prose))
    return tuple(found)
