"""StorySumm Table 2 beside the Overview's per-generator table (`generators.storysumm_generators`): each
printed row with ours under it, matches or differs and why, as TofuEval's and FABLES' Table 2 are.

The paper's Table 2 counts the Upwork annotator labels alone (section 2.3: a summary is unfaithful when
two of its three annotators mark the same sentence; 63.5% faithful overall). The release holds only the
expanded gold of section 3.2, whose totals the paper prints as Table 6's Gold row (37.5% faithful, 20
easy, 40 hard). So what can match is the summaries per generator, and our Overall row against Table 6's
Gold row (listed last, named so); the % faithful and # easy / # hard per generator differ by design.
The paper's generators are keyed by the release's raw model and split: its Claude-2 is `claude` on val,
its Claude-3 `claude` on test (section 2.2). Imported only for a StorySumm Overview.
"""

from __future__ import annotations

from faithlens.analysis import published
from faithlens.analysis.beside import Beside, BesideRow
from faithlens.analysis.figures import Table
from faithlens.analysis.generator_names import OVERALL, PAPER_NAMES
from faithlens.analysis.published import MATCHES, Compared

PAPER = "storysumm"
SHOWN = {"summaries": "summaries", "pct_faithful": "% faithful", "easy": "# easy", "hard": "# hard"}
"""Table 2's column keys -> the Overview table's columns (and their headings beside the paper)."""
GOLD_ROW = "Gold (Table 6)"
ANNOTATOR_LABELS = (
    "Table 2 counts the Upwork annotator labels alone (section 2.3; 63.5% faithful overall). The release's labels "
    "are the expanded gold of section 3.2, whose totals are Table 6's Gold row{}; the annotator labels are not in "
    "the release"
)
CHANGED_DATA = "the summaries or gold labels here are not the release's, which reproduce this figure"


def _shown(model: str, split: str) -> str:
    """A printed row's generator as the Overview names it (`generator_names`: the paper's Claude-2 is the
    release's `claude` on val, shown with the raw value beside), without asking the database."""
    rule = next((r for r in PAPER_NAMES if r.format == PAPER and (r.model, r.split) == (model, split)), None)
    return rule.shown if rule else model


def _ours(table: Table, bars: Table, name: str | None) -> dict[str, float | None]:
    """Our figures of one generator in Table 2's column keys; % faithful unrounded, from the bars."""
    record = next((r for r in table.records() if r["generator"] == name), None)
    if record is None:
        return {}
    faithful = next((row[2] for row in bars.rows if row[0] == name and row[1] == "faithful"), 0.0)
    return {column: record.get(shown) for column, shown in SHOWN.items()} | {"pct_faithful": faithful}


def beside(table: Table, bars: Table) -> Beside:
    """Table 2's printed rows beside ours, then Table 6's Gold row beside our Overall row."""
    table2, table6 = published.table(PAPER, "table2"), published.table(PAPER, "table6")
    overall = _ours(table, bars, OVERALL)
    gold = tuple(published.compare(table6, OVERALL, overall, cause=CHANGED_DATA))
    gold_matches = bool(gold) and all(cell.status == MATCHES for cell in gold)
    labels = ANNOTATOR_LABELS.format(", which ours match" if gold_matches else "")
    rows = []
    for row in table2.rows:
        name = _shown(row.key, row.split)
        cells = published.compare(table2, row.key, _ours(table, bars, name), row.split)
        causes = {column: CHANGED_DATA if column == "summaries" else labels for column in table2.columns}
        compared = tuple(Compared(c.column, c.paper, c.ours, causes[c.column]) for c in cells)
        rows.append(BesideRow(row.label, name if any(c.ours is not None for c in compared) else "", compared))
    rows.append(BesideRow(GOLD_ROW, OVERALL, gold))
    note = (
        "What can match: the summaries per generator, and our Overall row against Table 6's Gold row, the totals of "
        "the expanded gold the release holds (the statuses say whether they do). The % faithful and # easy / # hard "
        "per generator differ by design: Table 2 counts the annotator labels alone, which the release does not hold."
    )
    headings = tuple((column, shown) for column, shown in SHOWN.items())
    return Beside(f"{table2.reference} (and Table 6's Gold row)", headings, tuple(rows), (note,))
