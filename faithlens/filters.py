"""Which summaries to show: the filters of Explore's list (and, next, of the Errors page and of
coding sessions' unit sets), each as bound SQL over the summary `s` and as plain English.

Filters follow datasette's filters: each one yields a bound SQL condition and a caption, so a page
can say "37 summaries where split is test and ...". `Filters` is one frozen dataclass that
`faithlens.querystate` turns into URL query parameters and back, so every filtered view is a link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from faithlens.analysis.generator_names import generator_sql, group_sql
from faithlens.querystate import param
from faithlens.store import LATEST_LABEL
from faithlens.unit_filter import UnitFilter
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
    the paper's name with it where one model is two ("Claude-2 (raw: claude, val)"), a shuffled
    slot ("slot A (shuffled per topic; raw: model_A)"), or a group of them (the pooled slots)."""

    source: str = GOLD
    split: str | None = None
    generator: str | None = None
    topic: str | None = None
    topic_type: str | None = None
    corpus: str | None = None
    """The corpus the summarised document comes from (its `source`: TofuEval's mediasum, meetingbank)."""
    label: str | None = param(choices=(*VERDICTS, NO_LABEL))
    difficulty: str | None = None
    error_types: tuple[str, ...] = ()
    error_match: str = param("any", choices=MATCH_MODES)
    disagree_with: str | None = None
    search: str | None = None
    tags: tuple[str, ...] = ()
    """Tags of other families than error types and difficulty, as `family: value` (a coder's
    `ambiguity_type: 2`, `claim_type: event`): summaries where the summary or a unit carries any
    (`tag_match` all: every one of them, on the summary or its units)."""
    tag_match: str = param("any", choices=MATCH_MODES)
    flips: str | None = None
    """A label source fed by runs with repeats: only summaries where its verdict on the summary, or on
    one of its sentences or claims, differs between repeats (or runs)."""
    unit: UnitFilter = field(default_factory=UnitFilter)
    """Conditions on one and the same summary, sentence or claim (an Errors page cell)."""

    def clauses(self, dataset: str = "") -> list[Clause]:
        """The active filters, in a fixed order. `dataset` is bound into the subqueries (which are
        uncorrelated, so DuckDB evaluates each once); captions do not depend on it."""
        out = []
        for name, column, words in (
            ("split", "s.split", "split is {}"),
            ("generator", f"{generator_sql('s')} = ? OR {group_sql('s')}", "generator is {}"),
            ("topic", "s.topic", "topic is “{}”"),
            ("topic_type", "s.topic_type", "the topic is {}"),
        ):
            value = getattr(self, name)
            if value is not None:
                params = (value, value) if name == "generator" else (value,)
                out.append(Clause(f"({column} = ?)", params, words.format(value)))
        if self.corpus is not None:
            out.append(Clause(_CORPUS, (dataset, self.corpus), f"the corpus is {self.corpus}"))
        out += [self._label_clause(dataset)] if self.label is not None else []
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
        if self.unit.active:
            matched, params = self.unit.matched_sql(dataset)
            out.append(
                Clause(f"s.summary_id IN (SELECT summary_id FROM ({matched}))", tuple(params), self.unit.caption())
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

    def _label_clause(self, dataset: str) -> Clause:
        if self.label == NO_LABEL:
            return Clause(
                f"s.summary_id NOT IN ({_SUMMARY_LABELLED})",
                (dataset, self.source),
                f"{self.source} gives no summary label",
            )
        return Clause(
            f"s.summary_id IN ({_SUMMARY_LABELLED} AND value = ?)",
            (dataset, self.source, self.label),
            f"{self.source} labels the summary {self.label}",
        )

    def _tag_clause(self, dataset: str) -> Clause:
        tags = list(self.tags)
        if self.tag_match == "all" and len(tags) > 1:
            return Clause(
                f"s.summary_id IN (SELECT summary_id FROM ({_TAGGED_ANY}) GROUP BY summary_id "
                "HAVING count(DISTINCT value) = ?)",
                (dataset, tags, dataset, len(tags)),
                "the summary and its sentences or claims carry all of the tags " + join_words(tags, "and"),
            )
        return Clause(
            f"s.summary_id IN (SELECT summary_id FROM ({_TAGGED_ANY}))",
            (dataset, tags, dataset),
            "the summary, a sentence or a claim is tagged " + join_words(tags, "or"),
        )

    def _error_clause(self, dataset: str) -> Clause:
        types = list(self.error_types)
        params = (dataset, types, dataset)
        if self.error_match == "all" and len(types) > 1:
            return Clause(
                f"s.summary_id IN (SELECT summary_id FROM ({_TAGGED}) GROUP BY summary_id "
                "HAVING count(DISTINCT value) = ?)",
                (*params, len(types)),
                "its sentences or claims carry all of the error types " + join_words(types, "and"),
            )
        return Clause(
            f"s.summary_id IN (SELECT summary_id FROM ({_TAGGED}))",
            params,
            "a sentence or claim carries the error type " + join_words(types, "or"),
        )

    def where(self, dataset: str) -> tuple[str, list[object]]:
        """SQL to append after `WHERE s.dataset = ?` (each clause starting with AND) and its parameters."""
        clauses = self.clauses(dataset)
        sql = "".join(f" AND ({c.sql})" for c in clauses)
        return sql, [p for c in clauses for p in c.params]

    def caption(self, count: int, units: int | None = None) -> str:
        """'37 summaries where split is test and generator is Model-Extra' (or 'All 96 summaries'); with a
        unit filter, `units` matched: '12 sentences of 9 summaries where ...'."""
        noun = "summary" if count == 1 else "summaries"
        clauses = self.clauses()
        if not clauses:
            return f"All {count:,} {noun}"
        if units is not None and self.unit.active and self.unit.unit_level != "summary":
            noun = f"{self.unit.noun(units)} of {count:,} {noun}"
            count = units
        return f"{count:,} {noun} where " + join_words([c.caption for c in clauses], "and")


def join_words(items: Sequence[str], word: str) -> str:
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
_TAGGED_FROM = (
    "WITH tagged AS MATERIALIZED ({select}) "
    "SELECT target_id AS summary_id, value FROM tagged WHERE level = 'summary' "
    "UNION ALL SELECT u.summary_id, t.value FROM tagged t JOIN ("
    "SELECT unit_id, summary_id FROM unit WHERE dataset = ? AND unit_id IN (SELECT target_id FROM tagged)"
    ") u ON u.unit_id = t.target_id WHERE t.level <> 'summary'"
)
"""(summary_id, value) of the tags `select` finds (level, target_id, value; bound: dataset, the tags'
list), on the summary or one of its units; bound after them: the dataset again."""
_TAGGED = _TAGGED_FROM.format(
    select="SELECT level, target_id, value FROM tag WHERE dataset = ? AND kind = 'error_type' AND list_contains(?, value)"
)
TAG_ITEM = "kind || ': ' || value"
"""A tag as the `tags` filter names it: `family: value`."""
_TAGGED_ANY = _TAGGED_FROM.format(
    select=f"SELECT level, target_id, {TAG_ITEM} AS value FROM tag WHERE dataset = ? AND list_contains(?, {TAG_ITEM})"
)
_CORPUS = "s.document_id IN (SELECT document_id FROM document WHERE dataset = ? AND source = ?)"
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
