"""Confusion-matrix heatmaps, metric tables and drill-down examples for the Compare page.

The reference is always on the rows and the compared source on the columns, faithful first.
Source names come from the data (user imports name their own sources), so they are HTML-escaped
in the matrix markup (`charts.matrix_html`) and Markdown-escaped in labels.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import charts, urlstate
from components.markdown import md_escape
from faithlens.analysis.metrics import CLASSES, DEFINITIONS
from faithlens.filters import Filters
from faithlens.views.compare import ALL, Example, MetricRow, SourceChoice
from faithlens.views.states import DetailState, ExploreState

EXAMPLES_SHOWN = 50
ROW_PX, MAX_TABLE_PX = 35, 1200
NUMBER_PX = 70
"""Width of a metric column: narrow enough that every metric of a paper-like table fits the page."""

# Column title, metric key, number format; help text (the full name and definition) comes from
# metrics.DEFINITIONS. Titles are short so that a table of every source fits the page's width.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("n", "n", "%d"),
    ("κ", "kappa", "%.2f"),
    ("% faithful", "pct_faithful", "%.1f"),
    ("P faithful", "precision", "%.2f"),
    ("R faithful", "recall", "%.2f"),
    ("% easy", "pct_easy_detected", "%.1f"),
    ("% hard", "pct_hard_detected", "%.1f"),
    ("Bal. acc. %", "balanced_accuracy", "%.1f"),
    ("F1 faithful", "f1_faithful", "%.2f"),
    ("F1 unfaithful", "f1_unfaithful", "%.2f"),
    ("Macro-F1", "macro_f1", "%.2f"),
    ("Threshold", "threshold", "%.4f"),
)


def show_heatmaps(shown: list[tuple[str, MetricRow, str]], columns: int) -> None:
    """(reference, row, title) matrices as coloured HTML tables in one grid, each with its summary
    line: one element, where a Plotly figure and a caption each made the page slow to draw."""
    blocks = [
        charts.matrix_html(row.confusion, CLASSES, f"{reference} says", f"{row.source} says", title, summary_line(row))
        for reference, row, title in shown
    ]
    st.html(charts.matrix_grid_html(blocks, columns))


def summary_line(row: MetricRow) -> str:
    """The headline figures of one matrix, under its heatmap."""
    m = row.metrics
    parts = [f"n {m.n:,}"]
    if m.kappa is not None:
        parts.append(f"κ {m.kappa:.2f}")
    if m.balanced_accuracy is not None:
        parts.append(f"balanced acc. {m.balanced_accuracy:.1f}%")
    if m.pct_faithful is not None:
        parts.append(f"{m.pct_faithful:.0f}% faithful")
    if row.threshold is not None:
        parts.append(f"threshold {row.threshold:.4f}")
    return " · ".join(parts)


def metrics_frame(rows: list[MetricRow], with_source: bool) -> pd.DataFrame:
    """One line per row, in the papers' column order; a metric no row has (e.g. % easy detected
    outside StorySumm, Threshold without a score source) is left out."""
    records = []
    for row in rows:
        values = {**row.metrics.as_dict(), "threshold": row.threshold}
        record = {"Source": row.source} if with_source else {}
        record["Split"] = row.split
        if row.group != ALL or any(r.group != ALL for r in rows):
            record["Corpus · topic"] = row.group
        record.update({title: values[key] for title, key, _ in COLUMNS})
        record["Left out"] = row.excluded
        records.append(record)
    frame = pd.DataFrame.from_records(records)
    return frame.drop(columns=[title for title, _, _ in COLUMNS if frame[title].isna().all()])


def show_metrics(rows: list[MetricRow], with_source: bool, key: str) -> None:
    """The metrics table; every column header carries the metric's name and definition as help,
    the source stays in view while the table scrolls sideways, and missing values show empty."""
    config: dict[str, object] = {
        title: st.column_config.NumberColumn(title, help=DEFINITIONS[key], format=fmt, width=NUMBER_PX)
        for title, key, fmt in COLUMNS
    }
    if with_source:
        config["Source"] = st.column_config.TextColumn("Source", pinned=True)
    config["Left out"] = st.column_config.NumberColumn(
        "Left out", help="Units both sources label that the mapping (or a missing score) leaves out.", format="%d"
    )
    height = min(ROW_PX * (len(rows) + 1) + 3, MAX_TABLE_PX)  # a paper-like table: every row in view
    frame = metrics_frame(rows, with_source)
    st.dataframe(frame, column_config=config, hide_index=True, key=key, height=height, placeholder="")


def show_definitions() -> None:
    """One line per metric, as the Compare page's help."""
    lines = [f"- **{title}**: {md_escape(DEFINITIONS[key])}" for title, key, _ in COLUMNS]
    st.markdown("\n".join(lines))


def explore_state(example: Example, dataset: str, level: str, colour_by: str) -> ExploreState:
    """Explore showing the example: the summary, coloured by `colour_by`, with the unit selected
    (`sentence` is Explore's 1-based sentence number; `unit` names any unit by id)."""
    sentence = example.position + 1 if level == "sentence" and example.unit_id is not None else None
    detail = DetailState(summary=example.summary_id, unit=example.unit_id, sentence=sentence)
    return ExploreState(dataset=dataset, filters=Filters(source=colour_by), detail=detail)


def show_examples(examples: list[Example], dataset: str, level: str, reference: str, compared: SourceChoice) -> None:
    """The units of one cell, each with a link that opens it in Explore (unit selected), coloured by
    the compared source, or by the reference when the compared source gives only scores."""
    if not examples:
        st.info("No units in this cell.")
        return
    source = compared.name
    colour_by = reference if compared.mode == "score" else source
    if colour_by != source:
        st.caption(md_escape(f"{source} gives only scores here, so Explore opens coloured by {reference}'s labels."))
    if len(examples) > EXAMPLES_SHOWN:
        st.caption(f"Showing the first {EXAMPLES_SHOWN} of {len(examples):,} units (ordered by summary).")
    for example in examples[:EXAMPLES_SHOWN]:
        with st.container(border=True):
            where = (
                example.summary_id
                if example.position is None
                else f"{example.summary_id}, {level} {example.position + 1}"
            )
            st.page_link(
                **urlstate.link(urlstate.EXPLORE, explore_state(example, dataset, level, colour_by)),
                label=f"Open in Explore: {md_escape(where)}",
                icon=urlstate.EXPLORE.icon,
            )
            st.text(example.text)
            compared = example.compared_label or ""
            if example.score is not None:
                compared = f"{compared} score {example.score:.4f}".strip()
            st.text(f"{reference}: {example.reference_label or ''}    ·    {source}: {compared}")
            for who, explanation in (
                (reference, example.reference_explanation),
                (source, example.compared_explanation),
            ):
                if explanation:
                    st.text(f"{who} explains: {explanation}")
