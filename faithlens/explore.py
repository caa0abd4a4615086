"""The Explore page's list: filters, the filtered summaries, and the page's URL state.

`faithlens.explore_detail` reads one summary in full.

Filters follow datasette's filters: each one yields a bound SQL condition on the summary `s` and a
plain-English caption, so the page can say "37 summaries where split is test and ...". The filter
state is one frozen dataclass that converts to and from URL query parameters (strings; repeated
keys for lists), so every view can be shared as a link.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

import duckdb

from faithlens.alignment import TOP_K
from faithlens.vocab import GOLD, VERDICTS

NO_LABEL = "none"
MATCH_MODES = ("any", "all")
PREVIEW_CHARS = 140


@dataclass(frozen=True)
class Clause:
    """One filter as SQL over summary `s` (bound parameters only) and as words."""

    sql: str
    params: tuple[object, ...]
    caption: str


@dataclass(frozen=True)
class Filters:
    """What the list shows. `source` is the label source whose labels the list, the label filter
    and the detail colouring use; `disagree_with` names a second source to compare it with."""

    source: str = GOLD
    split: str | None = None
    generator: str | None = None
    topic: str | None = None
    topic_type: str | None = None
    label: str | None = None
    difficulty: str | None = None
    error_types: tuple[str, ...] = ()
    error_match: str = "any"
    disagree_with: str | None = None
    search: str | None = None

    def to_query_params(self) -> dict[str, str | list[str]]:
        """Non-default fields as URL parameters; lists become repeated keys."""
        default = Filters()
        params: dict[str, str | list[str]] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if value == getattr(default, item.name) or value is None:
                continue
            params[item.name] = list(value) if isinstance(value, tuple) else str(value)
        return params

    @classmethod
    def from_query_params(cls, params: Mapping[str, str | Sequence[str]]) -> Filters:
        """Read the fields back; blank values mean 'not set', unknown keys are ignored.

        Only the shape is checked here (label in the vocabulary, match mode any/all);
        `check_against` drops values the dataset does not have.
        """

        def last(name: str) -> str | None:
            value = params.get(name)
            if isinstance(value, (list, tuple)):
                value = value[-1] if value else None
            return value.strip() or None if isinstance(value, str) else None

        raw_types = params.get("error_types", ())
        error_types = [raw_types] if isinstance(raw_types, str) else list(raw_types)
        label = last("label")
        match = last("error_match")
        return cls(
            source=last("source") or GOLD,
            split=last("split"),
            generator=last("generator"),
            topic=last("topic"),
            topic_type=last("topic_type"),
            label=label if label in (*VERDICTS, NO_LABEL) else None,
            difficulty=last("difficulty"),
            error_types=tuple(dict.fromkeys(t.strip() for t in error_types if t and t.strip())),
            error_match=match if match in MATCH_MODES else "any",
            disagree_with=last("disagree_with"),
            search=last("search"),
        )

    def clauses(self, dataset: str = "") -> list[Clause]:
        """The active filters, in a fixed order. `dataset` is bound into the subqueries (which are
        uncorrelated, so DuckDB evaluates each once); captions do not depend on it."""
        out = []
        for name, column, words in (
            ("split", "s.split", "split is {}"),
            ("generator", "s.model", "generator is {}"),
            ("topic", "s.topic", "topic is “{}”"),
            ("topic_type", "s.topic_type", "the topic is {}"),
        ):
            value = getattr(self, name)
            if value is not None:
                out.append(Clause(f"{column} = ?", (value,), words.format(value)))
        if self.label == NO_LABEL:
            out.append(
                Clause(
                    f"s.summary_id NOT IN ({_SUMMARY_LABELLED})",
                    (dataset, self.source),
                    f"{self.source} gives no summary label",
                )
            )
        elif self.label is not None:
            out.append(
                Clause(
                    f"s.summary_id IN ({_SUMMARY_LABELLED} AND value = ?)",
                    (dataset, self.source, self.label),
                    f"{self.source} labels the summary {self.label}",
                )
            )
        if self.difficulty is not None:
            out.append(Clause(_DIFFICULTY, (dataset, self.difficulty), f"difficulty is {self.difficulty}"))
        if self.error_types:
            out.append(self._error_clause(dataset))
        if self.disagree_with is not None:
            out.append(
                Clause(
                    _DISAGREE,
                    (dataset, self.source, dataset, self.disagree_with),
                    f"{self.source} and {self.disagree_with} disagree on the summary label",
                )
            )
        if self.search is not None:
            pattern = "%" + _escape_like(self.search) + "%"
            out.append(
                Clause(
                    _SEARCH,
                    (pattern, pattern, dataset, pattern, dataset, pattern, pattern, pattern, dataset, dataset),
                    f"the summary, a sentence, a claim or an explanation contains “{self.search}”",
                )
            )
        return out

    def _error_clause(self, dataset: str) -> Clause:
        types = list(self.error_types)
        params = (dataset, types, dataset)
        if self.error_match == "all" and len(types) > 1:
            return Clause(
                f"s.summary_id IN (SELECT summary_id FROM ({_TAGGED}) GROUP BY summary_id "
                "HAVING count(DISTINCT value) = ?)",
                (*params, len(types)),
                "its sentences or claims carry all of the error types " + _join(types, "and"),
            )
        return Clause(
            f"s.summary_id IN (SELECT summary_id FROM ({_TAGGED}))",
            params,
            "a sentence or claim carries the error type " + _join(types, "or"),
        )

    def where(self, dataset: str) -> tuple[str, list[object]]:
        """SQL to append after `WHERE s.dataset = ?` (each clause starting with AND) and its parameters."""
        clauses = self.clauses(dataset)
        sql = "".join(f" AND ({c.sql})" for c in clauses)
        return sql, [p for c in clauses for p in c.params]

    def caption(self, count: int) -> str:
        """'37 summaries where split is test and generator is model_A' (or 'All 96 summaries')."""
        noun = "summary" if count == 1 else "summaries"
        clauses = self.clauses()
        if not clauses:
            return f"All {count:,} {noun}"
        return f"{count:,} {noun} where " + _join([c.caption for c in clauses], "and")


def _join(items: Sequence[str], word: str) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {word} " + items[-1]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# Every subquery below is uncorrelated (the dataset is bound, not taken from `s`): DuckDB then
# computes each once and semi-joins it, instead of decorrelating into joins over whole tables.
# Unit-level hits reach their summary through `unit_id IN (...)`, which keeps the hits, not the
# 500k-row unit table, on the build side of the hash join.
_SUMMARY_LABELLED = (
    "SELECT target_id FROM current_label WHERE dataset = ? AND level = 'summary' AND source = ? AND value IS NOT NULL"
)
_DIFFICULTY = (
    "s.summary_id IN (SELECT target_id FROM tag WHERE dataset = ? AND level = 'summary' "
    "AND kind = 'difficulty' AND value = ?)"
)
# (summary_id, value) of every error_type tag from the bound list, on the summary or one of its units.
_TAGGED = (
    "WITH tagged AS MATERIALIZED (SELECT level, target_id, value FROM tag WHERE dataset = ? "
    "AND kind = 'error_type' AND list_contains(?, value)) "
    "SELECT target_id AS summary_id, value FROM tagged WHERE level = 'summary' "
    "UNION ALL SELECT u.summary_id, t.value FROM tagged t JOIN ("
    "SELECT unit_id, summary_id FROM unit WHERE dataset = ? AND unit_id IN (SELECT target_id FROM tagged)"
    ") u ON u.unit_id = t.target_id WHERE t.level <> 'summary'"
)
_DISAGREE = (
    "s.summary_id IN (SELECT a.target_id FROM current_label a JOIN current_label b ON b.target_id = a.target_id "
    "WHERE a.dataset = ? AND a.level = 'summary' AND a.source = ? "
    "AND b.dataset = ? AND b.level = 'summary' AND b.source = ? AND a.value <> b.value)"
)
# Text of the summary, of its units, or of a current label's explanation / evidence / reasons.
# Matching label events are found first, then kept only if they are the latest event of their
# (source, level, target) (the `current_label` rule), so that step runs on the few matches.
_SEARCH = (
    "s.text ILIKE ? ESCAPE '\\' OR s.general_comment ILIKE ? ESCAPE '\\' "
    "OR s.summary_id IN (SELECT summary_id FROM unit WHERE dataset = ? AND text ILIKE ? ESCAPE '\\') "
    "OR s.summary_id IN ("
    "WITH hits AS MATERIALIZED (SELECT source, level, target_id, event_id FROM label WHERE dataset = ? "
    "AND (explanation ILIKE ? ESCAPE '\\' "
    "OR (len(evidence) > 0 AND array_to_string(evidence, ' ') ILIKE ? ESCAPE '\\') "
    "OR (len(reasons) > 0 AND array_to_string(reasons, ' ') ILIKE ? ESCAPE '\\'))), "
    "latest AS (SELECT source, level, target_id, max(event_id) AS event_id FROM label WHERE dataset = ? "
    "AND target_id IN (SELECT target_id FROM hits) GROUP BY ALL), "
    "current_hits AS MATERIALIZED (SELECT level, target_id FROM hits JOIN latest USING (source, level, target_id, event_id)) "
    "SELECT target_id FROM current_hits WHERE level = 'summary' "
    "UNION ALL SELECT summary_id FROM unit WHERE dataset = ? "
    "AND unit_id IN (SELECT target_id FROM current_hits WHERE level <> 'summary'))"
)


@dataclass(frozen=True)
class FilterOptions:
    """The values each filter can take in one dataset (empty tuple: the filter does not apply)."""

    splits: tuple[str, ...]
    generators: tuple[str, ...]
    topics: tuple[str, ...]
    topic_types: tuple[str, ...]
    difficulties: tuple[str, ...]
    error_types: tuple[str, ...]
    sources: tuple[str, ...]
    """Every label source of the dataset (gold first)."""
    summary_sources: tuple[str, ...]
    """Sources with summary-level label values: the label and disagreement filters use these."""


def filter_options(cur: duckdb.DuckDBPyConnection, dataset: str) -> FilterOptions:
    row = cur.execute(
        """
        SELECT
          (SELECT coalesce(list(DISTINCT split ORDER BY split), []) FROM summary WHERE dataset = $1 AND split IS NOT NULL),
          (SELECT coalesce(list(DISTINCT model ORDER BY model), []) FROM summary WHERE dataset = $1 AND model IS NOT NULL),
          (SELECT coalesce(list(DISTINCT topic ORDER BY topic), []) FROM summary WHERE dataset = $1 AND topic IS NOT NULL),
          (SELECT coalesce(list(DISTINCT topic_type ORDER BY topic_type), []) FROM summary
             WHERE dataset = $1 AND topic_type IS NOT NULL),
          (SELECT coalesce(list(DISTINCT value ORDER BY value), []) FROM tag WHERE dataset = $1 AND kind = 'difficulty'),
          (SELECT coalesce(list(DISTINCT value ORDER BY value), []) FROM tag WHERE dataset = $1 AND kind = 'error_type'),
          (SELECT coalesce(list(source ORDER BY source <> 'gold', kind, source), []) FROM label_source WHERE dataset = $1),
          (SELECT coalesce(list(DISTINCT source ORDER BY source <> 'gold', source), []) FROM label
             WHERE dataset = $1 AND level = 'summary' AND value IS NOT NULL)
        """,
        [dataset],
    ).fetchone()
    return FilterOptions(*(tuple(values) for values in row))


def check_against(filters: Filters, options: FilterOptions) -> tuple[Filters, list[str]]:
    """Drop values the dataset does not have (e.g. from an old or hand-edited link); say which."""
    changes: dict[str, object] = {}
    notes = []
    singles = {
        "split": options.splits,
        "generator": options.generators,
        "topic": options.topics,
        "topic_type": options.topic_types,
        "difficulty": options.difficulties,
        "disagree_with": options.summary_sources,
    }
    for name, allowed in singles.items():
        value = getattr(filters, name)
        if value is not None and value not in allowed:
            changes[name] = None
            notes.append(f"{name} “{value}” is not in this dataset; that filter was dropped")
    if filters.source not in options.sources:
        changes["source"] = GOLD if GOLD in options.sources else (options.sources[0] if options.sources else GOLD)
        notes.append(f"label source “{filters.source}” is not in this dataset; showing {changes['source']}")
    unknown = [t for t in filters.error_types if t not in options.error_types]
    if unknown:
        changes["error_types"] = tuple(t for t in filters.error_types if t in options.error_types)
        notes.append("error types not in this dataset were dropped: " + ", ".join(unknown))
    return replace(filters, **changes), notes


LIST_COLUMNS = (
    "summary_id",
    "document",
    "generator",
    "split",
    "topic",
    "topic_type",
    "label",
    "score",
    "unfaithful_sentences",
    "unfaithful_claims",
    "preview",
)
MAX_LIST_ROWS = 2_000


@dataclass(frozen=True)
class ListResult:
    """The filtered list: every matching summary id in list order, the first `MAX_LIST_ROWS` of
    them as full rows (tuples in LIST_COLUMNS order), and the dataset's summary count."""

    ids: tuple[str, ...]
    rows: list[tuple]
    total: int
    columns: tuple[str, ...] = LIST_COLUMNS


