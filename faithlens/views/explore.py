"""The Explore page's list: the summaries that pass the filters, and where one summary sits in that
list. `faithlens.views.detail` reads one summary in full; `faithlens.filters` holds the filters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb

from faithlens.analysis.generator_names import generator_sql
from faithlens.filters import Filters
from faithlens.store import LATEST_LABEL, natural_key
from faithlens.store.claim_sets import claim_set_sql
from faithlens.views.states import DetailState

MAX_LIST_ROWS = 2_000
PREVIEW_CHARS = 140


@dataclass(frozen=True)
class ListResult:
    """The filtered list: every matching summary id in list order, the first `MAX_LIST_ROWS` of
    them as full rows (tuples in the order of `columns`, named by the query), and the dataset's
    summary count; with a unit filter, how many of those summaries' units it matched."""

    ids: tuple[str, ...]
    rows: list[tuple]
    total: int
    columns: tuple[str, ...]
    units: int | None = None


# One evaluation of the filters (`filtered`); the per-sentence counts, the costly part at scale,
# only for the rows that will be shown. The dataset's own claims are counted apart from extracted ones. `unit_labels` is `current_label` (latest event per
# target and source) written out so the restriction to those units applies before the window:
# through the view, DuckDB would rank every label of the source first (0.5 s at 100x).
_LIST_SQL = """
WITH filtered AS MATERIALIZED (
    SELECT s.summary_id, coalesce(d.title, s.document_id) AS document, {generator} AS model, s.split, s.topic,
           s.topic_type,
           left(s.text, {preview}) AS preview,
           row_number() OVER (ORDER BY {document_order}, s.model, s.summary_id) AS position
    FROM summary s JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
    WHERE s.dataset = ? {where}
), shown_units AS (
    SELECT u.unit_id, u.summary_id, u.kind, {claim_set} IS NOT NULL AS extracted FROM unit u
    WHERE u.dataset = ? AND u.summary_id IN (SELECT summary_id FROM filtered WHERE position <= ?)
), unit_labels AS (
    SELECT level, target_id, value FROM label
    WHERE dataset = ? AND source = ? AND level <> 'summary' AND target_id IN (SELECT unit_id FROM shown_units)
    {latest}
), unit_counts AS (
    SELECT u.summary_id,
           CASE WHEN count(l.value) FILTER (u.kind = 'sentence') > 0
                THEN count(*) FILTER (u.kind = 'sentence' AND l.value = 'unfaithful') END AS sentences,
           CASE WHEN count(l.value) FILTER (u.kind = 'claim' AND NOT u.extracted) > 0
                THEN count(*) FILTER (u.kind = 'claim' AND NOT u.extracted AND l.value = 'unfaithful') END AS claims,
           CASE WHEN count(l.value) FILTER (u.kind = 'claim' AND u.extracted) > 0
                THEN count(*) FILTER (u.kind = 'claim' AND u.extracted AND l.value = 'unfaithful') END AS extracted
    FROM unit_labels l JOIN shown_units u ON u.unit_id = l.target_id AND u.kind = l.level
    GROUP BY u.summary_id
), summary_labels AS (
    SELECT target_id AS summary_id, value::VARCHAR AS label, score
    FROM current_label WHERE dataset = ? AND source = ? AND level = 'summary'
)
SELECT f.summary_id, f.document, f.model AS generator, f.split, f.topic, f.topic_type, sl.label,
       sl.score, c.sentences AS unfaithful_sentences, c.claims AS unfaithful_claims,
       c.extracted AS unfaithful_extracted_claims, f.preview
FROM filtered f
LEFT JOIN summary_labels sl ON sl.summary_id = f.summary_id
LEFT JOIN unit_counts c ON c.summary_id = f.summary_id
ORDER BY f.position
"""


