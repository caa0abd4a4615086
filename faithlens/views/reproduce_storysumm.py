"""StorySumm's reproducer for the Reproduced figures page: Table 2 and Table 6's Gold row (the
Overview's per-generator table), Tables 8, 11 and 12 and the release's own results table (Compare).

Which of our figures stands for which printed one:
- Table 2 (annotator labels per generator) and Table 6's Gold row: the Overview's StorySumm Table 2
  beside the paper's (`faithlens.analysis.storysumm_table2`), so the page and the Overview say the same.
  The release holds the expanded gold only, so Table 2's labels cannot be reproduced; Table 6 says
  what they become.
- Tables 8, 11 and 12: gold against each evaluator at summary level, with UniEval's and
  AlignScore's thresholds tuned on val by the exhaustive cut-point search, which reproduces the one
  score row any search reproduces (Table 8, UniEval, val); the release table at the notebook's
  150-point grid. Why the rest differ: `faithlens.views.storysumm_paper`.
"""

from __future__ import annotations

import duckdb

from faithlens.analysis import generators, published, storysumm_table2
from faithlens.analysis.published import PaperTable, Row
from faithlens.analysis.thresholds import CUT_POINTS, GRID, TUNING_NAMES
from faithlens.views import storysumm_paper as paper
from faithlens.views.compare import compare
from faithlens.views.reproduced import Figure, Link
from faithlens.views.states import CompareState, OverviewState

ANNOTATOR_LABELS = "annotator labels"


def _generator_figures(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Figure]:
    """Table 2 per generator and Table 6's Gold row, from the Overview's table beside the paper's."""
    figures = generators.storysumm_generators(cur, dataset)
    if not figures or figures[0].beside is None:
        return []
    link = Link("overview", OverviewState(dataset), "Open the Overview")
    how = "gold summary labels and easy/hard tags per generator (Overview, StorySumm Table 2)"
    table2, table6 = published.table(paper.PAPER, "table2"), published.table(paper.PAPER, "table6")
    found = []
    for row in figures[0].beside.rows:
        table = table6 if row.paper_row == storysumm_table2.GOLD_ROW else table2
        printed = table.rows[0] if table is table6 else next(r for r in table.rows if r.label == row.paper_row)
        for cell in row.compared:
            kind = ANNOTATOR_LABELS if table is table2 and cell.column != "summaries" else paper.CHANGED_DATA
            found.append(Figure(paper.PAPER, table, printed, cell, kind, how, link))
    return found


def _how(source: str, row: Row, threshold: float | None, tuning: str) -> str:
    scope = "all summaries" if row.split == "all" else f"the {row.split} split"
    text = f"gold vs {source} at summary level, {scope}"
    if threshold is not None:
        text += f"; threshold {threshold:.4f}, tuned on val by {TUNING_NAMES[tuning]}"
    return text


def _link(dataset: str, source: str, row: Row, tuning: str) -> Link:
    state = CompareState(
        dataset=dataset,
        sources=(source,),
        tuning=tuning,
        paper=True,
        view=None if row.split == "all" else row.split,
    )
    return Link("compare", state, "Open in Compare")


def _order(table: PaperTable, row: Row) -> tuple[int, int]:
    return paper.EVALUATOR_TABLES.index(table.key), table.rows.index(row)


def _evaluator_figures(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Figure]:
    """Tables 8, 11, 12 (score sources by cut points) and the release table (by the grid)."""
    by_grid = compare(cur, dataset, paper.LEVEL)
    scored = [pair.source.name for pair in by_grid.pairs if pair.threshold is not None]
    by_cuts = compare(cur, dataset, paper.LEVEL, sources=scored, tuning=CUT_POINTS).pairs if scored else ()
    evidence = {name: paper.score_evidence(cur, dataset, name) for name in scored}
    labelled = [pair for pair in by_grid.pairs if pair.threshold is None]
    lines = [
        *((line, CUT_POINTS) for line in paper.paper_lines([*labelled, *by_cuts], evidence, paper.PAPER_TABLES)),
        *((line, GRID) for line in paper.paper_lines(by_grid.pairs, evidence, (paper.RELEASE,))),
    ]
    lines.sort(key=lambda item: _order(item[0].table, item[0].row))
    thresholds = {
        (pair.source.name, tuning): pair.threshold.value
        for pairs, tuning in ((by_grid.pairs, GRID), (by_cuts, CUT_POINTS))
        for pair in pairs
        if pair.threshold is not None
    }
    figures = []
    for line, tuning in lines:
        threshold = thresholds.get((line.source, tuning))
        used = tuning if threshold is not None else GRID
        how = _how(line.source, line.row, threshold, used)
        link = _link(dataset, line.source, line.row, used)
        kind = line.cause.kind if line.cause else ""
        figures += [Figure(paper.PAPER, line.table, line.row, f, kind, how, link) for f in line.figures]
    return figures


def storysumm_figures(cur: duckdb.DuckDBPyConnection) -> list[Figure] | None:
    """Every StorySumm figure FaithLens reproduces, in the paper's order; None without the bundled dataset."""
    dataset = paper.bundled_dataset(cur)
    if dataset is None:
        return None
    return [*_generator_figures(cur, dataset), *_evaluator_figures(cur, dataset)]
