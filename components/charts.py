"""Plotly figures for the core's BarFigure/ScoreFigure, and the block that shows one on a page:
title, chart (numbers on hover), one caption line, the same figures as a table, and a CSV download.
Also the confusion matrix as a coloured HTML table (`matrix_html`): a page of a dozen matrices
mounts in a fraction of the time a dozen Plotly figures take, and the counts stay plain text.

Dataset-derived strings (generator, source names) are HTML-escaped before they reach Plotly,
whose text rendering understands a subset of HTML, or the matrix markup (shown with `st.html`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

import plotly.graph_objects as go
import streamlit as st

from components.markdown import md_escape
from faithlens.analysis.figures import BarFigure, ScoreFigure, Table, round1
from faithlens.vocab import VERDICTS

if TYPE_CHECKING:  # imported by the figures that carry them, not on the Overview's cold path
    from faithlens.analysis.beside import Beside
    from faithlens.analysis.published import Compared

# Fixed colours for the shared vocabulary, so a verdict looks the same on every chart.
VERDICT_COLOURS = {
    "faithful": "#2e7d5b",
    "unfaithful": "#c0392b",
    "partial": "#e0a526",
    "unverifiable": "#7f8c99",
    "ambiguous": "#8e6bb8",
    "n/a": "#c9ced6",
}
SERIES_COLOURS = (
    "#1f5f8b",
    "#6fa8d6",
    "#b5542d",
    "#e8a27c",
    "#4a7f3b",
    "#a3c98f",
    "#6d4c8d",
    "#b9a3d0",
    "#8c6d1f",
    "#d9c27a",
    "#2f7f7a",
    "#93c9c4",
)
_CONFIG = {"displaylogo": False}
_LAYOUT = {
    "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
    "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "title": {}, "traceorder": "normal"},
    "uniformtext": {"minsize": 9, "mode": "hide"},
    "hoverlabel": {"namelength": -1},
}


def _escape(values: object) -> list[str]:
    return [html.escape(str(value), quote=True) for value in values]


def _verdict_order(name: str) -> int:
    """Verdicts in vocabulary order (faithful first); other series keep their order (stable sort)."""
    return VERDICTS.index(name) if name in VERDICTS else len(VERDICTS)


def _unchecked(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain dicts, without Plotly's check of every property against its schema: the
    check costs tens of milliseconds a chart on the server thread that also sends the browser its
    chart code, which a cold first visit waits for. The dicts use Plotly's own names (`marker.color`,
    no `None` values); tests/core/test_chart_specs.py builds every figure checked and compares."""
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def bar_chart(figure: BarFigure) -> go.Figure:
    """Stacked shares: one horizontal bar per group summing to 100%. Rates: vertical bars per
    group, one per series side by side, as the paper's table columns."""
    bars = list(figure.bars.records())
    series_names = sorted(dict.fromkeys(bar["series"] for bar in bars), key=_verdict_order)
    groups = _escape(dict.fromkeys(bar["group"] for bar in bars))
    value, category = ("x", "y") if figure.stacked else ("y", "x")
    data = []
    for index, name in enumerate(series_names):
        part = [bar for bar in bars if bar["series"] == name]
        colour = VERDICT_COLOURS.get(name) if figure.stacked else None
        data.append(
            {
                "customdata": [[bar["n"], bar["total"]] for bar in part],
                "hovertemplate": f"%{{{category}}}<br>%{{fullData.name}}: <b>%{{{value}:.1f}}%</b>"
                " (%{customdata[0]:,} of %{customdata[1]:,})<extra></extra>",
                "insidetextanchor": "middle",
                "marker": {"color": colour or SERIES_COLOURS[index % len(SERIES_COLOURS)]},
                "name": html.escape(name, quote=True),
                "orientation": "h" if figure.stacked else "v",
                "textposition": "inside" if figure.stacked else "outside",
                "texttemplate": f"%{{{value}:.1f}}",
                category: _escape(bar["group"] for bar in part),
                value: [round1(bar["percent"]) for bar in part],
                "type": "bar",
            }
        )
    value_axis: dict[str, object] = {"title": {"text": figure.axis}, "ticksuffix": "%"}
    if figure.stacked:
        category_axis = {"categoryorder": "array", "categoryarray": groups[::-1], "automargin": True}
        layout = {"barmode": "stack", "height": 120 + 40 * len(groups), "xaxis": value_axis | {"range": [0, 100]}}
        layout["yaxis"] = category_axis
    else:
        top = max((bar["percent"] for bar in bars), default=100.0)
        category_axis = {"categoryorder": "array", "categoryarray": groups, "automargin": True}
        value_axis["range"] = [0, min(100.0, top * 1.15 + 2)]
        layout = {"barmode": "group", "height": 420, "xaxis": category_axis, "yaxis": value_axis}
    return _unchecked(data, {**layout, "showlegend": True, **_LAYOUT})