def list_summaries(
    cur: duckdb.DuckDBPyConnection, dataset: str, filters: Filters, max_rows: int = MAX_LIST_ROWS
) -> ListResult:
    """The summaries of `dataset` that pass `filters`, in document / generator / id order, documents
    named by their title and ordered naturally (Story 2 before Story 10)."""
    where, params = filters.where(dataset)
    sql = _LIST_SQL.format(
        preview=PREVIEW_CHARS,
        where=where,
        latest=LATEST_LABEL,
        generator=generator_sql("s"),
        document_order=natural_key("coalesce(d.title, s.document_id)"),
        claim_set=claim_set_sql("u"),
    )
    bound = [dataset, *params, dataset, max_rows, dataset, filters.source, dataset, filters.source]
    result = cur.execute(sql, bound)
    columns = tuple(column[0] for column in result.description)
    rows = result.fetchall()
    total = cur.execute("SELECT count(*) FROM summary WHERE dataset = ?", [dataset]).fetchone()[0]
    units = _matched_units(cur, dataset, filters, where, params) if filters.unit.active else None
    return ListResult(
        ids=tuple(row[0] for row in rows), rows=rows[:max_rows], total=total, columns=columns, units=units
    )


def without_summaries(result: ListResult, hidden: frozenset[str]) -> tuple[ListResult, int]:
    """The list without the `hidden` summaries (those its reader codes blind), and how many it left out.
    The count of matched units is dropped with them: it counted the hidden summaries' units too."""
    kept = tuple(summary_id for summary_id in result.ids if summary_id not in hidden)
    if len(kept) == len(result.ids):
        return result, 0
    rows = [row for row in result.rows if row[0] not in hidden]
    return replace(result, ids=kept, rows=rows, units=None), len(result.ids) - len(kept)


def matched_positions(cur: duckdb.DuckDBPyConnection, dataset: str, filters: Filters, summary_id: str) -> list[int]:
    """1-based positions of the summary's sentences or claims that the unit filter matches."""
    matched, params = filters.unit.matched_sql(dataset)
    sql = f"SELECT u.position + 1 FROM ({matched}) m JOIN unit u ON u.dataset = ? AND u.unit_id = m.target_id "
    rows = cur.execute(sql + "WHERE m.summary_id = ? ORDER BY u.position", [*params, dataset, summary_id]).fetchall()
    return [row[0] for row in rows]


def _matched_units(cur: duckdb.DuckDBPyConnection, dataset: str, filters: Filters, where: str, params: list) -> int:
    """The units the unit filter matches within the summaries every filter keeps."""
    matched, matched_params = filters.unit.matched_sql(dataset)
    sql = f"SELECT count(*) FROM ({matched}) WHERE summary_id IN (SELECT s.summary_id FROM summary s WHERE s.dataset = ? {where})"
    return cur.execute(sql, [*matched_params, dataset, *params]).fetchone()[0]


@dataclass(frozen=True)
class Neighbours:
    """Where a summary sits in the filtered list: 1-based position (None if filtered out)."""

    position: int | None
    total: int
    previous: str | None
    next: str | None
    first: str | None


def neighbours(ids: Sequence[str], summary_id: str) -> Neighbours:
    """The summaries before and after `summary_id` in the filtered list `ids`."""
    first = ids[0] if ids else None
    try:
        index = ids.index(summary_id)
    except ValueError:
        return Neighbours(None, len(ids), None, None, first)
    previous = ids[index - 1] if index > 0 else None
    following = ids[index + 1] if index + 1 < len(ids) else None
    return Neighbours(index + 1, len(ids), previous, following, first)


@dataclass(frozen=True)
class Opened:
    """The summary the detail shows and whether the user asked for it by name: a summary the page
    opened on its own (the first match) stays out of the URL, so landing on Explore or changing a
    filter adds no history entry of its own and a link keeps opening the first match."""

    detail: DetailState
    named: bool


def summary_to_open(wanted: DetailState, ids: Sequence[str], picked: str | None, filters_changed: bool) -> Opened:
    """What the detail shows: a summary just picked in the list or by Previous/Next; else the one
    the URL names, unless the user has just changed a filter that excludes it; else the first match."""
    if picked is not None:
        return Opened(replace(wanted, summary=picked, sentence=None, claim=None, unit=None), True)
    if wanted.summary is not None and not (filters_changed and wanted.summary not in ids):
        return Opened(wanted, True)
    first = ids[0] if ids else None
    return Opened(replace(wanted, summary=first, sentence=None, claim=None, unit=None), False)
