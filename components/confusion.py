"""Confusion-matrix heatmaps, metric tables and drill-down examples for the Compare page.

The reference is always on the rows and the compared source on the columns, faithful first.
Source names come from the data (user imports name their own sources), so they are HTML-escaped
before they reach Plotly (which renders a subset of HTML) and Markdown-escaped in labels.
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components import urlstate
from components.markdown import md_escape
from faithlens.analysis.metrics import CLASSES, DEFINITIONS
from faithlens.filters import Filters
from faithlens.views.compare import ALL, Example, MetricRow
from faithlens.views.states import DetailState, ExploreState

EXAMPLES_SHOWN = 50
ROW_PX, MAX_TABLE_PX = 35, 1200
_CONFIG = {"displaylogo": False, "displayModeBar": False}

# Column title, metric key, number format; help text comes from metrics.DEFINITIONS.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("n", "n", "%d"),
    ("Cohen's κ", "kappa", "%.2f"),
    ("% faithful", "pct_faithful", "%.1f"),
    ("Precision (faithful)", "precision", "%.2f"),
    ("Recall (faithful)", "recall", "%.2f"),
    ("% easy detected", "pct_easy_detected", "%.1f"),
    ("% hard detected", "pct_hard_detected", "%.1f"),
    ("Balanced acc. %", "balanced_accuracy", "%.1f"),
    ("F1 faithful", "f1_faithful", "%.2f"),
    ("F1 unfaithful", "f1_unfaithful", "%.2f"),
    ("Macro-F1", "macro_f1", "%.2f"),
    ("Threshold", "threshold", "%.4f"),
)


def heatmap(matrix: tuple[tuple[int, int], tuple[int, int]], reference: str, compared: str, title: str) -> go.Figure:
    """Counts and row percentages; colour is the row percentage so imbalanced rows stay readable."""
    counts = [list(line) for line in matrix]
    shares = [[100.0 * n / sum(line) if sum(line) else 0.0 for n in line] for line in counts]
    text = [
        [f"{n:,}<br>{share:.0f}% of row" for n, share in zip(line, share_line, strict=True)]
        for line, share_line in zip(counts, shares, strict=True)
    ]
    ref, cmp = html.escape(reference, quote=True), html.escape(compared, quote=True)
    cell = go.Heatmap(
        z=shares,
        x=list(CLASSES),
        y=list(CLASSES),
        text=text,
        texttemplate="%{text}",
        customdata=counts,
        hovertemplate=f"{ref}: %{{y}}<br>{cmp}: %{{x}}<br>%{{customdata:,}} units (%{{z:.1f}}% of row)<extra></extra>",
        colorscale="Blues",
        zmin=0,
        zmax=100,
        showscale=False,
    )
    layout = go.Layout(
        title={"text": html.escape(title, quote=True), "font": {"size": 13}},
        height=260,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"title": {"text": f"{cmp} says", "font": {"size": 12}}},
        yaxis={"title": {"text": f"{ref} says", "font": {"size": 12}}, "autorange": "reversed"},
    )
    return go.Figure(data=[cell], layout=layout)


@st.cache_resource(show_spinner=False, max_entries=1024)
def _cached_heatmap(
    matrix: tuple[tuple[int, int], tuple[int, int]], reference: str, compared: str, title: str
) -> go.Figure:
    """Building a figure costs more than drawing it; warm reruns reuse it (Streamlit does not mutate it)."""
    return heatmap(matrix, reference, compared, title)


def show_heatmap(row: MetricRow, reference: str, title: str, key: str) -> None:
    figure = _cached_heatmap(row.confusion, reference, row.source, title)
    st.plotly_chart(figure, key=key, config=_CONFIG, width="stretch")
    st.caption(md_escape(summary_line(row)))


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
    """One line per row, in the papers' column order."""
    records = []
    for row in rows:
        values = {**row.metrics.as_dict(), "threshold": row.threshold}
        record = {"Source": row.source} if with_source else {}
        record["Split"] = row.split
        if row.group != ALL or any(r.group != ALL for r in rows):
            record["Topic"] = row.group
        record.update({title: values[key] for title, key, _ in COLUMNS})
        record["Left out"] = row.excluded
        records.append(record)
    return pd.DataFrame.from_records(records)


def show_metrics(rows: list[MetricRow], with_source: bool, key: str) -> None:
    """The metrics table; every column header carries its one-line definition as help."""
    config: dict[str, object] = {
        title: st.column_config.NumberColumn(title, help=DEFINITIONS[key], format=fmt) for title, key, fmt in COLUMNS
    }
    config["Left out"] = st.column_config.NumberColumn(
        "Left out", help="Units both sources label that the mapping (or a missing score) leaves out.", format="%d"
    )
    height = min(ROW_PX * (len(rows) + 1) + 3, MAX_TABLE_PX)  # a paper-like table: every row in view
    st.dataframe(metrics_frame(rows, with_source), column_config=config, hide_index=True, key=key, height=height)


def show_definitions() -> None:
    """One line per metric, as the Compare page's help."""
    lines = [f"- **{title}**: {md_escape(DEFINITIONS[key])}" for title, key, _ in COLUMNS]
    st.markdown("\n".join(lines))


def explore_state(example: Example, dataset: str, level: str, source: str) -> ExploreState:
    """Explore showing the example: the summary, coloured by the compared source, with the unit
    selected (`sentence` is Explore's 1-based sentence number; `unit` names any unit by id)."""
    sentence = example.position + 1 if level == "sentence" and example.unit_id is not None else None
    detail = DetailState(summary=example.summary_id, unit=example.unit_id, sentence=sentence)
    return ExploreState(dataset=dataset, filters=Filters(source=source), detail=detail)


def show_examples(examples: list[Example], dataset: str, level: str, reference: str, source: str) -> None:
    """The units of one cell, each with a link that opens it in Explore (unit selected)."""
    if not examples:
        st.info("No units in this cell.")
        return
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
                **urlstate.link(urlstate.EXPLORE, explore_state(example, dataset, level, source)),
                label=f"Open in Explore: {md_escape(where)}",
                icon=":material/open_in_new:",
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