def score_chart(figure: ScoreFigure) -> go.Figure:
    """One box per score-only (source, level), drawn from the quartiles the core computed."""
    table = figure.table
    names = _escape(f"{s} · {lv}" for s, lv in zip(table.column("source"), table.column("level"), strict=True))
    box = {
        "lowerfence": table.column("min"),
        "marker": {"color": SERIES_COLOURS[0]},
        "mean": table.column("mean"),
        "median": table.column("median"),
        "name": "score",
        "orientation": "h",
        "q1": table.column("q1"),
        "q3": table.column("q3"),
        "upperfence": table.column("max"),
        "y": names,
        "type": "box",
    }
    score_axis: dict[str, object] = {"title": {"text": "score"}}
    if max(table.column("max")) <= 1:
        score_axis["range"] = [0, 1]
    layout = {
        "height": 120 + 50 * len(table),
        "xaxis": score_axis,
        "yaxis": {"automargin": True, "categoryorder": "array", "categoryarray": names[::-1]},
        "showlegend": False,
        **_LAYOUT,
    }
    return _unchecked([box], layout)


@st.cache_resource(show_spinner=False, max_entries=64)
def _cached_chart(_figure: BarFigure | ScoreFigure, cache_key: tuple[str, ...], figure_key: str) -> go.Figure:
    """Build a figure once per data version: Plotly validates every property it is given, which
    costs tens of milliseconds a chart, while showing a built figure only serialises it. The
    figure is shared by every session and never mutated."""
    return bar_chart(_figure) if isinstance(_figure, BarFigure) else score_chart(_figure)


# ColorBrewer "Blues": a cell's colour is its share of the row, so imbalanced rows stay readable.
_BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
# One stylesheet for a grid of matrices; only a cell's colour is inline. Class names come from
# this fixed list, and no dataset string goes into an attribute.
_MATRIX_STYLE = (
    ".fl-cm-grid{display:grid;gap:1rem 1.5rem}"
    ".fl-cm{font-size:0.875rem;min-width:0}"
    ".fl-cm-title{font-weight:600;margin-bottom:0.25rem;overflow-wrap:anywhere}"
    ".fl-cm table{border-collapse:collapse;width:100%;table-layout:fixed}"
    ".fl-cm th{font-weight:400;color:#4a5360;padding:2px 6px;overflow-wrap:anywhere}"
    ".fl-cm th.fl-cm-side{width:1.6rem;writing-mode:vertical-rl;transform:rotate(180deg);text-align:center}"
    ".fl-cm th.fl-cm-row{width:6.5rem;text-align:right}"
    ".fl-cm td{text-align:center;padding:0.9rem 0.25rem;border:2px solid #fff;line-height:1.3}"
    ".fl-cm-count{font-size:1rem;font-weight:700}"
    ".fl-cm-note{color:#6b7480;margin-top:0.25rem}"
)


def blue(share: float) -> tuple[str, str]:
    """Background and text colour for a cell holding `share` percent of its row."""
    step = min(len(_BLUES) - 1, max(0, round(share / 100 * (len(_BLUES) - 1))))
    return _BLUES[step], "#ffffff" if step >= 5 else "#1b1f24"


def matrix_html(
    counts: Sequence[Sequence[int]],
    classes: Sequence[str],
    row_title: str,
    column_title: str,
    title: str,
    note: str = "",
) -> str:
    """A confusion matrix as an escaped HTML table: `row_title` on the rows, `column_title` on the
    columns (both over `classes`, in order); each cell holds its count and its share of the row,
    coloured by that share. `note` is a line under the table. Show it inside `matrix_grid_html`."""
    esc = partial(html.escape, quote=True)
    lines = []
    for index, (name, line) in enumerate(zip(classes, counts, strict=True)):
        total = sum(line)
        side = f'<th class="fl-cm-side" rowspan="{len(classes)}">{esc(row_title)}</th>' if index == 0 else ""
        cells = []
        for n in line:
            share = 100.0 * n / total if total else 0.0
            background, colour = blue(share)
            cells.append(
                f'<td style="background:{background};color:{colour}">'
                f'<span class="fl-cm-count">{n:,}</span><br>{share:.0f}% of row</td>'
            )
        lines.append(f'<tr>{side}<th class="fl-cm-row">{esc(name)}</th>{"".join(cells)}</tr>')
    corner = '<th class="fl-cm-side"></th><th class="fl-cm-row"></th>'
    head = "".join(f"<th>{esc(name)}</th>" for name in classes)
    return (
        f'<div class="fl-cm"><div class="fl-cm-title">{esc(title)}</div><table>'
        f'<tr>{corner}<th colspan="{len(classes)}">{esc(column_title)}</th></tr>'
        f"<tr>{corner}{head}</tr>{''.join(lines)}</table>"
        f'<div class="fl-cm-note">{esc(note)}</div></div>'
    )


