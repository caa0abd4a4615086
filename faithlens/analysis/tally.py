"""Tallies of one label source against another at one level: which sources speak at a level and how,
and the counts of (reference label, compared label) per split, corpus, topic type and difficulty that
every agreement figure is computed from. The Compare page, the `metrics` command and (next) coding
sessions read them; nothing here computes a metric.

How a source speaks at a level (`SourceChoice.mode`):
- `label`: it has labels with a value there; the mapping turns values into faithful / unfaithful.
- `score`: its labels there carry a score and no value (AlignScore, UniEval); a threshold turns a
  score into a label (`faithlens.analysis.thresholds`).
- `derived` (summary level only): the source has no summary labels but labels the summary's
  sentences (or else claims): the summary is unfaithful if any unit maps to unfaithful, faithful if
  every labelled unit maps to faithful, and left out otherwise (TofuEval's aggregation).

A unit's corpus is its document's `source` (TofuEval's mediasum / meetingbank, from the CSV file name
at ingest); a `Group` is the units of one corpus and/or topic type, as TofuEval's Table 3 reports them.

Counts are aggregated in DuckDB over the units both sources label. SQL uses named parameters only;
the text never holds user values.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pandas as pd

from faithlens.analysis.mapping import FAITHFUL, UNFAITHFUL, Mapping
from faithlens.analysis.thresholds import ALL, TUNING_SPLITS
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.store import execute_named, fetch_all
from faithlens.vocab import GOLD, LEVELS


@dataclass(frozen=True)
class SourceChoice:
    """A label source as it can be compared at one level."""

    name: str
    kind: str
    mode: str  # 'label', 'score' or 'derived'
    from_level: str  # the level its labels come from ('sentence' or 'claim' when derived)
    description: str | None = None

    def describe_mode(self) -> str:
        if self.mode == "score":
            return "score source: a threshold turns its scores into labels"
        if self.mode == "derived":
            return f"summary label derived from its {self.from_level} labels: unfaithful if any {self.from_level} is"
        return "label source"


@dataclass(frozen=True)
class Group:
    """A subset of a split's units: all of them, one corpus, one topic type (main / marginal), or
    one corpus's topic type (a cell of TofuEval's Table 3)."""

    corpus: str = ALL
    topic_type: str = ALL

    @property
    def name(self) -> str:
        """'all', 'main', 'mediasum' or 'mediasum main' (as the Overview's TofuEval table says)."""
        return " ".join(part for part in (self.corpus, self.topic_type) if part != ALL) or ALL


@dataclass(frozen=True)
class Tally:
    """Reference vs compared sources at one level, counted."""

    counts: pd.DataFrame
    """One row per (source, split, corpus, topic_type, ref_value, cmp_value, difficulty) with its count n;
    a score source's rows are per unit (`unit`) and carry its `score`."""
    coverage: dict[str, int]
    """How many units each source (the reference included) labels or scores at the level."""


@dataclass(frozen=True)
class Example:
    """One unit of a confusion-matrix cell, with what the Explore deep link needs."""

    summary_id: str
    unit_id: str | None
    position: int | None
    split: str | None
    topic_type: str | None
    text: str
    reference_label: str | None
    compared_label: str | None
    score: float | None
    reference_explanation: str | None
    compared_explanation: str | None


# --- SQL (named parameters only; the text never holds user values) ---------------------------------

_MAPPED = """CASE WHEN list_contains($unfaithful::VARCHAR[], {col}::VARCHAR) THEN 'unfaithful'
                 WHEN list_contains($faithful::VARCHAR[], {col}::VARCHAR) THEN 'faithful' END"""

_DIRECT = f"""
    SELECT l.source, l.target_id, {_MAPPED.format(col="l.value")} AS value, l.score,
           l.value::VARCHAR AS raw_value, coalesce(l.explanation, array_to_string(l.reasons, ' | ')) AS explanation
    FROM current_label l
    WHERE l.dataset = $dataset AND l.level = $level AND list_contains($direct::VARCHAR[], l.source)"""

_DERIVED = f"""
    SELECT m.source, u.summary_id,
           CASE WHEN bool_or(m.mapped = 'unfaithful') THEN 'unfaithful'
                WHEN count(m.mapped) = count(*) THEN 'faithful' END,
           NULL,
           printf('%d of %d %ss unfaithful', count(*) FILTER (m.mapped = 'unfaithful'), count(*), any_value(m.level)),
           string_agg(m.explanation, ' | ' ORDER BY u.position)
    FROM (
        SELECT l.source, l.level, l.target_id, l.explanation, {_MAPPED.format(col="l.value")} AS mapped
        FROM current_label l
        WHERE l.dataset = $dataset AND l.value IS NOT NULL
          AND ((l.level = 'sentence' AND list_contains($from_sentence::VARCHAR[], l.source))
            OR (l.level = 'claim' AND list_contains($from_claim::VARCHAR[], l.source)))
    ) m
    JOIN unit u ON u.dataset = $dataset AND u.unit_id = m.target_id
    GROUP BY m.source, u.summary_id"""

_FRAME = {
    "summary": """
frame AS (
    SELECT s.summary_id AS target_id, s.summary_id, NULL::INTEGER AS position, s.split, s.topic_type,
           s.text, NULL::VARCHAR AS unit_id, d.source AS corpus
    FROM summary s LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
    WHERE s.dataset = $dataset
)""",
    "unit": """
frame AS (
    SELECT u.unit_id AS target_id, u.summary_id, u.position, s.split, s.topic_type, u.text, u.unit_id,
           d.source AS corpus
    FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
    LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
    WHERE u.dataset = $dataset AND u.kind = $level
)""",
}

_PAIRS = """
difficulty AS (
    SELECT target_id, min(value) AS difficulty FROM tag
    WHERE dataset = $dataset AND level = $level AND kind = 'difficulty' AND source = $reference
    GROUP BY target_id
),
pairs AS (
    SELECT c.source, f.target_id, f.summary_id, f.position, f.unit_id, f.text,
           coalesce(f.split, '') AS split, f.topic_type, coalesce(f.corpus, '') AS corpus,
           r.value AS ref_value, c.value AS cmp_value, c.score, d.difficulty,
           r.raw_value AS ref_raw, c.raw_value AS cmp_raw, r.explanation AS ref_explanation,
           c.explanation AS cmp_explanation
    FROM labels r
    JOIN labels c ON c.target_id = r.target_id AND list_contains($compared::VARCHAR[], c.source)
    JOIN frame f ON f.target_id = r.target_id
    LEFT JOIN difficulty d ON d.target_id = r.target_id
    WHERE r.source = $reference AND (r.raw_value IS NOT NULL OR r.score IS NOT NULL)
      AND (c.raw_value IS NOT NULL OR c.score IS NOT NULL)
)"""

_TALLY = """
SELECT 'pair' AS part, source, split, corpus, coalesce(topic_type, '') AS topic_type, ref_value, cmp_value, difficulty,
       CASE WHEN list_contains($scored::VARCHAR[], source) THEN target_id END AS unit,
       CASE WHEN list_contains($scored::VARCHAR[], source) THEN score END AS score,
       count(*)::BIGINT AS n
FROM pairs GROUP BY ALL
UNION ALL
SELECT 'coverage', source, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, count(*)::BIGINT
FROM labels WHERE raw_value IS NOT NULL OR score IS NOT NULL GROUP BY source"""
_TALLY_COLUMNS = "part source split corpus topic_type ref_value cmp_value difficulty unit score n".split()

_UNIT_NOTES = """,
unit_notes AS (
    SELECT l.source, u.summary_id,
           string_agg(printf('%s %d: %s', u.kind, u.position + 1, l.explanation), ' | '
                      ORDER BY u.kind, u.position) AS notes
    FROM current_label l JOIN unit u ON u.dataset = l.dataset AND u.unit_id = l.target_id
    WHERE l.dataset = $dataset AND $level = 'summary' AND l.level IN ('sentence', 'claim')
      AND l.explanation IS NOT NULL AND l.source IN ($reference, $source)
    GROUP BY l.source, u.summary_id
)"""

_EXAMPLES = """
SELECT p.summary_id, p.unit_id, p.position, nullif(p.split, '') AS split, p.topic_type, p.text,
       p.ref_raw AS reference_label, p.cmp_raw AS compared_label, p.score,
       coalesce(p.ref_explanation, rn.notes) AS reference_explanation,
       coalesce(p.cmp_explanation, cn.notes) AS compared_explanation
FROM pairs p
LEFT JOIN unit_notes rn ON rn.source = $reference AND rn.summary_id = p.summary_id
LEFT JOIN unit_notes cn ON cn.source = $source AND cn.summary_id = p.summary_id
WHERE p.source = $source AND p.ref_value = $reference_value
  AND (CASE WHEN $is_score THEN (CASE WHEN p.score > $threshold THEN 'faithful' ELSE 'unfaithful' END)
            ELSE p.cmp_value END) = $compared_value
  AND ($split = 'all' OR p.split = $split)
  AND ($corpus = 'all' OR p.corpus = $corpus)
  AND ($topic_type = 'all' OR p.topic_type = $topic_type)
ORDER BY p.summary_id, p.position NULLS FIRST"""

# Which levels each source speaks at, and whether with values or only scores. It reads the label
# events rather than current_label: events never lose a value, so the answer is the same, and it
# skips a window over every label of the dataset (300 ms at 100x the bundled size).
_SOURCES = """
SELECT l.source, l.level, count(l.value) > 0 AS has_value, count(l.score) > 0 AS has_score,
       any_value(s.kind), any_value(s.description)
FROM label l LEFT JOIN label_source s ON s.dataset = l.dataset AND s.source = l.source
WHERE l.dataset = $dataset
GROUP BY l.source, l.level"""

_VALUES = """
SELECT source, level, value::VARCHAR, count(*) FROM current_label
WHERE dataset = $dataset AND list_contains($sources::VARCHAR[], source) AND list_contains($levels::VARCHAR[], level)
  AND value IS NOT NULL
GROUP BY ALL ORDER BY ALL"""


def _query(level: str, derived: bool, body: str, extra: str = "") -> str:
    """The statement: labels (direct, plus derived summary labels only when a source needs them;
    materialized once), the units of the level, the pairs, any extra CTEs, then `body`."""
    labels = _DIRECT + ("\n    UNION ALL" + _DERIVED if derived else "")
    frame = _FRAME["summary" if level == "summary" else "unit"]
    return f"WITH labels AS MATERIALIZED ({labels}\n),{frame},{_PAIRS}{extra}\n{body}"


# --- sources ----------------------------------------------------------------------------------------


def ensure_dataset(cur: duckdb.DuckDBPyConnection, dataset: str) -> None:
    names = [row[0] for row in cur.execute("SELECT name FROM dataset ORDER BY name").fetchall()]
    if dataset not in names:
        raise NotFoundError(f"no dataset named {dataset!r}", f"choose one of {', '.join(names) or '(none loaded)'}")


def available_sources(cur: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, dict[str, SourceChoice]]:
    """{level: {source: SourceChoice}} for every level where the dataset has labels (gold first)."""
    ensure_dataset(cur, dataset)
    rows = execute_named(cur, _SOURCES, {"dataset": dataset}).fetchall()
    by_level: dict[str, dict[str, SourceChoice]] = {level: {} for level in LEVELS}
    for source, level, has_value, has_score, kind, description in rows:
        if has_value or has_score:
            mode = "label" if has_value else "score"
            by_level[level][source] = SourceChoice(source, kind or "evaluator", mode, level, description)
    for from_level in ("sentence", "claim"):
        for source, choice in by_level[from_level].items():
            if choice.mode == "label" and source not in by_level["summary"]:
                by_level["summary"][source] = SourceChoice(
                    source, choice.kind, "derived", from_level, choice.description
                )
    return {
        level: dict(sorted(choices.items(), key=lambda item: (item[0] != GOLD, item[0])))
        for level, choices in by_level.items()
        if choices
    }


def _distinct(cur: duckdb.DuckDBPyConnection, sql: str, dataset: str) -> tuple[str, ...]:
    return tuple(row[0] for row in cur.execute(sql, [dataset]).fetchall())


def splits(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    found = _distinct(cur, "SELECT DISTINCT split FROM summary WHERE dataset = ? AND split IS NOT NULL", dataset)
    return tuple(sorted(found, key=lambda s: (s not in TUNING_SPLITS, s != "test", s)))


def topic_types(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    sql = "SELECT DISTINCT topic_type FROM summary WHERE dataset = ? AND topic_type IS NOT NULL ORDER BY 1"
    return _distinct(cur, sql, dataset)


def has_topic_types(cur: duckdb.DuckDBPyConnection, dataset: str) -> bool:
    """Whether summaries carry a topic type (TofuEval main / marginal), so a per-topic breakdown exists."""
    return bool(topic_types(cur, dataset))


def corpora(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    """The corpora (documents' `source`) the dataset's summaries come from."""
    sql = """SELECT DISTINCT d.source FROM summary s JOIN document d ON d.dataset = s.dataset
             AND d.document_id = s.document_id WHERE s.dataset = ? AND d.source IS NOT NULL ORDER BY 1"""
    return _distinct(cur, sql, dataset)


def groups(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[Group, ...]:
    """All units, each topic type, then each corpus and its topic types (TofuEval Table 3's cells);
    corpora only when there are two or more (one corpus is all units)."""
    types, found = topic_types(cur, dataset), corpora(cur, dataset)
    per_corpus = [g for c in found for g in (Group(corpus=c), *(Group(c, t) for t in types))] if len(found) > 1 else []
    return (Group(), *(Group(topic_type=t) for t in types), *per_corpus)


def choose_sources(
    choices: dict[str, dict[str, SourceChoice]], dataset: str, level: str, reference: str, sources: list[str] | None
) -> tuple[SourceChoice, list[SourceChoice]]:
    """The reference and the compared sources (default: every other source at `level`), checked."""
    if level not in LEVELS:
        raise FaithLensError(f"unknown level {level!r}", f"use one of {', '.join(LEVELS)}")
    at_level = choices.get(level, {})
    if not at_level:
        have = ", ".join(choices) or "none"
        raise NotFoundError(f"{dataset} has no labels at the {level} level", f"levels with labels: {have}")
    listing = ", ".join(at_level)
    if reference not in at_level:
        raise NotFoundError(
            f"no label source {reference!r} at the {level} level of {dataset}", f"choose one of {listing}"
        )
    if at_level[reference].mode == "score":
        raise FaithLensError(
            f"{reference} only has scores at the {level} level", "a reference needs labels; pick a label source"
        )
    names = [name for name in at_level if name != reference] if sources is None else sources
    unknown = [name for name in names if name not in at_level]
    if unknown:
        raise NotFoundError(
            f"no label source {unknown[0]!r} at the {level} level of {dataset}", f"choose from {listing}"
        )
    if reference in names:
        raise FaithLensError(f"{reference} is the reference", "compare it with other sources")
    if not names:
        raise FaithLensError(
            f"only {reference} labels the {level} level of {dataset}: nothing to compare it with",
            "import or run another label source, or choose another level",
        )
    return at_level[reference], [at_level[name] for name in dict.fromkeys(names)]


def _params(dataset: str, level: str, reference: SourceChoice, compared: list[SourceChoice], mapping: Mapping) -> dict:
    involved = [reference, *compared]
    return {
        "dataset": dataset,
        "level": level,
        "reference": reference.name,
        "compared": [c.name for c in compared],
        "direct": [c.name for c in involved if c.mode != "derived"],
        "from_sentence": [c.name for c in involved if c.mode == "derived" and c.from_level == "sentence"],
        "from_claim": [c.name for c in involved if c.mode == "derived" and c.from_level == "claim"],
        "faithful": mapping.values_to(FAITHFUL),
        "unfaithful": mapping.values_to(UNFAITHFUL),
        "labelled": [c.name for c in compared if c.mode != "score"],
        "scored": [c.name for c in compared if c.mode == "score"],
    }


def tally(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    level: str,
    reference: SourceChoice,
    compared: list[SourceChoice],
    mapping: Mapping,
) -> Tally:
    """Counts of (reference label, compared label) after the mapping, per source, split, corpus, topic type
    and difficulty; a score source's rows are per unit, with its score, so a threshold can be applied."""
    params = _params(dataset, level, reference, compared, mapping)
    derived = any(c.mode == "derived" for c in (reference, *compared))
    rows = execute_named(cur, _query(level, derived, _TALLY), params).fetchall()
    frame = pd.DataFrame(rows, columns=_TALLY_COLUMNS)
    coverage = dict(frame.loc[frame["part"] == "coverage", ["source", "n"]].itertuples(index=False))
    return Tally(frame[frame["part"] == "pair"], {name: int(n) for name, n in coverage.items()})


def cell_units(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    level: str,
    reference: SourceChoice,
    choice: SourceChoice,
    mapping: Mapping,
    cell: tuple[str, str],
    split: str,
    group: Group,
    threshold: float | None,
) -> list[Example]:
    """The units where the reference says `cell[0]` and `choice` says `cell[1]` (after the mapping;
    for a score source, after `threshold`), on one split ('all' for every one) and group of units."""
    params = {
        **_params(dataset, level, reference, [choice], mapping),
        "source": choice.name,
        "reference_value": cell[0],
        "compared_value": cell[1],
        "is_score": choice.mode == "score",
        "threshold": float(threshold) if threshold is not None else 0.0,
        "split": split,
        "corpus": group.corpus,
        "topic_type": group.topic_type,
    }
    derived = choice.mode == "derived" or reference.mode == "derived"
    return fetch_all(cur, Example, _query(level, derived, _EXAMPLES, _UNIT_NOTES), params)


def values_used(
    cur: duckdb.DuckDBPyConnection, dataset: str, level: str, sources: list[str]
) -> dict[str, dict[str, int]]:
    """{source: {vocabulary value: count}} of the named sources' current labels at `level` (for a
    derived source, at the level its labels come from): what the mapping has to decide about."""
    choices = available_sources(cur, dataset).get(level, {})
    wanted = {(name, choices[name].from_level) for name in sources if name in choices}
    params = {"dataset": dataset, "sources": [name for name, _ in wanted], "levels": [lvl for _, lvl in wanted]}
    out: dict[str, dict[str, int]] = {}
    for source, at_level, value, n in execute_named(cur, _VALUES, params).fetchall():
        if (source, at_level) in wanted:
            out.setdefault(source, {})[value] = n
    return out
