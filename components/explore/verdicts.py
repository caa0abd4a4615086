"""Explore's "Every label source on this summary": a row per label source (kind, summary label, raw
value, score, its unit labels counted: the dataset's claims apart from each extracted claim set) and
each source's reasoning, folded, as one escaped HTML element. A handful of rows needs no data grid,
and a grid plus an expander per reasoning made every visit to Explore slower to draw. Every value is
escaped (`faithlens.views.highlight.esc`); `st.html` sanitises again."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from faithlens.views.detail import SourceVerdict
from faithlens.views.highlight import esc

_STYLE = (
    ".fl-vt-title{margin:0 0 0.4rem}"
    ".fl-vt{overflow-x:auto}"
    ".fl-vt table{border-collapse:collapse;font-size:0.875rem;width:100%}"
    ".fl-vt th{background:#f3f5f8;font-weight:600;text-align:left;padding:4px 10px;white-space:nowrap}"
    ".fl-vt td{padding:3px 10px;border-top:1px solid #e6e9ee;white-space:nowrap}"
    ".fl-vt .fl-num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".fl-vt-bar{display:inline-block;width:4rem;height:0.45rem;margin-right:0.4rem;border-radius:0.25rem;"
    "background:#e6e9ee;vertical-align:middle;overflow:hidden}"
    ".fl-vt-bar span{display:block;height:100%;background:#1f5f8b}"
    "details.fl-why{margin-top:0.5rem;border:1px solid #d5dbe3;border-radius:0.5rem}"
    "details.fl-why summary{padding:0.5rem 0.75rem;font-size:0.875rem;cursor:pointer}"
    "details.fl-why div{padding:0 0.75rem 0.75rem;white-space:pre-wrap;overflow-wrap:anywhere;font-size:0.9rem}"
)
NUMBERS = frozenset(("score", "score scale"))


def _row(v: SourceVerdict) -> dict[str, object]:
    """One source's values by column; None where it has none."""
    scaled = v.score if v.score is not None and v.label is None and 0 <= v.score <= 1 else None
    sentences = None if v.unfaithful_sentences is None else f"{v.unfaithful_sentences} of {v.labelled_sentences}"
    claims = None if v.unfaithful_claims is None else f"{v.unfaithful_claims} of {v.labelled_claims}"
    extracted = "; ".join(f"{c.unfaithful} of {c.labelled} ({c.claim_set})" for c in v.extracted) or None
    return {
        "source": v.source,
        "kind": v.kind,
        "summary label": v.label,
        "raw": v.raw_value,
        "score": v.score,
        "score scale": scaled,
        "unfaithful sentences": sentences,
        "unfaithful claims": claims,
        "unfaithful extracted claims": extracted,
        "reasoning": "below" if v.explanation else None,
    }


def _cell(column: str, value: object) -> str:
    if value is None:
        return "<td></td>"
    if column == "score":
        return f'<td class="fl-num">{value:.3g}</td>'
    if column == "score scale":  # a bar like a progress column's, from a number (never dataset text)
        bar = f'<span class="fl-vt-bar"><span style="width:{100 * value:.0f}%"></span></span>'
        return f'<td class="fl-num">{bar}{value:.2f}</td>'
    return f"<td>{esc(value)}</td>"


def table_html(verdicts: Sequence[SourceVerdict]) -> str:
    """The sources' table (a column no source fills is left out), then each reasoning in a closed `<details>`."""
    rows = [_row(v) for v in verdicts]
    columns = [name for name in (rows[0] if rows else {}) if any(row[name] is not None for row in rows)]
    head = "".join(f'<th class="fl-num">{esc(c)}</th>' if c in NUMBERS else f"<th>{esc(c)}</th>" for c in columns)
    body = "".join(f"<tr>{''.join(_cell(c, row[c]) for c in columns)}</tr>" for row in rows)
    reasons = "".join(
        f'<details class="fl-why"><summary>{esc(v.source)}: {esc(v.label or "no label")} · reasoning</summary>'
        f"<div>{esc(v.explanation)}</div></details>"
        for v in verdicts
        if v.explanation
    )
    return (
        f'<style>{_STYLE}</style><p class="fl-vt-title"><b>Every label source on this summary</b></p>'
        f'<div class="fl-vt"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{reasons}'
    )


def show(verdicts: Sequence[SourceVerdict]) -> None:
    """Draw the section."""
    st.html(table_html(verdicts))