def matrix_grid_html(blocks: Sequence[str], columns: int) -> str:
    """Matrices from `matrix_html`, `columns` to a row, with their stylesheet: one element for the
    page instead of a column layout holding a figure and a caption per matrix."""
    return (
        f'<style>{_MATRIX_STYLE}</style><div class="fl-cm-grid" '
        f'style="grid-template-columns:repeat({columns},minmax(0,1fr))">{"".join(blocks)}</div>'
    )


# A figure's table: small (a row per generator or source), so plain HTML, which needs neither pandas
# on the server nor the data grid in the browser (the Overview's first chart is drawn sooner).
_TABLE_STYLE = (
    ".fl-table{max-height:32rem;overflow:auto;margin-bottom:0.25rem}"
    ".fl-table table{border-collapse:collapse;font-size:0.875rem}"
    ".fl-table th{position:sticky;top:0;background:#f3f5f8;font-weight:600;text-align:left;padding:4px 12px}"
    ".fl-table td{padding:3px 12px;border-top:1px solid #e6e9ee;overflow-wrap:break-word}"
    ".fl-table .fl-num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".fl-table td:first-child{min-width:12rem}"
)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _decimals(values: list[object]) -> int:
    """Decimals to show a column's fractional numbers with: as many as they have, at most 4 (the CSV
    keeps all), so a column of percentages reads 85.0 beside 37.5."""
    found = [len(repr(v).partition(".")[2]) for v in values if isinstance(v, float)]
    return min(4, max(found, default=0))


def _cell(value: object, decimals: int = 0, tag: str = "td") -> str:
    """One escaped cell: numbers right-aligned, whole ones with thousands separators; None blank."""
    if value is None:
        return f"<{tag}></{tag}>"
    if _is_number(value):
        return f'<{tag} class="fl-num">{value:,.{decimals if isinstance(value, float) else 0}f}</{tag}>'
    return f"<{tag}>{html.escape(str(value), quote=True)}</{tag}>"


def table_html(table: Table) -> str:
    """The table as escaped HTML with its stylesheet; a long one scrolls under a sticky header.
    A column holding numbers has its header right-aligned above them."""
    columns = [table.column(name) for name in table.columns]
    decimals = [_decimals(values) for values in columns]
    head = "".join(
        f'<th class="fl-num">{html.escape(name, quote=True)}</th>'
        if any(_is_number(value) for value in values)
        else _cell(name, tag="th")
        for name, values in zip(table.columns, columns, strict=True)
    )
    body = "".join(
        f"<tr>{''.join(_cell(value, places) for value, places in zip(row, decimals, strict=True))}</tr>"
        for row in table.rows
    )
    return f'<style>{_TABLE_STYLE}</style><div class="fl-table"><table><tr>{head}</tr>{body}</table></div>'


def plot(figure: BarFigure | ScoreFigure, cache_key: tuple[str, ...]) -> None:
    """The figure's chart, built once per `cache_key` and `figure.key` (which must name its choices)."""
    st.plotly_chart(_cached_chart(figure, cache_key, figure.key), key=f"chart_{figure.key}", config=_CONFIG)


def show_figure(figure: BarFigure | ScoreFigure, dataset: str, cache_key: tuple[str, ...]) -> None:
    """Title, chart, caption line, table and its CSV download for one figure.

    `cache_key` (db path, data version, dataset) identifies the data the figure was computed from.
    """
    st.subheader(md_escape(figure.title))
    plot(figure, cache_key)
    st.caption(md_escape(figure.caption))
    bar = isinstance(figure, BarFigure)
    for note in figure.notes if bar else ():
        st.caption(md_escape(note))
    _table_and_csv(figure.table, f"{dataset}_{figure.key}.csv", f"csv_{figure.key}")
    if bar and figure.beside is not None:
        show_beside(figure.beside, f"{dataset}_{figure.key}_vs_paper.csv", f"csv_beside_{figure.key}")


