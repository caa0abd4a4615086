"""A figure's numbers beside a paper's printed ones (`faithlens.analysis.published`), row by row:
what the Overview shows under a figure that stands for a paper's table, and its CSV.

Kept apart from `faithlens.analysis.figures` so that a page drawing no paper table (the Overview's
first chart) does not import the published figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from faithlens.analysis.figures import Table
from faithlens.analysis.published import DIFFERS, MATCHES, MISSING, Compared


@dataclass(frozen=True)
class BesideRow:
    """One printed row of a paper's table beside the figures of ours that stand for it."""

    paper_row: str
    """The row as the paper prints it ("Average", "CLAUDE-3-OPUS")."""
    ours_is: str
    """Which of our rows stands for it ("slots A–E pooled ..."); '' when none does."""
    compared: tuple[Compared, ...]
    """Each printed cell beside ours; a cell that differs, or has no figure of ours, carries its cause."""

    @property
    def status(self) -> str:
        """'matches' when every figure of ours rounds to the printed one, 'differs' when one does
        not, 'no figure of ours' when we have none."""
        statuses = {cell.status for cell in self.compared}
        return DIFFERS if DIFFERS in statuses else (MATCHES if MATCHES in statuses else MISSING)

    def status_words(self) -> str:
        """The status with how many printed figures of the row ours match: 'differs (2 of 4 match)'."""
        ours = [cell for cell in self.compared if cell.status != MISSING]
        matched = sum(cell.status == MATCHES for cell in ours)
        return self.status if matched in (0, len(ours)) else f"{self.status} ({matched} of {len(ours)} match)"

    def why(self, headings: dict[str, str]) -> str:
        """The causes of the cells that do not match, each after the columns it explains."""
        causes: dict[str, list[str]] = {}
        for cell in self.compared:
            if cell.status != MATCHES and cell.cause:
                causes.setdefault(cell.cause, []).append(headings.get(cell.column, cell.column))
        if len(causes) == 1 and len(next(iter(causes.values()))) == len(self.compared):
            return next(iter(causes))
        return "; ".join(f"{', '.join(columns)}: {cause}" for cause, columns in causes.items())


@dataclass(frozen=True)
class Beside:
    """A figure's numbers beside the paper's printed ones, row by row, with matches / differs and why."""

    reference: str
    """The paper and its table: "TofuEval (Tang et al., NAACL 2024), Table 2"."""
    headings: tuple[tuple[str, str], ...]
    """(the paper table's column key, its heading here), in order."""
    rows: tuple[BesideRow, ...]
    notes: tuple[str, ...] = ()
    """What the reader needs to weigh the differences: the measured evidence, what cannot be known."""

    def table(self) -> Table:
        """One row per printed row: the paper's value and ours per column, the status and why."""
        names = dict(self.headings)
        columns = ["paper row", "ours", *(f"{h} ({who})" for _k, h in self.headings for who in ("paper", "ours"))]
        records = []
        for row in self.rows:
            record: dict[str, object] = {"paper row": row.paper_row, "ours": row.ours_is}
            for cell in row.compared:
                heading = names.get(cell.column, cell.column)
                record[f"{heading} (paper)"] = cell.paper.text
                shown = None if cell.ours is None else round(cell.ours, cell.paper.decimals + 1)
                record[f"{heading} (ours)"] = shown
            records.append({**record, "status": row.status_words(), "why": row.why(names)})
        return Table.from_records([*columns, "status", "why"], records)
