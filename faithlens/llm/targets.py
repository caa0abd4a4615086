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
    unit = cur.execute("SELECT kind FROM unit WHERE dataset = ? AND unit_id = ?", [dataset, target_id]).fetchone()
    level = unit[0] if unit else "summary"
    if (
        unit is None
        and not cur.execute(
            "SELECT count(*) FROM summary WHERE dataset = ? AND summary_id = ?", [dataset, target_id]
        ).fetchone()[0]
    ):
        raise NotFoundError(
            f"{dataset}: no summary, sentence or claim with id {target_id!r}",
            "use an id as Explore's links show it, e.g. a summary id or '<summary_id>#s0'",
        )
    return resolve_many(cur, dataset, level, [target_id])[0]


def resolve_many(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, target_ids: list[str]) -> list[Target]:
    """`resolve` for many ids of one level in three queries (a run resolves thousands); ids it cannot
    find raise NotFoundError naming the first."""
    if level == "summary":
        units = {i: (i, None) for i in target_ids}
    else:
        rows = cur.execute(
            "SELECT unit_id, summary_id, text FROM unit WHERE dataset = ? AND kind = ? AND list_contains(?, unit_id)",
            [dataset, level, target_ids],
        ).fetchall()
        units = {unit_id: (summary_id, text) for unit_id, summary_id, text in rows}
    summaries = {
        summary_id: rest
        for summary_id, *rest in cur.execute(
            """
            SELECT s.summary_id, s.text, d.text, d.text_note FROM summary s
            JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
            WHERE s.dataset = ? AND list_contains(?, s.summary_id)
            """,
            [dataset, sorted({summary_id for summary_id, _ in units.values()})],
        ).fetchall()
    }
    missing = next((i for i in target_ids if i not in units or units[i][0] not in summaries), None)
    if missing is not None:
        raise NotFoundError(f"{dataset}: no {level} with id {missing!r}", "the dataset changed since the run was made")
    evidence = dict(
        cur.execute(
            f"""
            SELECT target_id, arg_max(evidence, event_id) FROM label
            WHERE dataset = ? AND source = '{GOLD}' AND level = ? AND list_contains(?, target_id)
            GROUP BY target_id
            """,
            [dataset, level, target_ids],
        ).fetchall()
    )
    out = []
    for target_id in target_ids:
        summary_id, text = units[target_id]
        summary_text, document, note = summaries[summary_id]
        out.append(
            Target(
                dataset=dataset,
                level=level,
                target_id=target_id,
                summary_id=summary_id,
                text=text if text is not None else summary_text,
                summary=summary_text,
                document=document,
                document_note=note,
                human_evidence=tuple(evidence.get(target_id) or ()),
            )
        )
    return out
