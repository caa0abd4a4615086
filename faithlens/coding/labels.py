"""A coder's codes as the read side understands them: label events of the label source
`coding/<session>/<coder>` for a codebook of verdicts, tags of the codebook's family (e.g.
`ambiguity_type`) for the others. So Explore colours and filters by a coder, and Compare puts coders in
confusion matrices beside gold, evaluators and LLM runs.

Mode by mode: line-by-line writes each sentence's label and the summary's; ARM faithfulness writes a
judged rewrite to a second source `coding/<session>/<coder>/rewrite` (its text is not the unit's);
ARM preference writes the preferred claim as a tag of `arm_preference`. The none code of a multi-choice
codebook ("no error") writes no tag and clears the coder's others: a tag family holds only the codebook's
real values, as the dataset's own tags do (TofuEval tags only inconsistent sentences), while the coding
event keeps the none code for progress, agreement and the export."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from faithlens import store
from faithlens.coding import modes
from faithlens.coding.codebook import Codebook
from faithlens.unit_filter import level_noun

CODING_ORIGIN = "app"
"""label_source.origin of coders: not 'bundled', so a re-ingest of the benchmarks keeps them."""


@dataclass(frozen=True)
class LabelWrite:
    """One target's label (or tags) from one code; `codes` empty means uncoded again (an undo)."""

    suffix: str
    level: str
    target: str
    codes: tuple[str, ...]
    note: str | None


def label_writes(session, book: Codebook, coder: str, sub) -> list[LabelWrite]:
    """The label events or tags a (checked) submission becomes."""
    writes = [LabelWrite("", session.level, sub.unit, tuple(sub.codes), sub.note)]
    detail = sub.detail or {}
    if session.mode == "line-by-line":
        for uid, part in (detail.get("sentences") or {}).items():
            writes.append(LabelWrite("", "sentence", uid, (part["code"],), part.get("note")))
    if session.mode == "arm-faithfulness" and detail.get("shown") == modes.REWRITE:
        writes = [LabelWrite("/rewrite", session.level, sub.unit, tuple(sub.codes), sub.note)]
    return writes


def _source_row(cur, session, book: Codebook, coder: str, suffix: str) -> str:
    source = session.source(coder) + suffix
    judged = "the rewrites shown in place of " if suffix else ""
    description = (
        f"{coder}'s codes of {judged}{level_noun(session.level)} in coding session {session.name} ({book.title})"
    )
    stored = cur.execute(
        "SELECT codebook, description FROM label_source WHERE dataset = ? AND source = ?", [session.dataset, source]
    ).fetchone()
    if stored == (book.label, description):
        return source
    cur.execute(
        """
        INSERT INTO label_source (dataset, source, kind, description, origin, coder, codebook, created_at)
        VALUES (?, ?, 'coder', ?, ?, ?, ?, ?)
        ON CONFLICT (dataset, source) DO UPDATE SET codebook = excluded.codebook, description = excluded.description
        """,
        [session.dataset, source, description, CODING_ORIGIN, coder, book.label, store.stamp()],
    )
    return source


def write_labels(
    cur: duckdb.DuckDBPyConnection, session, book: Codebook, coder: str, made_by: str, writes: list[LabelWrite]
) -> None:
    """Append the label events (or replace the tags) inside the caller's transaction."""
    for write in writes:
        source = _source_row(cur, session, book, coder, write.suffix)
        if book.verdicts:
            code = book.code(write.codes[0]) if write.codes else None
            cur.execute(
                """
                INSERT INTO label (dataset, source, level, target_id, value, raw_value, explanation, created_by,
                                   created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    session.dataset,
                    source,
                    write.level,
                    write.target,
                    code.verdict if code else None,
                    code.key if code else None,
                    write.note,
                    made_by,
                    store.stamp(),
                ],
            )
            continue
        cur.execute(
            "DELETE FROM tag WHERE dataset = ? AND level = ? AND target_id = ? AND kind = ? AND source = ?",
            [session.dataset, write.level, write.target, book.family, source],
        )
        for key in (key for key in write.codes if key != book.none):
            cur.execute(
                "INSERT INTO tag (dataset, level, target_id, kind, value, source) VALUES (?, ?, ?, ?, ?, ?)",
                [session.dataset, write.level, write.target, book.family, key, source],
            )
