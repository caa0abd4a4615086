"""Confusion-matrix heatmaps, metric tables and drill-down examples for the Compare page.

The reference is always on the rows and the compared source on the columns, faithful first.
Source names come from the data (user imports name their own sources), so they are HTML-escaped
in the matrix and table markup (`charts.matrix_html`, `metrics_html`) and Markdown-escaped in labels.
"""

from __future__ import annotations

import streamlit as st

from components import charts, urlstate
from components.markdown import md_escape
from faithlens.analysis.figures import Table
from faithlens.analysis.metrics import CLASSES, DEFINITIONS
from faithlens.filters import Filters
from faithlens.views.compare import ALL, Example, MetricRow, SourceChoice
from faithlens.views.highlight import esc
from faithlens.views.states import DetailState, ExploreState

EXAMPLES_SHOWN = 50
LEFT_OUT_HELP = "Units both sources label that the mapping (or a missing score) leaves out."
_TABLE_STYLE = (
    ".fl-mt{max-height:75rem;overflow:auto;margin-bottom:0.25rem}"
    ".fl-mt table{border-collapse:collapse;font-size:0.875rem}"
    ".fl-mt th{position:sticky;top:0;z-index:1;background:#f3f5f8;font-weight:600;padding:4px 8px;"
    "text-align:right;white-space:nowrap}"
    ".fl-mt th[title]{cursor:help;text-decoration:underline dotted #8a939e}"
    ".fl-mt td{padding:3px 8px;border-top:1px solid #e6e9ee;text-align:right;white-space:nowrap;"
    "font-variant-numeric:tabular-nums}"
    ".fl-mt .fl-mt-text{text-align:left}"
    ".fl-mt .fl-mt-pin{position:sticky;left:0;background:#fff}"
    ".fl-mt th.fl-mt-pin{z-index:2;background:#f3f5f8}"
)
"""A paper-like table: every row in view up to 75rem (then it scrolls under its header), the
source column stays in view while the table scrolls sideways."""

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


def metrics_table(rows: list[MetricRow], with_source: bool) -> Table:
    """One line per row, in the papers' column order; a metric no row has (e.g. % easy detected
    outside StorySumm, Threshold without a score source) is left out."""
    by_group = any(row.group != ALL for row in rows)
    records = []
    for row in rows:
        values = {**row.metrics.as_dict(), "threshold": row.threshold}
        record: dict[str, object] = {"Source": row.source} if with_source else {}
        record["Split"] = row.split
        if by_group:
            record["Corpus · topic"] = row.group
        record.update({title: values[key] for title, key, _ in COLUMNS})
        record["Left out"] = row.excluded
        records.append(record)
    metrics = {title for title, _, _ in COLUMNS}
    titles = [t for t in records[0] if t not in metrics or any(r[t] is not None for r in records)] if records else []
    return Table.from_records(titles, records)


_FORMATS = {title: fmt for title, _, fmt in COLUMNS} | {"Left out": "%d"}
_HELP = {title: DEFINITIONS[key] for title, key, _ in COLUMNS} | {"Left out": LEFT_OUT_HELP}


def _header(title: str) -> str:
    if title in _HELP:
        return f'<th title="{esc(_HELP[title])}">{esc(title)}</th>'
    pin = " fl-mt-pin" if title == "Source" else ""
    return f'<th class="fl-mt-text{pin}">{esc(title)}</th>'


def _metric_cell(title: str, value: object) -> str:
    """One escaped cell: a metric in its column's format, text left-aligned, a missing value empty."""
    if value is None:
        return "<td></td>"
    if title in _FORMATS:
        return f"<td>{esc(_FORMATS[title] % value)}</td>"
    pin = " fl-mt-pin" if title == "Source" else ""
    return f'<td class="fl-mt-text{pin}">{esc(value)}</td>'


def metrics_html(table: Table) -> str:
    """A `metrics_table` as escaped HTML: each metric's header carries its definition as a tooltip
    (dotted underline); missing values are empty."""
    head = "".join(_header(title) for title in table.columns)
    body = "".join(
        f"<tr>{''.join(_metric_cell(t, value) for t, value in zip(table.columns, row, strict=True))}</tr>"
        for row in table.rows
    )
    return (
        f'<style>{_TABLE_STYLE}</style><div class="fl-mt"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def definitions() -> str:
    """One Markdown list item per metric, as the Compare page's help."""
    return "\n".join(f"- **{title}**: {md_escape(DEFINITIONS[key])}" for title, key, _ in COLUMNS)


def explore_state(example: Example, dataset: str, level: str, colour_by: str) -> ExploreState:
    """Explore showing the example: the summary, coloured by `colour_by`, with the unit selected
    (`sentence` and `claim` are the numbers Explore labels them by, from 1, as this page's "claim 2"
    does; `unit` names a sentence by id too)."""
    sentence = example.position + 1 if level == "sentence" and example.unit_id is not None else None
    claim = example.position + 1 if level == "claim" and example.unit_id is not None else None
    unit = None if claim is not None else example.unit_id
    detail = DetailState(summary=example.summary_id, sentence=sentence, claim=claim, unit=unit)
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
