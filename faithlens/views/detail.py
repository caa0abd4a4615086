"""One summary in full for the Explore page: its document, units labelled by a chosen source,
every label source's verdict, TofuEval key points and the stored alignments.

The queries restrict to the summary's units before applying the `current_label` rule (latest
event per source, level and target), so the detail stays fast on a large database.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import duckdb

from faithlens.analysis.generator_names import generator_sql
from faithlens.build.alignment import Match
from faithlens.errors import NotFoundError
from faithlens.filters import FLIPPING
from faithlens.querystate import ignored
from faithlens.store import LATEST_LABEL, fetch_all, fetch_one
from faithlens.views.states import DetailState
from faithlens.vocab import GOLD


@dataclass(frozen=True)
class DocumentView:
    """The source a summary was written from; `text` is None when not distributed (see `text_note`)."""

    document_id: str
    title: str | None
    text: str | None
    text_note: str | None
    text_origin: str | None
    source: str | None
    split: str | None
    attributes: dict


@dataclass(frozen=True)
class SummaryView:
    summary_id: str
    document_id: str
    model: str | None
    split: str | None
    topic: str | None
    topic_type: str | None
    text: str
    general_comment: str | None
    tags: tuple[tuple[str, str], ...]
    """Summary-level tags as (kind, value), e.g. ('difficulty', 'hard')."""


@dataclass(frozen=True)
class UnitView:
    """A sentence or claim with the chosen source's current label and the unit's tags."""

    unit_id: str
    kind: str
    position: int
    text: str
    label: str | None
    raw_value: str | None
    score: float | None
    explanation: str | None
    evidence: tuple[str, ...]
    reasons: tuple[str, ...]
    error_types: tuple[str, ...]


@dataclass(frozen=True)
class SourceVerdict:
    """What one label source says about this summary: its summary label and its unit labels counted."""

    source: str
    kind: str
    description: str | None
    label: str | None
    raw_value: str | None
    score: float | None
    explanation: str | None
    unfaithful_sentences: int | None
    labelled_sentences: int
    unfaithful_claims: int | None
    labelled_claims: int


@dataclass(frozen=True)
class Detail:
    """Everything the detail view shows for one summary, read in a handful of queries."""

    document: DocumentView
    summary: SummaryView
    summary_label: SourceVerdict | None
    sentences: tuple[UnitView, ...]
    claims: tuple[UnitView, ...]
    verdicts: tuple[SourceVerdict, ...]
    key_points: tuple[str, ...]
    alignments: dict[str, tuple[Match, ...]] = field(default_factory=dict)
    flipping: frozenset[str] = frozenset()
    """Ids of this summary (and of its units) whose verdict from the chosen source flips across the
    repeats of its runs (`filters.FLIPPING`)."""


def _json(value: str | None) -> dict:
    return json.loads(value) if value else {}


def _summary(cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str) -> SummaryView:
    found = fetch_one(
        cur,
        SummaryView,
        """
        SELECT s.summary_id, s.document_id, {generator} AS model, s.split, s.topic, s.topic_type, s.text,
               s.general_comment,
               coalesce((SELECT list([t.kind, t.value] ORDER BY t.kind, t.value) FROM tag t
                          WHERE t.dataset = s.dataset AND t.level = 'summary' AND t.target_id = s.summary_id), [])
                 AS tags
        FROM summary s WHERE s.dataset = ? AND s.summary_id = ?
        """.format(generator=generator_sql("s")),
        [dataset, summary_id],
    )
    if found is None:
        raise NotFoundError(
            f"no summary {summary_id!r} in dataset {dataset!r}", "pick a summary from the list, or check the link"
        )
    return replace(found, tags=tuple(tuple(pair) for pair in found.tags))


def _document(cur: duckdb.DuckDBPyConnection, dataset: str, summary: SummaryView) -> DocumentView:
    found = fetch_one(
        cur,
        DocumentView,
        """
        SELECT document_id, title, text, text_note, text_origin, source, split, attributes
        FROM document WHERE dataset = ? AND document_id = ?
        """,
        [dataset, summary.document_id],
    )
    if found is None:
        return DocumentView(summary.document_id, None, None, None, None, None, None, {})
    return replace(found, attributes=_json(found.attributes))


def load_detail(cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str, source: str = GOLD) -> Detail:
    """One summary with its document, units labelled by `source`, every source's verdict, key points
    and stored alignments. Raises NotFoundError when the summary is not in the dataset."""
    summary = _summary(cur, dataset, summary_id)
    units = _units(cur, dataset, summary_id, source)
    verdicts = _verdicts(cur, dataset, summary_id, [u.unit_id for u in units])
    key_points = tuple(
        row[0]
        for row in cur.execute(
            "SELECT text FROM key_point WHERE dataset = ? AND document_id = ? AND topic = ? ORDER BY position",
            [dataset, summary.document_id, summary.topic],
        ).fetchall()
    )
    return Detail(
        document=_document(cur, dataset, summary),
        summary=summary,
        summary_label=next((v for v in verdicts if v.source == source), None),
        sentences=tuple(u for u in units if u.kind == "sentence"),
        claims=tuple(u for u in units if u.kind == "claim"),
        verdicts=verdicts,
        key_points=key_points,
        alignments=_alignments(cur, dataset, [u.unit_id for u in units if u.kind == "sentence"]),
        flipping=_flipping(cur, dataset, source, [summary_id, *(u.unit_id for u in units)]),
    )


def _flipping(cur: duckdb.DuckDBPyConnection, dataset: str, source: str, ids: list[str]) -> frozenset[str]:
    rows = cur.execute(
        f"SELECT target_id FROM ({FLIPPING}) WHERE target_id IN (SELECT unnest(?::VARCHAR[]))", [dataset, source, ids]
    ).fetchall()
    return frozenset(row[0] for row in rows)


# The detail reads labels of one summary's units. Going through the `current_label` view would
# rank every label of the dataset before joining (about 1 s at 100x); these queries restrict to
# the summary's unit ids first and then apply the view's rule (`LATEST_LABEL`).


def _units(cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str, source: str) -> list[UnitView]:
    return fetch_all(
        cur,
        UnitView,
        f"""
        WITH units AS MATERIALIZED (
            SELECT unit_id, kind, position, text FROM unit WHERE dataset = ? AND summary_id = ?
        ), labels AS (
            SELECT level, target_id, value::VARCHAR AS value, raw_value, score, explanation, evidence, reasons
            FROM label WHERE dataset = ? AND source = ? AND target_id IN (SELECT unit_id FROM units) {LATEST_LABEL}
        ), tags AS (
            SELECT level, target_id, list(DISTINCT value ORDER BY value) AS values FROM tag
            WHERE dataset = ? AND kind = 'error_type' AND target_id IN (SELECT unit_id FROM units)
            GROUP BY level, target_id
        )
        SELECT u.unit_id, u.kind, u.position, u.text, l.value AS label, l.raw_value, l.score, l.explanation,
               coalesce(l.evidence, []) AS evidence, coalesce(l.reasons, []) AS reasons,
               coalesce(t.values, []) AS error_types
        FROM units u
        LEFT JOIN labels l ON l.level = u.kind AND l.target_id = u.unit_id
        LEFT JOIN tags t ON t.level = u.kind AND t.target_id = u.unit_id
        ORDER BY u.kind DESC, u.position
        """,
        [dataset, summary_id, dataset, source, dataset],
    )


def _verdicts(
    cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str, unit_ids: list[str]
) -> tuple[SourceVerdict, ...]:
    rows = fetch_all(
        cur,
        SourceVerdict,
        f"""
        WITH unit_labels AS (
            SELECT source, level, value FROM label
            WHERE dataset = ? AND level <> 'summary' AND target_id IN (SELECT unnest(?::VARCHAR[])) {LATEST_LABEL}
        ), unit_counts AS (
            SELECT source,
                   count(*) FILTER (level = 'sentence' AND value = 'unfaithful') AS bad_sentences,
                   count(value) FILTER (level = 'sentence') AS sentences,
                   count(*) FILTER (level = 'claim' AND value = 'unfaithful') AS bad_claims,
                   count(value) FILTER (level = 'claim') AS claims
            FROM unit_labels GROUP BY source
        ), summary_labels AS (
            SELECT source, value::VARCHAR AS value, raw_value, score, explanation FROM label
            WHERE dataset = ? AND level = 'summary' AND target_id = ? {LATEST_LABEL}
        )
        SELECT ls.source, ls.kind, ls.description, sl.value AS label, sl.raw_value, sl.score, sl.explanation,
               CASE WHEN c.sentences > 0 THEN c.bad_sentences END AS unfaithful_sentences,
               coalesce(c.sentences, 0) AS labelled_sentences,
               CASE WHEN c.claims > 0 THEN c.bad_claims END AS unfaithful_claims,
               coalesce(c.claims, 0) AS labelled_claims
        FROM label_source ls
        LEFT JOIN summary_labels sl ON sl.source = ls.source
        LEFT JOIN unit_counts c ON c.source = ls.source
        WHERE ls.dataset = ? AND (sl.source IS NOT NULL OR c.sentences > 0 OR c.claims > 0)
        ORDER BY ls.source <> 'gold', ls.kind, ls.source
        """,
        [dataset, unit_ids, dataset, summary_id, dataset],
    )
    return tuple(rows)


def _alignments(cur: duckdb.DuckDBPyConnection, dataset: str, unit_ids: list[str]) -> dict[str, tuple[Match, ...]]:
    rows = cur.execute(
        """
        SELECT unit_id, list({'rank': rank, 'start': start_char, 'end': end_char, 'score': score} ORDER BY rank)
        FROM alignment
        WHERE dataset = ? AND unit_id IN (SELECT unnest(?::VARCHAR[]))
        GROUP BY unit_id
        """,
        [dataset, unit_ids],
    ).fetchall()
    return {unit_id: tuple(Match(**item) for item in matches) for unit_id, matches in rows}


def select_matches(matches: Sequence[Match], top_k: int, min_score: float) -> list[Match]:
    """The stored passages the reader asked for: at most `top_k`, each scoring at least `min_score`."""
    return [m for m in matches if m.rank <= top_k and m.score >= min_score]


def resolve_selection(detail: Detail, state: DetailState) -> tuple[DetailState, list[str]]:
    """Check a link's `unit` and `sentence` against the opened summary; say what was dropped.

    A sentence unit becomes its 1-based `sentence` number (it wins over a `sentence` that says
    otherwise) and leaves `unit`; a claim unit stays in `unit`; a unit of another summary, or a
    sentence number past the summary's last sentence, is dropped with a note.
    """
    summary_id = detail.summary.summary_id
    sentence, unit, notes = state.sentence, state.unit, []
    if unit is not None:
        found = next((u for u in (*detail.sentences, *detail.claims) if u.unit_id == unit), None)
        if found is None:
            notes.append(ignored("unit", unit, f"not a unit of summary {summary_id}, so none is selected"))
            unit = None
        elif found.kind == "sentence":
            sentence, unit = found.position + 1, None
    if sentence is not None and sentence > len(detail.sentences):
        count = f"{len(detail.sentences)} sentences" if detail.sentences else "no sentences"
        notes.append(ignored("sentence", str(sentence), f"summary {summary_id} has {count}, so none is selected"))
        sentence = None
    return replace(state, summary=summary_id, sentence=sentence, unit=unit), notes
