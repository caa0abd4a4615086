"""The Errors page's tables as escaped HTML: a heatmap (each cell a count, its %, shaded by the %,
and a link to Explore on exactly those units) and the recall table. Every label and value is
escaped with `html.escape(quote=True)`; links are relative URLs built by `urlstate.href`, escaped
too. Shown with `st.html`, which strips scripts and handlers as well."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from components.charts import blue

_STYLE = (
    ".fl-hm{font-size:0.875rem;overflow-x:auto}"
    ".fl-hm table{border-collapse:collapse}"
    ".fl-hm th{font-weight:400;color:#4a5360;padding:2px 8px;text-align:right;overflow-wrap:anywhere}"
    ".fl-hm thead th{text-align:center;vertical-align:bottom;overflow-wrap:normal}"
    ".fl-hm tbody th,.fl-hm thead th:first-child{white-space:nowrap}"
    ".fl-hm td{text-align:center;padding:0.45rem 0.6rem;border:2px solid #fff;line-height:1.25;min-width:5.5rem}"
    ".fl-hm td a{color:inherit;font-weight:700;text-decoration:underline}"
    ".fl-hm-pct{font-size:0.8rem}"
    ".fl-hm-note{color:#6b7480;margin-top:0.25rem}"
)


@dataclass(frozen=True)
class Cell:
    """One cell: the units counted, their share in % (None: no denominator), and the Explore link."""

    count: int
    pct: float | None
    href: str | None


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _cell(cell: Cell | None, pct_words: str) -> str:
    if cell is None:
        return "<td></td>"
    share = cell.pct if cell.pct is not None else 0.0
    background, colour = blue(share)
    count = f"{cell.count:,}"
    if cell.href is not None:
        count = f'<a href="{_esc(cell.href)}" target="_self">{count}</a>'
    pct = "" if cell.pct is None else f'<br><span class="fl-hm-pct">{cell.pct:.1f}%{_esc(pct_words)}</span>'
    return f'<td style="background:{background};color:{colour}">{count}{pct}</td>'


def heatmap_html(
    rows: Sequence[str],
    columns: Sequence[str],
    cell: Callable[[str, str], Cell | None],
    corner: str,
    note: str = "",
    pct_words: str = "",
    column_name: Callable[[str], str] = str,
) -> str:
    """Rows by columns; `cell(row, column)` gives each cell (None: empty). `corner` names the rows."""
    head = "".join(f"<th>{_esc(column_name(c))}</th>" for c in columns)
    body = "".join(
        f"<tr><th>{_esc(row)}</th>{''.join(_cell(cell(row, c), pct_words) for c in columns)}</tr>" for row in rows
    )
    return (
        f'<style>{_STYLE}</style><div class="fl-hm"><table><thead><tr><th>{_esc(corner)}</th>{head}</tr></thead>'
        f'<tbody>{body}</tbody></table><div class="fl-hm-note">{_esc(note)}</div></div>'
    )