# One evaluation of the filters (`filtered`); the per-sentence counts, the costly part at scale,
# only for the rows that will be shown. `unit_labels` is `current_label` (latest event per
# target and source) written out so the restriction to those units applies before the window:
# through the view, DuckDB would rank every label of the source first (0.5 s at 100x).
_LIST_SQL = """
WITH filtered AS MATERIALIZED (
    SELECT s.summary_id, s.document_id, s.model, s.split, s.topic, s.topic_type, left(s.text, {preview}) AS preview,
           row_number() OVER (ORDER BY s.document_id, s.model, s.summary_id) AS position
    FROM summary s WHERE s.dataset = ? {where}
), shown_units AS (
    SELECT u.unit_id, u.summary_id, u.kind FROM unit u
    WHERE u.dataset = ? AND u.summary_id IN (SELECT summary_id FROM filtered WHERE position <= ?)
), unit_labels AS (
    SELECT level, target_id, value FROM label
    WHERE dataset = ? AND source = ? AND level <> 'summary' AND target_id IN (SELECT unit_id FROM shown_units)
    QUALIFY row_number() OVER (PARTITION BY level, target_id ORDER BY event_id DESC) = 1
), unit_counts AS (
    SELECT u.summary_id,
           CASE WHEN count(l.value) FILTER (u.kind = 'sentence') > 0
                THEN count(*) FILTER (u.kind = 'sentence' AND l.value = 'unfaithful') END AS sentences,
           CASE WHEN count(l.value) FILTER (u.kind = 'claim') > 0
                THEN count(*) FILTER (u.kind = 'claim' AND l.value = 'unfaithful') END AS claims
    FROM unit_labels l JOIN shown_units u ON u.unit_id = l.target_id AND u.kind = l.level
    GROUP BY u.summary_id
), summary_labels AS (
    SELECT target_id AS summary_id, value::VARCHAR AS label, score
    FROM current_label WHERE dataset = ? AND source = ? AND level = 'summary'
)
SELECT f.summary_id, f.document_id, f.model, f.split, f.topic, f.topic_type, sl.label, sl.score,
       c.sentences, c.claims, f.preview
FROM filtered f
LEFT JOIN summary_labels sl ON sl.summary_id = f.summary_id
LEFT JOIN unit_counts c ON c.summary_id = f.summary_id
ORDER BY f.position
"""


