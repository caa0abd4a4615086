"""One unit of a coding session as the Code page shows it: the summary around it, the source with the
passages that match it, and what a non-blind session may reveal beside it (the dataset's own label).

The ARM modes show a wording that may not be the unit's own (the rewrite, or two versions as A and B), so
neither the stored alignment nor the gold label of the unit's own wording may show there: either would
tell the coder which version is the dataset's. `in_session` aligns the wording shown instead (both
versions, highlighted alike, for the preference question), and `gold_withheld` says why no gold shows.

Every dataset, LLM and coder string is escaped (`highlight.esc`) before it is wrapped in markup, with
classes from a fixed list."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from faithlens import access
from faithlens.build import alignment
from faithlens.coding import modes
from faithlens.coding.sessions import Session
from faithlens.store import LATEST_LABEL
from faithlens.views import highlight as hl
from faithlens.vocab import GOLD

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
    """The passages of the source that match the unit, (rank, start, end, score) best first: its stored
    alignment, or in the ARM modes the alignment of the wording shown (`in_session`)."""
    passages_alike: bool = False
    """Highlight every passage alike (ARM preference: the passages of both versions, no best one)."""


def unit_in_context(
    cur: duckdb.DuckDBPyConnection, dataset: str, level: str, unit_id: str, ranker: str = alignment.DEFAULT
) -> UnitInContext:
    """The unit, its summary's sentences, its document and (for a sentence or claim) its stored alignment
    by `ranker`."""
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
        "SELECT rank, start_char, end_char, score FROM alignment "
        "WHERE dataset = ? AND unit_id = ? AND ranker = ? AND rank <= ? ORDER BY rank",
        [dataset, unit_id, ranker, PASSAGES_SHOWN],
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
    """The source text with the unit's aligned passages highlighted (the best one strongest, unless alike)."""
    spans = [
        hl.Span(start, end, hl.ALIGN_BEST if rank == 1 and not view.passages_alike else hl.ALIGN_OTHER)
        for rank, start, end, _ in view.passages
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


def aligned(
    document_text: str, texts: Sequence[str], ranker: str = alignment.DEFAULT
) -> tuple[tuple[int, int, int, float], ...]:
    """The passages of the source that best match any of `texts` (PASSAGES_SHOWN per text, by `ranker`),
    each passage once with its best score, best first: (rank, start, end, score)."""
    best: dict[tuple[int, int], float] = {}
    for matches in alignment.align([text for text in texts if text], document_text, PASSAGES_SHOWN, ranker):
        for match in matches:
            best[(match.start, match.end)] = max(match.score, best.get((match.start, match.end), 0.0))
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return tuple((rank, start, end, score) for rank, ((start, end), score) in enumerate(ranked, start=1))


def in_session(
    cur: duckdb.DuckDBPyConnection, session: Session, unit_id: str, ranker: str = alignment.DEFAULT
) -> tuple[UnitInContext, modes.Context]:
    """The unit in context and what the session's mode shows beside it, its passages by `ranker`. In the
    ARM modes the passages are those of the wording shown: the variant judged (faithfulness), or both
    versions alike (preference)."""
    view = unit_in_context(cur, session.dataset, session.level, unit_id, ranker)
    context = modes.context(cur, session, unit_id)
    if not session.mode.startswith("arm-") or not view.document_text:
        return view, context
    shown = context.order if session.mode == "arm-preference" else (context.shown,)
    texts = [context.original if variant == modes.ORIGINAL else context.rewrite for variant in shown]
    passages = aligned(view.document_text, [text or "" for text in texts], ranker)
    return dataclasses.replace(view, passages=passages, passages_alike=len(texts) > 1), context


GOLD_WITHHELD = {
    "arm-faithfulness": "ARM sessions show no gold label: the dataset's label is of the claim as its summary "
    "words it, and the wording shown here may differ.",
    "arm-preference": "ARM sessions show no gold label: the dataset labels one of the two versions, so its "
    "label would tell which one that is.",
}


def gold_withheld(session: Session) -> str | None:
    """Why this session shows no gold label even when not blind (the ARM modes), else None."""
    return GOLD_WITHHELD.get(session.mode)


def gold_labels(
    cur: duckdb.DuckDBPyConnection, actor: access.Actor, session: Session, unit: str
) -> list[tuple[str, str, str | None]]:
    """The dataset's own label of the unit and (line-by-line) of its sentences: (what, label, explanation).
    Refused (`read_blind_others`) in a blind session still open, but to adjudicators and admins. Empty in
    the ARM modes (`gold_withheld`)."""
    access.require(actor, "read_blind_others", blind=session.blind, closed=session.closed)
    if gold_withheld(session):
        return []
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
