"""Which summaries to show: the filters of Explore's list (and, next, of the Errors page and of
coding sessions' unit sets), each as bound SQL over the summary `s` and as plain English.

Filters follow datasette's filters: each one yields a bound SQL condition and a caption, so a page
can say "37 summaries where split is test and ...". `Filters` is one frozen dataclass that
`faithlens.querystate` turns into URL query parameters and back, so every filtered view is a link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb

from faithlens.analysis.generator_names import generator_sql, resolve
from faithlens.querystate import ignored, param
from faithlens.store import LATEST_LABEL, execute_named, fetch_one
from faithlens.vocab import GOLD, VERDICTS

NO_LABEL = "none"
MATCH_MODES = ("any", "all")


@dataclass(frozen=True)
class Clause:
    """One filter as SQL over summary `s` (bound parameters only) and as words."""

    sql: str
    params: tuple[object, ...]
    caption: str


@dataclass(frozen=True)
class Filters:
    """What the list shows. `source` is the label source whose labels the list, the label filter
    and the detail colouring use; `disagree_with` names a second source to compare it with.
    `generator` is a generator as shown (`faithlens.analysis.generator_names`): the raw model, or
    the paper's name with it where one model is two ("Claude-2 (raw: claude, val)")."""

    source: str = GOLD
    split: str | None = None
    generator: str | None = None
    topic: str | None = None
    topic_type: str | None = None
    label: str | None = param(choices=(*VERDICTS, NO_LABEL))
    difficulty: str | None = None
    error_types: tuple[str, ...] = ()
    error_match: str = param("any", choices=MATCH_MODES)
    disagree_with: str | None = None
    search: str | None = None
    tags: tuple[str, ...] = ()
    """Tags of other families than error types and difficulty, as `family: value` (a coder's
    `ambiguity_type: 2`, `claim_type: event`): summaries where the summary or a unit carries any."""
    flips: str | None = None
    """A label source fed by runs with repeats: only summaries where its verdict on the summary, or on
    one of its sentences or claims, differs between repeats (or runs)."""

    def clauses(self, dataset: str = "") -> list[Clause]:
        """The active filters, in a fixed order. `dataset` is bound into the subqueries (which are
        uncorrelated, so DuckDB evaluates each once); captions do not depend on it."""
        out = []
        for name, column, words in (
            ("split", "s.split", "split is {}"),
            ("generator", generator_sql("s"), "generator is {}"),
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
        out += [self._error_clause(dataset)] if self.error_types else []
        out += [self._tag_clause(dataset)] if self.tags else []
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
        if self.flips is not None:
            out.append(
                Clause(
                    _FLIPS,
                    (dataset, self.flips, dataset),
                    f"the verdict of {self.flips} flips across repeats",
                )
            )
        return out

    def _tag_clause(self, dataset: str) -> Clause:
        return Clause(
            f"s.summary_id IN (SELECT summary_id FROM ({_TAGGED_ANY}))",
            (dataset, list(self.tags), dataset),
            "the summary, a sentence or a claim is tagged " + _join(list(self.tags), "or"),
        )

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
_TAG_ITEM = "kind || ': ' || value"
"""A tag as the `tags` filter names it: `family: value`."""
_TAGGED_ANY = _TAGGED.replace(
    "AND kind = 'error_type' AND list_contains(?, value)", f"AND list_contains(?, {_TAG_ITEM})"
)
_DISAGREE = (
    "s.summary_id IN (SELECT a.target_id FROM current_label a JOIN current_label b ON b.target_id = a.target_id "
    "WHERE a.dataset = ? AND a.level = 'summary' AND a.source = ? "
    "AND b.dataset = ? AND b.level = 'summary' AND b.source = ? AND a.value <> b.value)"
)
# Text of the summary, of its units, or of a current label's explanation / evidence / reasons.
# Matching label events are found first, then kept only if they are the latest event of their
# (source, level, target) (the `current_label` rule, applied to the few targets hit).
_SEARCH = (
    "s.text ILIKE ? ESCAPE '\\' OR s.general_comment ILIKE ? ESCAPE '\\' "
    "OR s.summary_id IN (SELECT summary_id FROM unit WHERE dataset = ? AND text ILIKE ? ESCAPE '\\') "
    "OR s.summary_id IN ("
    "WITH hits AS MATERIALIZED (SELECT source, level, target_id, event_id FROM label WHERE dataset = ? "
    "AND (explanation ILIKE ? ESCAPE '\\' "
    "OR (len(evidence) > 0 AND array_to_string(evidence, ' ') ILIKE ? ESCAPE '\\') "
    "OR (len(reasons) > 0 AND array_to_string(reasons, ' ') ILIKE ? ESCAPE '\\'))), "
    "latest AS (SELECT source, level, target_id, event_id FROM label WHERE dataset = ? "
    f"AND target_id IN (SELECT target_id FROM hits) {LATEST_LABEL}), "
    "current_hits AS MATERIALIZED (SELECT level, target_id FROM hits JOIN latest USING (source, level, target_id, event_id)) "
    "SELECT target_id FROM current_hits WHERE level = 'summary' "
    "UNION ALL SELECT summary_id FROM unit WHERE dataset = ? "
    "AND unit_id IN (SELECT target_id FROM current_hits WHERE level <> 'summary'))"
)


FLIPPING = (
    "SELECT level, target_id FROM ("
    "SELECT r.level, e.target_id, arg_max(e.status, e.event_id) AS status, arg_max(e.label, e.event_id) AS label "
    "FROM llm_run_event e JOIN llm_run r ON r.run_id = e.run_id "
    "WHERE r.dataset = ? AND r.source = ? AND e.kind = 'item' "
    "GROUP BY e.run_id, e.target_id, e.repeat, r.level"
    ") WHERE status = 'ok' AND label IS NOT NULL GROUP BY level, target_id HAVING count(DISTINCT label) > 1"
)
"""(level, target_id) of the units whose verdicts from a source's runs differ: over every (run, unit,
repeat), the latest item event, when it succeeded; bound: dataset, source."""
_FLIPS = (
    f"s.summary_id IN (WITH flipping AS MATERIALIZED ({FLIPPING}) "
    "SELECT target_id FROM flipping WHERE level = 'summary' "
    "UNION ALL SELECT summary_id FROM unit WHERE dataset = ? "
    "AND unit_id IN (SELECT target_id FROM flipping WHERE level <> 'summary'))"
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
    summary_labels: tuple[tuple[str, str], ...] = ()
    """(source, value) for each summary label value a source gives, and (source, NO_LABEL) when
    some summary has no label from it: the summary-label filter offers only what occurs."""
    flip_sources: tuple[str, ...] = ()
    """Label sources fed by a run with repeats >= 2: the flips filter offers these."""
    tags: tuple[str, ...] = ()
    """`family: value` of every tag outside the error-type and difficulty families (coders', LLMs')."""

    def labels_of(self, source: str) -> tuple[str, ...]:
        """The summary-label filter's values for `source`, in the vocabulary's order."""
        given = {value for name, value in self.summary_labels if name == source}
        return tuple(value for value in (*VERDICTS, NO_LABEL) if value in given)


_SUMMARY_LABELS = """
SELECT source, value FROM (SELECT DISTINCT source, value FROM current_label
                           WHERE dataset = $dataset AND level = 'summary' AND value IS NOT NULL)
UNION ALL
SELECT l.source, $no_label FROM current_label l
WHERE l.dataset = $dataset AND l.level = 'summary' AND l.value IS NOT NULL
GROUP BY l.source
HAVING count(DISTINCT l.target_id) < (SELECT count(*) FROM summary WHERE dataset = $dataset)
"""


def filter_options(cur: duckdb.DuckDBPyConnection, dataset: str) -> FilterOptions:
    """The values each filter can take in `dataset`."""
    options = fetch_one(
        cur,
        FilterOptions,
        """
        SELECT
          (SELECT coalesce(list(DISTINCT split ORDER BY split), []) FROM summary
             WHERE dataset = $dataset AND split IS NOT NULL) AS splits,
          (SELECT coalesce(list(DISTINCT generator ORDER BY generator), []) FROM (SELECT {generator} AS generator
             FROM summary s WHERE s.dataset = $dataset AND s.model IS NOT NULL)) AS generators,
          (SELECT coalesce(list(DISTINCT topic ORDER BY topic), []) FROM summary
             WHERE dataset = $dataset AND topic IS NOT NULL) AS topics,
          (SELECT coalesce(list(DISTINCT topic_type ORDER BY topic_type), []) FROM summary
             WHERE dataset = $dataset AND topic_type IS NOT NULL) AS topic_types,
          (SELECT coalesce(list(DISTINCT value ORDER BY value), []) FROM tag
             WHERE dataset = $dataset AND kind = 'difficulty') AS difficulties,
          (SELECT coalesce(list(DISTINCT value ORDER BY value), []) FROM tag
             WHERE dataset = $dataset AND kind = 'error_type') AS error_types,
          (SELECT coalesce(list(DISTINCT {tag_item} ORDER BY {tag_item}), []) FROM tag
             WHERE dataset = $dataset AND kind NOT IN ('error_type', 'difficulty')) AS tags,
          (SELECT coalesce(list(source ORDER BY source <> 'gold', kind, source), []) FROM label_source
             WHERE dataset = $dataset) AS sources,
          (SELECT coalesce(list(DISTINCT source ORDER BY source <> 'gold', source), []) FROM label
             WHERE dataset = $dataset AND level = 'summary' AND value IS NOT NULL) AS summary_sources
        """.format(generator=generator_sql("s"), tag_item=_TAG_ITEM),
        {"dataset": dataset},
    )
    labels = execute_named(cur, _SUMMARY_LABELS, {"dataset": dataset, "no_label": NO_LABEL}).fetchall()
    repeated = cur.execute(_REPEATED_SOURCES, [dataset]).fetchall()
    return replace(options, summary_labels=tuple(sorted(labels)), flip_sources=tuple(row[0] for row in repeated))


_REPEATED_SOURCES = (
    "SELECT DISTINCT source FROM llm_run WHERE dataset = ? AND CAST(json_extract(spec, '$.repeats') AS INTEGER) >= 2 "
    "ORDER BY source"
)


def _check_generator(value: str, generators: tuple[str, ...]) -> tuple[str | None, str | None]:
    """A generator from a link: a shown name, or a paper's short name for one ("Claude-2"). A raw
    model that the papers split in two (StorySumm's `claude`) is ambiguous: dropped, naming both."""
    meant, split_into = resolve(value, generators)
    if meant is not None:
        return meant, None
    if split_into:
        why = "its paper names this model per split; choose " + _join(split_into, "or")
        return None, ignored("generator", value, why)
    return None, ignored("generator", value, "not in this dataset, so that filter is off")


def check_against(filters: Filters, options: FilterOptions) -> tuple[Filters, list[str]]:
    """Drop values the dataset does not have (e.g. from an old or hand-edited link); say which."""
    changes: dict[str, object] = {}
    notes = []
    if filters.generator is not None:
        changes["generator"], note = _check_generator(filters.generator, options.generators)
        notes += [note] if note else []
    singles = {
        "split": options.splits,
        "topic": options.topics,
        "topic_type": options.topic_types,
        "difficulty": options.difficulties,
        "disagree_with": options.summary_sources,
        "flips": options.flip_sources,
    }
    for name, allowed in singles.items():
        value = getattr(filters, name)
        if value is not None and value not in allowed:
            changes[name] = None
            notes.append(ignored(name, value, "not in this dataset, so that filter is off"))
    if filters.source not in options.sources:
        changes["source"] = GOLD if GOLD in options.sources else (options.sources[0] if options.sources else GOLD)
        notes.append(ignored("source", filters.source, f"no such label source here; showing {changes['source']}"))
    if filters.label is not None and filters.label not in options.labels_of(changes.get("source", filters.source)):
        changes["label"] = None
        notes.append(ignored("label", filters.label, "no summary has that label from this source"))
    unknown = [t for t in filters.error_types if t not in options.error_types]
    if unknown:
        changes["error_types"] = tuple(t for t in filters.error_types if t in options.error_types)
        notes += [ignored("error_types", name, "not an error type of this dataset") for name in unknown]
    strange = [t for t in filters.tags if t not in options.tags]
    if strange:
        changes["tags"] = tuple(t for t in filters.tags if t in options.tags)
        notes += [ignored("tags", name, "no summary or unit of this dataset carries that tag") for name in strange]
    return replace(filters, **changes), notes