def list_summaries(
    cur: duckdb.DuckDBPyConnection, dataset: str, filters: Filters, max_rows: int = MAX_LIST_ROWS
) -> ListResult:
    """The summaries of `dataset` that pass `filters`, in document / generator / id order."""
    where, params = filters.where(dataset)
    sql = _LIST_SQL.format(preview=PREVIEW_CHARS, where=where)
    bound = [dataset, *params, dataset, max_rows, dataset, filters.source, dataset, filters.source]
    rows = cur.execute(sql, bound).fetchall()
    total = cur.execute("SELECT count(*) FROM summary WHERE dataset = ?", [dataset]).fetchone()[0]
    return ListResult(ids=tuple(row[0] for row in rows), rows=rows[:max_rows], total=total)


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
class DetailState:
    """The detail view's URL state: which summary, which sentence (1-based), which unit (by id,
    as links from Compare name it), and how the stored alignment and the n-gram overlap are shown.

    `unit` is checked against the opened summary by `explore_detail.resolve_selection`, which
    turns a sentence unit into `sentence` and keeps only a claim in `unit`."""

    summary: str | None = None
    sentence: int | None = None
    unit: str | None = None
    passages: int = 3
    min_score: int = 0
    ngram: int | None = None

    def to_query_params(self) -> dict[str, str]:
        default = DetailState()
        return {
            item.name: str(getattr(self, item.name))
            for item in fields(self)
            if getattr(self, item.name) is not None and getattr(self, item.name) != getattr(default, item.name)
        }

    @classmethod
    def from_query_params(cls, params: Mapping[str, str | Sequence[str]]) -> DetailState:
        """Read the fields back, ignoring values of the wrong shape (a link may be hand-edited)."""

        def text(name: str) -> str | None:
            value = params.get(name)
            if isinstance(value, (list, tuple)):
                value = value[-1] if value else None
            return value or None if isinstance(value, str) else None

        def number(name: str, low: int, high: int) -> int | None:
            value = text(name)
            if value is None or not value.strip().isdigit():
                return None
            parsed = int(value)
            return parsed if low <= parsed <= high else None

        default = cls()
        return cls(
            summary=text("summary"),
            sentence=number("sentence", 1, 10_000),
            unit=text("unit"),
            passages=number("passages", 1, TOP_K) or default.passages,
            min_score=number("min_score", 0, 100) or default.min_score,
            ngram=number("ngram", 1, 8),
        )
