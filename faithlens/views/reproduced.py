"""The Reproduced figures read model (page /reproduced, `python -m faithlens reproduced`): every
published figure FaithLens reproduces, the app's number beside the paper's, whether it matches to
the printed precision, why it differs when it does, and the view that computes it.

A paper plugs in with one function (`Reproducer.figures`): given a cursor, it finds its bundled
dataset (None when that is not loaded) and returns one `Figure` per printed cell it stands for, each
compared with `faithlens.analysis.published.compare`, so that "matches" means one thing everywhere.
The papers' printed numbers live in `faithlens/analysis/published/<paper>.toml`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

import duckdb

from faithlens.analysis.figures import Table
from faithlens.analysis.published import DIFFERS, MATCHES, MISSING, UNPRINTED, Compared, PaperTable, Row
from faithlens.querystate import encode
from faithlens.vocab import FIGURE_STATUSES

STATUSES = FIGURE_STATUSES
COLUMN_NAMES = {
    "kappa": "κ",
    "pct_faithful": "% faithful",
    "precision": "P faithful",
    "recall": "R faithful",
    "pct_easy_detected": "% easy",
    "pct_hard_detected": "% hard",
    "balanced_accuracy": "Bal. acc. %",
    "threshold": "threshold",
    "summaries": "summaries",
    "easy": "# easy",
    "hard": "# hard",
    "f1_macro": "F1-macro",
    "subj": "Subj.",
    "unfaith": "Unfaith.",
    "subj_or_unfaith": "Subj. ∨ Unfaith.",
    "avg_edit_distance": "Avg. edit dist.",
    "pct_important": "% important",
    "pct_none_important": "% none important",
    "pct_wrong": "% wrong",
    "pct_none_wrong": "% none wrong",
    "recall_extrinsic": "recall %",
    "below_non_llm": "below non-LLM metrics %",
}
"""Short column titles (the Compare page's); a paper's other columns show under their own key."""
CSV_COLUMNS = (
    "paper",
    "table",
    "row",
    "split",
    "column",
    "paper_value",
    "ours",
    "difference",
    "status",
    "cause_kind",
    "cause",
    "how",
    "link",
)


@dataclass(frozen=True)
class Link:
    """The view that computes a figure: a page by its name (`components.urlstate` pages: 'compare',
    'overview', ...) and that page's URL state (`faithlens.views.states`)."""

    page: str
    state: object
    label: str

    def href(self) -> str:
        """The view as the app's relative URL, for the CLI and the CSV: under folder routing a page's
        path is its name, the Overview's `/` (what `components.urlstate.href` gives in the app)."""
        path = "/" if self.page == "overview" else f"/{self.page}"
        return f"{path}?{urlencode(encode(self.state), doseq=True)}"


@dataclass(frozen=True)
class Figure:
    """One printed figure and ours."""

    paper: str
    """The paper's key (its published/<paper>.toml): storysumm, tofueval, fables, arm."""
    table: PaperTable
    row: Row
    compared: Compared
    cause_kind: str = ""
    """Short, for counting: 'released predictions', 'annotator labels', ... ('' when it matches)."""
    how: str = ""
    """How ours is computed, in words."""
    link: Link | None = None

    @property
    def status(self) -> str:
        return self.compared.status

    @property
    def column(self) -> str:
        return COLUMN_NAMES.get(self.compared.column, self.compared.column)

    def as_json(self, href: str | None = None) -> dict[str, object]:
        """One row of the CSV and the CLI's JSON; `href` is the link as a relative URL, if known."""
        compared = self.compared
        return {
            "paper": self.table.citation,
            "table": self.table.name,
            "row": self.row.label,
            "split": self.row.split,
            "column": self.column,
            "paper_value": compared.paper.text,
            "ours": compared.ours,
            "difference": compared.difference,
            "status": self.status,
            "cause_kind": self.cause_kind if self.status != MATCHES else "",
            "cause": compared.cause if self.status != MATCHES else "",
            "how": self.how,
            "link": href,
        }


@dataclass(frozen=True)
class Reproducer:
    """One paper's figures: `figures(cur)` returns them, or None when its dataset is not loaded."""

    paper: str
    title: str
    figures: Callable[[duckdb.DuckDBPyConnection], list[Figure] | None]


@dataclass(frozen=True)
class Summary:
    total: int
    matches: int
    differs: int
    missing: int
    causes: tuple[tuple[str, int], ...]
    """Differing figures per cause kind, most first."""
    unprinted: int = 0
    """Figures of ours beside charts the papers print no numbers for (not in `total`)."""

    def line(self) -> str:
        """In words: "343 published figures: 203 match to the printed precision, 140 differ (...)"."""
        if not self.total:
            return f"A chart with no printed numbers: {self.unprinted:,} figures of ours beside it."
        causes = ", ".join(f"{kind} {n}" for kind, n in self.causes)
        parts = [
            f"{self.total:,} published figures: {self.matches:,} match to the printed precision",
            f"{self.differs:,} differ" + (f" ({causes})" if causes else ""),
        ]
        if self.missing:
            parts.append(f"{self.missing:,} have no figure of ours (each says why)")
        line = ", ".join(parts) + "."
        if self.unprinted:
            line += f" Beside charts that print no numbers: {self.unprinted:,} figures of ours."
        return line


@dataclass(frozen=True)
class Report:
    figures: tuple[Figure, ...]
    absent: tuple[str, ...]
    """Titles of the papers whose dataset is not loaded (their figures are not listed)."""

    def summary(self) -> Summary:
        return summarize(self.figures)


def summarize(figures: tuple[Figure, ...] | list[Figure]) -> Summary:
    """Printed figures by status, differences by cause; figures beside unprinted charts apart."""
    status = Counter(f.status for f in figures)
    causes = Counter(f.cause_kind or "unexplained" for f in figures if f.status == DIFFERS)
    printed = len(figures) - status[UNPRINTED]
    return Summary(
        printed, status[MATCHES], status[DIFFERS], status[MISSING], tuple(causes.most_common()), status[UNPRINTED]
    )


def _reproducers() -> tuple[Reproducer, ...]:
    """Every paper FaithLens reproduces figures of; imported here so the registry is one list."""
    from faithlens.views.reproduce_arm import arm_figures
    from faithlens.views.reproduce_storysumm import storysumm_figures
    from faithlens.views.reproduce_tofueval_fables import fables_figures, tofueval_figures

    return (
        Reproducer("storysumm", "StorySumm", storysumm_figures),
        Reproducer("fables", "FABLES", fables_figures),
        Reproducer("tofueval", "TofuEval", tofueval_figures),
        Reproducer("arm", "ARM", arm_figures),
    )


def reproduce(cur: duckdb.DuckDBPyConnection) -> Report:
    """Every reproducer's figures, papers in registry order."""
    figures: list[Figure] = []
    absent: list[str] = []
    for reproducer in _reproducers():
        found = reproducer.figures(cur)
        if found is None:
            absent.append(reproducer.title)
        else:
            figures += found
    return Report(tuple(figures), tuple(absent))


def as_table(figures: list[Figure], hrefs: list[str | None] | None = None) -> Table:
    """The figures as the CSV's table (one row a figure, CSV_COLUMNS)."""
    links = hrefs or [None] * len(figures)
    return Table.from_records(CSV_COLUMNS, (f.as_json(h) for f, h in zip(figures, links, strict=True)))
