"""What a model is asked about: a summary, a sentence or a claim, with the texts a prompt needs.

An id resolves the way Explore's deep links do: a unit id (`<summary_id>#s0`, a claim id) names a
sentence or claim, anything else a summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from faithlens.errors import NotFoundError
from faithlens.vocab import GOLD


@dataclass(frozen=True)
class Target:
    """One unit or summary of a dataset, or pasted text (dataset None), with its context."""

    dataset: str | None
    level: str
    target_id: str | None
    summary_id: str | None
    text: str
    """The unit's own text (the summary's text at summary level)."""
    summary: str
    document: str | None
    """The source text; None when the dataset does not distribute it."""
    document_note: str | None
    human_evidence: tuple[str, ...]
    """The gold annotators' evidence quotes (FABLES), for the 'human' evidence setting."""


def pasted(story: str, summary: str, sentence: str | None = None) -> Target:
    """A story and a summary of the user's own (the Rewrite page), not stored as a dataset."""
    level = "sentence" if sentence else "summary"
    return Target(None, level, None, None, sentence or summary, summary, story, None, ())


def resolve(cur: duckdb.DuckDBPyConnection, dataset: str, target_id: str) -> Target:
    """The unit or summary `target_id` of `dataset`; NotFoundError names what was looked for."""
    unit = cur.execute(
        "SELECT kind, summary_id, text FROM unit WHERE dataset = ? AND unit_id = ?", [dataset, target_id]
    ).fetchone()
    level, summary_id, text = unit if unit else ("summary", target_id, None)
    row = cur.execute(
        """
        SELECT s.text, d.text, d.text_note FROM summary s
        JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE s.dataset = ? AND s.summary_id = ?
        """,
        [dataset, summary_id],
    ).fetchone()
    if row is None:
        raise NotFoundError(
            f"{dataset}: no summary, sentence or claim with id {target_id!r}",
            "use an id as Explore's links show it, e.g. a summary id or '<summary_id>#s0'",
        )
    summary_text, document, note = row
    evidence = cur.execute(
        f"""
        SELECT evidence FROM label WHERE dataset = ? AND source = '{GOLD}' AND level = ? AND target_id = ?
        ORDER BY event_id DESC LIMIT 1
        """,
        [dataset, level, target_id],
    ).fetchone()
    return Target(
        dataset=dataset,
        level=level,
        target_id=target_id,
        summary_id=summary_id,
        text=text if text is not None else summary_text,
        summary=summary_text,
        document=document,
        document_note=note,
        human_evidence=tuple(evidence[0] or ()) if evidence else (),
    )
