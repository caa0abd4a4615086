"""Read models for the Code and Sessions pages: the sources a mode can show, a coder's codes in the words
the coder saw them in, a session's progress and agreement as table rows, ARM's figures in words, and the
codebook editor's rows. A unit in its context (the summary, the source, the gold label) is
`faithlens.views.coding_unit`.

The work is `faithlens.coding` (sessions, events, report); nothing here writes."""

from __future__ import annotations

import html
from collections.abc import Sequence

import duckdb

from faithlens.coding import agreement, modes
from faithlens.coding.codebook import Codebook
from faithlens.coding.comments import Comment
from faithlens.coding.report import Progress
from faithlens.coding.sessions import Session
from faithlens.unit_filter import level_noun

MODE_LINES = {
    "codes": "Code one unit at a time with the codebook's codes (and a note where a code asks for one).",
    "line-by-line": "StorySumm's annotators (Subbiah et al. 2024, App. D): judge every line of a summary as "
    "consistent, inconsistent or commentary, explaining each inconsistent line; the summary is unfaithful "
    "when any line is.",
    "hybrid": "StorySumm's hybrid protocol (section 3, B.2): an LLM lists possible inconsistencies; agree or "
    "disagree with each and say why, then label the whole summary consistent or inconsistent (it follows from "
    "the inconsistencies you agree with).",
    "arm-faithfulness": "ARM (Subbiah et al., section 4.2): the claim is shown in its summary either as written "
    "or as an LLM's rewrite, at random and without saying which, and judged with the codebook.",
    "arm-preference": "ARM (section 4.2): the original claim and its rewrite as A and B in random order; which "
    "is better, and when the rewrite wins, is each point of its explanation IMPORTANT, NEUTRAL or WRONG.",
}
"""One line per protocol, from the papers, for the new-session form."""


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
    """Codes by their names: 'No (inconsistent)', or several joined."""
    names = {code.key: code.name for code in book.codes}
    return ", ".join(names.get(key, key) for key in codes) or "(none)"


def preference_words(order: Sequence[str]) -> dict[str, str]:
    """ARM preference's answers as the coder sees them for one unit: 'A is better', 'B is better', 'Neither'.
    Which version is A is the unit's random order; the coder is never told (the export keeps `order`)."""
    tags = modes.preference_tags(tuple(order))
    return {variant: f"{tag} is better" for variant, tag in tags.items()} | {modes.NEUTRAL: "Neither"}


def coder_words(session: Session, book: Codebook, codes: Sequence[str], context: modes.Context) -> str:
    """Codes in the words the coder saw them in: the code names, or in ARM preference A, B or Neither."""
    if session.mode == "arm-preference":
        words = preference_words(context.order)
        return ", ".join(words.get(key, key) for key in codes) or "(none)"
    return code_words(book, codes)


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
        "closed by": session.closed_by or "",
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
        f"{found.complete:,} {level_noun('unit', found.complete)} {every} coders coded; Krippendorff's α "
        f"{_figure(found.krippendorff_alpha)} over {'the' if found.units == 1 else 'all'} {found.units:,} "
        f"{level_noun('unit', found.units)} coded" + (f"; {pairs}" if pairs else "")
    )


def pair_rows(found: agreement.Agreement) -> list[dict[str, object]]:
    """One row per pair of coders: the units both coded and Cohen's kappa."""
    return [{"coder A": p.a, "coder B": p.b, "n": p.n, "Cohen's κ": p.kappa} for p in found.pairs]


def per_code_rows(per_code: Sequence[tuple[str, agreement.Agreement]], book: Codebook) -> list[dict[str, object]]:
    """Per code (chose it or not): the all-coder figures and each pair's kappa."""
    names = {code.key: code.name for code in book.codes}
    rows = []
    for key, found in per_code:
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
    "preference_units": "units judged (each % below is of these)",
    "preferred_units": "units a version won (the coders' majority preferred it)",
    "no_preference_units": "units no version won (the majority chose Neither, or a tie)",
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


COMMENT_STYLE = (
    ".fl-cmt{margin:0 0 .5rem 0;padding:.4rem .6rem;border-left:3px solid #c9ced6;background:#f7f8fa}"
    ".fl-cmt.fl-adj{border-left-color:#8a6d00}"
    ".fl-cmt-who{font-size:.8rem;color:#555;margin-bottom:.15rem}"
    ".fl-cmt-text{white-space:pre-wrap;margin:0}"
)


def comments_markup(thread: Sequence[Comment]) -> str:
    """A unit's comments as escaped HTML, oldest first: who (as coder or adjudicator) and when, then the
    text as written (line breaks kept). Every author and text is escaped: a comment is typed by a person."""
    parts = []
    for comment in thread:
        role = " fl-adj" if comment.role == "adjudicator" else ""
        said = "adjudicator" if comment.role == "adjudicator" else "coder"
        when = comment.created_at.strftime("%Y-%m-%d %H:%M")
        parts.append(
            f'<div class="fl-cmt{role}"><div class="fl-cmt-who"><b>{html.escape(comment.author)}</b> '
            f'({said}) · {when}</div><p class="fl-cmt-text">{html.escape(comment.text)}</p></div>'
        )
    return f"<style>{COMMENT_STYLE}</style>" + "".join(parts)
