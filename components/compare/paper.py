"""Compare's word on which table it reproduces, and the paper's published figures beside ours.

For the bundled StorySumm dataset at summary level against gold, the agreement table reproduces the
release's own results table (the authors' notebook on the released predictions), not the paper's
Tables 8, 11 and 12. A caption says so under the table; the "Paper's figures" toggle (URL `paper=1`)
puts each printed row under ours with the difference and its cause (`faithlens.views.storysumm_paper`).
The causes of score sources need every threshold tried on their scores, so that is computed (and
cached) only while the toggle is on.
"""

from __future__ import annotations

import streamlit as st

from components import paper_html, urlstate
from components.compare import data as compare_data
from components.compare.controls import Selection, key
from components.shell import PageContext
from faithlens.analysis.thresholds import CUT_POINTS
from faithlens.querystate import ignored
from faithlens.views import storysumm_paper
from faithlens.views.compare import CompareResult

REPRODUCES = {
    "grid": (
        "**Which table these rows reproduce:** the StorySumm release's own results table, figure for figure: the "
        "authors' notebook (Results.ipynb at e6e5d9a) on the released predictions, UniEval and AlignScore at its "
        "150-point-grid thresholds. The paper's Tables 8, 11 and 12 differ for most evaluators, because the "
        "released predictions are not the ones the paper scored."
    ),
    CUT_POINTS: (
        "**Which table these rows reproduce:** the StorySumm release's own results table for the label sources; "
        "UniEval and AlignScore are tuned by the exhaustive cut-point search, which reproduces the paper's "
        "Table 8 UniEval val row (the release table's UniEval rows then differ: its notebook tunes on a grid)."
    ),
}
LEGEND = (
    "Each printed row sits under ours: green cells match ours to the printed precision (ours rounds to the "
    "printed figure), amber ones differ by Δ = ours − paper. Table 8 is the full set (UniEval and AlignScore per "
    "split), Table 11 the val split, Table 12 the test split, and the release notebook the release's own table. "
    "The paper's human rows (annotator, expert, hybrid) have no source here: the release holds only the expanded "
    "gold labels."
)


def _applies(ctx: PageContext, selection: Selection) -> bool:
    info = next((d for d in ctx.datasets if d.name == selection.dataset), None)
    return info is not None and storysumm_paper.applies(info.format, info.origin, selection.level, selection.reference)


def section(
    ctx: PageContext, selection: Selection, results: dict[str, CompareResult], wanted: bool, notes: list[str]
) -> bool:
    """The caption and the toggle, and the paper's figures while it is on. Returns whether it is on
    (for the URL); a `paper=1` link where the paper's tables do not apply adds a note."""
    if not _applies(ctx, selection):
        if wanted:
            notes.append(ignored("paper", "1", "the paper's figures are StorySumm's, at summary level against gold"))
        return False
    st.caption(REPRODUCES[selection.tuning])
    shown = st.toggle(
        "Paper's figures beside ours (StorySumm Tables 8, 11, 12 and the release's table)",
        key=urlstate.bind(key(selection.dataset, "paper"), wanted),
    )
    if not shown:
        return False
    pairs = [results[name].pairs[0] for name in selection.sources if name in results]
    evidence = {
        pair.source.name: compare_data.paper_evidence(ctx.db_path, ctx.version, selection.dataset, pair.source.name)
        for pair in pairs
        if pair.threshold is not None and storysumm_paper.evaluator_rows(pair.source.name)
    }
    lines = storysumm_paper.paper_lines(pairs, evidence)
    if not lines:
        st.info("None of the compared sources is in the paper's tables.")
        return True
    matched = sum(line.matches for line in lines)
    total = sum(len(line.figures) for line in lines)
    st.markdown(f"**Paper's figures:** {matched:,} of {total:,} printed figures match ours to the printed precision.")
    st.html(paper_html.compare_html(lines, pairs))
    st.caption(LEGEND)
    return True