def csv_download(table: Table, file_name: str, key: str) -> None:
    """A table's CSV download button. The CSV is written on click (on a worker thread; it reads only
    this table): none is built and uploaded to the browser's media store for every figure on every run."""
    st.download_button(
        "Download CSV",
        data=lambda: table.to_csv().encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


def _table_and_csv(table: Table, file_name: str, key: str) -> None:
    st.html(table_html(table))
    csv_download(table, file_name, key)


# The paper beside ours: each printed figure's cell holds it as printed and, under it, ours; green
# when ours rounds to it, amber when it does not, grey when we have none (the Reproduced figures page's
# colours). Every text is escaped.
_BESIDE_STYLE = (
    ".fl-bs{overflow-x:auto;margin-bottom:0.25rem}"
    ".fl-bs table{border-collapse:collapse;font-size:0.85rem}"
    ".fl-bs th{background:#f3f5f8;font-weight:600;padding:4px 8px;text-align:right;white-space:nowrap}"
    ".fl-bs td{padding:3px 8px;border-top:1px solid #e6e9ee;text-align:right;white-space:nowrap;"
    "vertical-align:top;font-variant-numeric:tabular-nums}"
    ".fl-bs .fl-bs-text{text-align:left}"
    ".fl-bs td.fl-bs-text{white-space:normal;min-width:6rem;max-width:13rem}"
    ".fl-bs td.fl-bs-why{text-align:left;white-space:normal;min-width:16rem;max-width:30rem;color:#3d4450}"
    ".fl-bs td.fl-bs-ok{background:#e8f5ec}.fl-bs td.fl-bs-diff{background:#fdf0dc}"
    ".fl-bs td.fl-bs-none{background:#f1f2f4;color:#6b7480}"
    ".fl-bs small{display:block;font-weight:400;color:#4a5360}"
)
_BESIDE_CLASS = {"matches": "fl-bs-ok", "differs": "fl-bs-diff"}
"""A compared figure's status (`faithlens.analysis.published`: matches, differs) -> its cell's class."""


def _beside_cell(cell: Compared) -> str:
    esc = partial(html.escape, quote=True)
    if cell.ours is None:
        return f'<td class="fl-bs-none">{esc(cell.paper.text)}<small>no figure of ours</small></td>'
    places = min(cell.paper.decimals + 1, 4)
    ours = f"{cell.ours:,.{places}f}"
    note = f"ours {ours} ✓" if cell.status == "matches" else f"ours {ours} · Δ {cell.difference:+,.{places}f}"
    return f'<td class="{_BESIDE_CLASS[cell.status]}">{esc(cell.paper.text)}<small>{esc(note)}</small></td>'


def beside_html(beside: Beside) -> str:
    """The paper's rows beside ours as one escaped table: a row per printed row, a cell per printed
    figure (the paper's, then ours), the row's status and why it differs."""
    esc = partial(html.escape, quote=True)
    names = dict(beside.headings)
    head = "".join(f"<th>{esc(heading)}</th>" for _key, heading in beside.headings)
    rows = []
    for row in beside.rows:
        cells = {cell.column: _beside_cell(cell) for cell in row.compared}
        figures = "".join(cells.get(key, "<td></td>") for key, _heading in beside.headings)
        rows.append(
            f'<tr><td class="fl-bs-text">{esc(row.paper_row)}</td><td class="fl-bs-text">{esc(row.ours_is)}</td>'
            f'{figures}<td class="fl-bs-text">{esc(row.status_words())}</td>'
            f'<td class="fl-bs-why">{esc(row.why(names))}</td></tr>'
        )
    return (
        f'<style>{_BESIDE_STYLE}</style><div class="fl-bs"><table><tr><th class="fl-bs-text">paper row</th>'
        f'<th class="fl-bs-text">ours</th>{head}<th class="fl-bs-text">status</th><th class="fl-bs-text">why</th>'
        f"</tr>{''.join(rows)}</table></div>"
    )


def show_beside(beside: Beside, file_name: str, key: str) -> None:
    """The paper's printed figures beside ours (matches / differs and why), its CSV, then the evidence."""
    st.markdown(f"**Beside the paper: {md_escape(beside.reference)}**")
    st.html(beside_html(beside))
    table = beside.table()
    st.download_button(
        "Download CSV",
        data=lambda: table.to_csv().encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )
    if beside.notes:
        st.markdown("\n".join(f"- {md_escape(note)}" for note in beside.notes))
