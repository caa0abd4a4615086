"""Read models for the Code and Sessions pages: a unit in its context (the summary around it, the source
with the stored alignment), its escaped markup, the sources a mode can show, what a non-blind session may
reveal, and a session's progress and agreement as table rows.

The work is `faithlens.coding` (sessions, events, report); nothing here writes. Every dataset, LLM and
coder string is escaped (`highlight.esc`) before it is wrapped in markup, with classes from a fixed list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from faithlens.coding import agreement, modes
from faithlens.coding.codebook import Codebook
from faithlens.coding.report import Progress, SessionAgreement
from faithlens.coding.sessions import Session
from faithlens.store import LATEST_LABEL
from faithlens.views import highlight as hl
from faithlens.vocab import GOLD

MODE_LINES = {
    "codes": "Code one unit at a time with the codebook's codes (and a note where a code asks for one).",
    "line-by-line": "StorySumm's annotators (Subbiah et al. 2024, App. D): judge every line of a summary as "
    "consistent, inconsistent or commentary, explaining each inconsistent line; the summary is unfaithful "
    "when any line is.",
    "hybrid": "StorySumm's hybrid protocol (section 3): an LLM lists possible inconsistencies; agree or disagree "
    "with each and say why, then label the summary.",
    "arm-faithfulness": "ARM (Subbiah et al., section 4.2): the claim is shown in its summary either as written "
    "or as an LLM's rewrite, at random and without saying which, and judged with the codebook.",
    "arm-preference": "ARM (section 4.2): the original claim and its rewrite as A and B in random order; which "
    "is better, and when the rewrite wins, is each point of its explanation IMPORTANT, NEUTRAL or WRONG.",
}
"""One line per protocol, from the papers, for the new-session form."""
PASSAGES_SHOWN = 3
_SOURCE_CLASSES = (".fl-doc", ".fl-passages", ".fl-list", ".fl-meta", ".fl-empty")
_LABEL_CLASSES = (".fl-label", ".fl-score", ".fl-tip", ".fl-badge", ".fl-sent")
BASE_STYLE = "\n".join(
    rule.strip()
    for rule in re.findall(r"[^{}]+\{[^{}]*\}", hl.STYLESHEET)
    if any(name in rule.split("{")[0] for name in _SOURCE_CLASSES)
    and not any(name in rule.split("{")[0] for name in _LABEL_CLASSES)
)
"""The highlight stylesheet's rules for the source text and its passages only: the coding view carries no
label colour, not even as a class name."""
CODING_STYLE = """
.flc-summary { white-space: pre-wrap; line-height: 1.65; font-size: 0.95rem; overflow-wrap: anywhere; }
.flc-summary mark.flc-unit { background: #ffe08a; box-shadow: 0 0 0 2px #c99a00; border-radius: 0.2rem; }
.flc-num { font-size: 0.7rem; vertical-align: super; color: #3b4452; margin-right: 0.15rem; }
.flc-version { padding: 0.5rem 0.7rem; border: 2px solid #1f5f8b; border-radius: 0.4rem; background: #eef4fa;
  line-height: 1.45; overflow-wrap: anywhere; margin-bottom: 0.4rem; white-space: pre-wrap; }
.flc-tag { font-weight: 700; margin-right: 0.4rem; }
"""


@dataclass(frozen=True)
class UnitInContext:
    """One unit of a session with what the coding view shows around it."""

    unit_id: str
    level: str
    summary_id: str
    text: str
    """The unit's own text: the summary's for a summary unit."""
    position: int | None
    sentences: tuple[tuple[str, str], ...]
    """The summary's sentences (unit id, text) in order; empty when it has none."""
    summary_text: str
    document_title: str | None
    document_text: str | None
    document_note: str | None
    passages: tuple[tuple[int, int, int, float], ...] = ()
    """The stored alignment of the unit (a sentence): (rank, start, end, score), best first."""


def unit_in_context(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, unit_id: str) -> UnitInContext:
    """The unit, its summary's sentences, its document and (for a sentence) its stored alignment."""
    if level == "summary":
        summary_id, text, position = unit_id, None, None
    else:
        summary_id, text, position = cur.execute(
            "SELECT summary_id, text, position FROM unit WHERE dataset = ? AND unit_id = ?", [dataset, unit_id]
        ).fetchone()
    summary_text, title, document_text, note = cur.execute(
        """
        SELECT s.text, d.title, d.text, d.text_note FROM summary s
        LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE s.dataset = ? AND s.summary_id = ?
        """,
        [dataset, summary_id],
    ).fetchone()
    sentences = cur.execute(
        "SELECT unit_id, text FROM unit WHERE dataset = ? AND summary_id = ? AND kind = 'sentence' ORDER BY position",
        [dataset, summary_id],
    ).fetchall()
    passages = cur.execute(
        "SELECT rank, start_char, end_char, score FROM alignment WHERE dataset = ? AND unit_id = ? AND rank <= ? "
        "ORDER BY rank",
        [dataset, unit_id, PASSAGES_SHOWN],
    ).fetchall()
    return UnitInContext(
        unit_id=unit_id,
        level=level,
        summary_id=summary_id,
        text=summary_text if text is None else text,
        position=position,
        sentences=tuple((uid, sentence) for uid, sentence in sentences),
        summary_text=summary_text,
        document_title=title,
        document_text=document_text,
        document_note=note,
        passages=tuple(row for row in passages if document_text and 0 <= row[1] < row[2] <= len(document_text)),
    )


def document_markup(view: UnitInContext) -> str:
    """The source text with the unit's aligned passages highlighted (the best one strongest)."""
    spans = [
        hl.Span(start, end, hl.ALIGN_BEST if rank == 1 else hl.ALIGN_OTHER) for rank, start, end, _ in view.passages
    ]
    return hl.render_highlight(view.document_text or "", spans)


def passages_markup(view: UnitInContext) -> str:
    """The unit's aligned passages as a list, best first, with their match scores."""
    return hl.render_passages(view.document_text or "", view.passages)


def _mark(text: str) -> str:
    return f'<mark class="flc-unit">{hl.esc(text)}</mark>'


def summary_markup(view: UnitInContext, in_place: str | None = None, numbered: bool = False) -> str:
    """The summary with the unit marked, its text replaced by `in_place` when given (ARM shows a rewrite
    there, or a placeholder). `numbered` puts S1, S2, ... before the sentences (line-by-line)."""
    shown = view.text if in_place is None else in_place
    if view.level == "summary":
        parts = [hl.esc(text) for _, text in view.sentences] or [hl.esc(view.summary_text)]
        if numbered and view.sentences:
            parts = [f'<span class="flc-num">S{number}</span>{part}' for number, part in enumerate(parts, start=1)]
    elif view.level == "sentence":
        parts = [_mark(shown) if uid == view.unit_id else hl.esc(text) for uid, text in view.sentences]
        parts = parts if view.unit_id in dict(view.sentences) else [_mark(shown)]
    elif view.text in view.summary_text:
        before, _, after = view.summary_text.partition(view.text)
        parts = [hl.esc(before) + _mark(shown) + hl.esc(after)]
    else:
        return f'<div class="flc-summary">{hl.esc(view.summary_text)}</div>' + version_markup("Claim", shown)
    return f'<div class="flc-summary">{" ".join(parts)}</div>'


def version_markup(tag: str, text: str) -> str:
    """One boxed version of a claim (ARM's A and B), its tag before it."""
    return f'<div class="flc-version"><span class="flc-tag">{hl.esc(tag)}</span>{hl.esc(text)}</div>'


def suggestion_sources(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    """LLM sources with StorySumm-inconsistencies answers (what hybrid sessions show)."""
    rows = cur.execute(
        "SELECT DISTINCT source FROM llm_call WHERE method = 'storysumm-inconsistencies' AND status = 'ok' "
        "AND dataset = ? AND source IS NOT NULL ORDER BY source",
        [dataset],
    ).fetchall()
    return tuple(row[0] for row in rows)


def rewrite_sources(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    """Label sources whose labels carry a rewrite (what ARM sessions show)."""
    rows = cur.execute(
        "SELECT DISTINCT source FROM label WHERE dataset = ? AND rewrite IS NOT NULL ORDER BY source", [dataset]
    ).fetchall()
    return tuple(row[0] for row in rows)


def gold_labels(cur: duckdb.DuckDBPyConnection, session: Session, unit: str) -> list[tuple[str, str, str | None]]:
    """The dataset's own label of the unit and (line-by-line) of its sentences: (what, label, explanation).
    Only for non-blind sessions: the page never calls this for a blind one."""
    rows = cur.execute(
        f"""
        SELECT level, target_id, coalesce(value::VARCHAR, raw_value), explanation FROM label
        WHERE dataset = ? AND source = '{GOLD}' AND (target_id = ? OR target_id IN (
            SELECT unit_id FROM unit WHERE dataset = ? AND summary_id = ? AND kind = 'sentence' AND ? = 'line-by-line'))
        {LATEST_LABEL}
        """,
        [session.dataset, unit, session.dataset, unit, session.mode],
    ).fetchall()
    found = [(level, target, value, why) for level, target, value, why in rows if value is not None]
    found.sort(key=lambda row: (row[0] != session.level, row[1]))
    return [(level if target == unit else target, value, why) for level, target, value, why in found]


def last_saved(cur: duckdb.DuckDBPyConnection, session: Session, coder: str) -> str | None:
    """The unit of the coder's newest event when it is a code (what Undo takes back), else None."""
    row = cur.execute(
        "SELECT unit_id, action FROM coding_event WHERE session_id = ? AND coder = ? ORDER BY event_id DESC LIMIT 1",
        [session.session_id, coder],
    ).fetchone()
    return row[0] if row and row[1] == "code" else None


def resume_at(order: Sequence[str], coded: Sequence[str] | set[str]) -> str | None:
    """The first unit of the coder's order not coded yet (None: all are)."""
    done = set(coded)
    return next((unit for unit in order if unit not in done), None)


def next_uncoded(order: Sequence[str], coded: set[str], after: str) -> str | None:
    """The first uncoded unit after `after` in the coder's order, going round to the start."""
    start = order.index(after) + 1 if after in order else 0
    return next((unit for unit in (*order[start:], *order[:start]) if unit not in coded and unit != after), None)


def unit_texts(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, units: Sequence[str]) -> dict[str, str]:
    """Unit id -> its text (a summary's text at level summary)."""
    if level == "summary":
        sql = "SELECT summary_id, text FROM summary WHERE dataset = ? AND list_contains(?, summary_id)"
    else:
        sql = "SELECT unit_id, text FROM unit WHERE dataset = ? AND list_contains(?, unit_id)"
    return dict(cur.execute(sql, [dataset, list(units)]).fetchall())


def code_words(book: Codebook, codes: Sequence[str]) -> str:
    """Codes as the coder saw them: 'No (inconsistent)', or several joined."""
    names = {code.key: code.name for code in book.codes}
    return ", ".join(names.get(key, key) for key in codes) or "(none)"


def session_row(session: Session, progress: Sequence[Progress]) -> dict[str, object]:
    """One line of the sessions list: the settings, then each coder's count and the share coded."""
    total = len(session.units) * len(progress)
    done = sum(p.coded for p in progress)
    return {
        "session": session.name,
        "mode": modes.MODES[session.mode].title if session.mode in modes.MODES else session.mode,
        "codebook": f"{session.codebook}@{session.codebook_version}",
        "level": session.level,
        "units": len(session.units),
        "coders": ", ".join(f"{p.coder} {p.coded}/{p.total}" for p in progress) or "none yet",
        "coded": done / total if total else 0.0,
        "blind": session.blind,
    }


def agreement_row(found: agreement.Agreement) -> dict[str, object]:
    """The all-coder figures of one Agreement."""
    return {
        "coders": len(found.coders),
        "units coded": found.units,
        "units complete": found.complete,
        "Fleiss' κ": found.fleiss_kappa,
        "Krippendorff's α": found.krippendorff_alpha,
        "% all agree": found.pct_all_agree,
    }


def _figure(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "undefined"
    return f"{value:.1f}%" if percent else f"{value:.3f}"


def agreement_sentence(found: agreement.Agreement) -> str:
    """The figures in one line of text (the table's cells are drawn on a canvas, not as text), e.g.
    "Fleiss' κ 0.333 and all agree on 66.7% over the 6 units both coders coded; Krippendorff's α 0.361
    over all 8 units coded; Cohen's κ alice–bob 0.333 (n 6)"."""
    pairs = "; ".join(f"Cohen's κ {p.a}–{p.b} {_figure(p.kappa)} (n {p.n:,})" for p in found.pairs)
    every = "both" if len(found.coders) == 2 else f"all {len(found.coders)}"
    return (
        f"Fleiss' κ {_figure(found.fleiss_kappa)} and all agree on {_figure(found.pct_all_agree, True)} over the "
        f"{found.complete:,} units {every} coders coded; Krippendorff's α {_figure(found.krippendorff_alpha)} over "
        f"all {found.units:,} units coded" + (f"; {pairs}" if pairs else "")
    )


def pair_rows(found: agreement.Agreement) -> list[dict[str, object]]:
    """One row per pair of coders: the units both coded and Cohen's kappa."""
    return [{"coder A": p.a, "coder B": p.b, "n": p.n, "Cohen's κ": p.kappa} for p in found.pairs]


def per_code_rows(report: SessionAgreement, book: Codebook) -> list[dict[str, object]]:
    """Per code (chose it or not): the all-coder figures and each pair's kappa."""
    names = {code.key: code.name for code in book.codes}
    rows = []
    for key, found in report.per_code:
        row: dict[str, object] = {"code": key, "name": names.get(key, key), **agreement_row(found)}
        row |= {f"κ {p.a}–{p.b}": p.kappa for p in found.pairs}
        rows.append(row)
    return rows


ARM_WORDS = {
    "original_units": "units shown as written",
    "original_pct_all_agree": "% all agree, shown as written",
    "original_pct_faithful": "% judged faithful, shown as written",
    "rewrite_units": "units shown as the rewrite",
    "rewrite_pct_all_agree": "% all agree, shown as the rewrite",
    "rewrite_pct_faithful": "% judged faithful, shown as the rewrite",
    "preference_units": "units with a preference",
    "pct_rewrite_preferred": "% rewrite preferred (majority)",
    "pct_original_preferred": "% original preferred (majority)",
    "preference_pct_all_agree": "% all coders chose the same",
    "explanations": "explanations marked",
    "pct_important": "% points IMPORTANT (mean per explanation)",
    "pct_none_important": "% explanations with no IMPORTANT point",
    "pct_wrong": "% points WRONG (mean per explanation)",
    "pct_none_wrong": "% explanations with no WRONG point",
}


def arm_rows(arm: dict[str, float | int | None]) -> list[dict[str, object]]:
    """ARM's Tables 4 and 5 figures as (metric, value) rows."""
    return [{"metric": ARM_WORDS.get(key, key), "value": value} for key, value in arm.items()]


def editor_rows(book: Codebook | None) -> list[dict[str, object]]:
    """A codebook's codes as the editor's table rows (two empty ones for a new codebook)."""
    if book is None:
        return [dict.fromkeys(("key", "name", "verdict", "definition", "example", "explanation")) for _ in range(2)]
    return [
        {
            "key": c.key,
            "name": c.name,
            "verdict": c.verdict,
            "definition": c.definition,
            "example": c.example,
            "explanation": c.explanation,
        }
        for c in book.codes
    ]


def editor_body(fields: dict[str, object], rows: Sequence[dict[str, object]]) -> dict[str, object]:
    """The editor's fields and table as a codebook mapping for `codebook.parse` (blank rows dropped,
    blank cells left out so parse applies its defaults)."""
    codes = []
    for row in rows:
        cells = {name: value for name, value in row.items() if value is not None and str(value).strip() != ""}
        if cells:
            codes.append({name: str(value).strip() for name, value in cells.items()})
    body = {name: value for name, value in fields.items() if value not in (None, "")}
    body["family"] = fields.get("family") or None
    return body | {"codes": codes}
