"""A run's failures on the Runs page: the provider and base URL they name (once, above the list), the
count of each cause with what it means and what asks again, then each failure grouped by cause with its
unit in context (document, generator, the sentence or claim text) and a link that opens it in Explore.

Everything is escaped (`html.escape`) into one `st.html` table, so a long reason wraps instead of being
cut off in a narrow column; links are relative URLs built by `urlstate.href`, escaped too."""

from __future__ import annotations

import html
from collections.abc import Sequence

import streamlit as st

from components import urlstate
from components.markdown import md_with_code
from faithlens.llm.runs import causes
from faithlens.llm.runs.spec import RunSpec
from faithlens.views.run_failures import Breakdown, InContext

_STYLE = (
    ".fl-rf{font-size:0.875rem;overflow-x:auto}"
    ".fl-rf table{border-collapse:collapse;width:100%}"
    ".fl-rf th{font-weight:600;text-align:left;padding:4px 8px;border-bottom:1px solid #d5d9e0}"
    ".fl-rf td{padding:4px 8px;border-bottom:1px solid #eef0f3;vertical-align:top;overflow-wrap:break-word}"
    ".fl-rf td.fl-rf-n{text-align:right;white-space:nowrap}"
    ".fl-rf td.fl-rf-cause{white-space:nowrap}"
    ".fl-rf td.fl-rf-text{min-width:10rem}"
    ".fl-rf td.fl-rf-detail{min-width:8rem}"
    ".fl-rf tr.fl-rf-group td{background:#f4f6f9;font-weight:600;border-bottom:1px solid #d5d9e0}"
    ".fl-rf .fl-rf-quiet{color:#5b6470;font-weight:400}"
    ".fl-rf .fl-rf-id{color:#5b6470;font-size:0.75rem;overflow-wrap:anywhere}"
    ".fl-rf a{white-space:nowrap}"
)


def _esc(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def provider_line(breakdown: Breakdown, spec: RunSpec) -> None:
    """The endpoint the failures name (provider and base URL), once: the rows then start with their cause."""
    configured = f"{spec.provider} at {spec.base_url}" if spec.base_url else spec.provider
    named = " and ".join(breakdown.endpoints) or configured
    st.markdown(md_with_code(f"Asked {named}, model {spec.model}."))


def counts(breakdown: Breakdown) -> None:
    """One row per cause that occurs: how many items, what it means, what asks again."""
    rows = "".join(
        f'<tr data-cause="{_esc(c.cause.name)}"><td class="fl-rf-cause">{_esc(c.cause.name)}</td>'
        f'<td class="fl-rf-n">{c.items:,}</td>'
        f"<td>{_esc(c.cause.meaning)}</td><td>{_esc(c.remedy)}</td></tr>"
        for c in breakdown.counts
    )
    head = "<tr><th>cause</th><th>items</th><th>what it means</th><th>what asks again</th></tr>"
    st.html(f'<style>{_STYLE}</style><div class="fl-rf fl-rf-counts"><table><thead>{head}</thead>{rows}</table></div>')


def _columns(repeats: bool) -> list[str]:
    return ["unit", *(["repeat"] if repeats else []), "document, generator", "text", "detail"]


def _cells(row: InContext, repeats: bool) -> str:
    failure = row.failure
    unit = _esc(row.where)
    if row.explore is not None:
        href = _esc(urlstate.href(urlstate.EXPLORE, row.explore))
        unit = f'<a href="{href}" target="_self" title="Open in Explore">{unit}</a>'
    unit += f'<br><span class="fl-rf-id">{_esc(failure.target_id)}</span>'
    made = f'{_esc(row.document)}<br><span class="fl-rf-quiet">{_esc(row.generator)}</span>'
    detail = _esc(failure.detail)
    if row.attempts is not None:
        tries = f"{row.attempts:,} attempt" + ("s" if row.attempts != 1 else "")
        detail += f'<br><span class="fl-rf-quiet fl-rf-attempts">{tries} in all</span>'
    cells = [("", unit), *([("fl-rf-n", _esc(failure.repeat + 1))] if repeats else []), ("", made)]
    cells += [("fl-rf-text", _esc(row.text)), ("fl-rf-detail", detail)]
    return "".join(f'<td class="{css}">{cell}</td>' if css else f"<td>{cell}</td>" for css, cell in cells)


def listing(rows: Sequence[InContext], failed: int, repeats: bool, shown_limit: int) -> None:
    """The failures grouped by cause, each with its unit in context and its Explore link."""
    if not rows:
        return
    if failed > len(rows):
        st.caption(f"The first {len(rows):,} of {failed:,} failed items, by cause.")
    columns = _columns(repeats)
    body, current = [], None
    for row in rows[:shown_limit]:
        cause = row.failure.cause
        if cause != current:
            current = cause
            title = f'{_esc(cause)} <span class="fl-rf-quiet">{_esc(causes.BY_NAME[cause].meaning)}</span>'
            body.append(
                f'<tr class="fl-rf-group" data-cause="{_esc(cause)}"><td colspan="{len(columns)}">{title}</td></tr>'
            )
        body.append(f'<tr data-cause="{_esc(cause)}">{_cells(row, repeats)}</tr>')
    head = "".join(f"<th>{_esc(name)}</th>" for name in columns)
    st.html(
        f'<style>{_STYLE}</style><div class="fl-rf fl-rf-list"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def section(breakdown: Breakdown, rows: Sequence[InContext], failed: int, spec: RunSpec, shown_limit: int) -> None:
    """The whole failures section of a run (stored or live): nothing when there is nothing to say."""
    if not breakdown.counts:
        return
    st.markdown(f"**Failures by cause** ({failed:,} failed)" if failed else "**Not done, by cause**")
    provider_line(breakdown, spec)
    counts(breakdown)
    listing(rows, failed, spec.repeats > 1, shown_limit)
