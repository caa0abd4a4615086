"""The values each Explore filter can take in one dataset, and a filter state checked against them
(values an old or hand-edited link names that the dataset lacks are dropped, each with a note)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import duckdb

from faithlens.analysis.generator_names import display_order, generator_sql, group_sql, resolve
from faithlens.filters import NO_LABEL, TAG_ITEM, Filters, join_words
from faithlens.querystate import ignored
from faithlens.store import execute_named, fetch_one
from faithlens.unit_filter import UnitFilter, read_condition, split_item
from faithlens.vocab import GOLD, VERDICTS


@dataclass(frozen=True)
class FilterOptions:
    """The values each filter can take in one dataset (empty tuple: the filter does not apply)."""

    splits: tuple[str, ...]
    generators: tuple[str, ...]
    """Every generator as shown, and each group of them (TofuEval's pooled slots), in display order."""
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
    corpora: tuple[str, ...] = ()
    """The corpora (documents' `source`) summaries come from, when there are two or more."""

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
          (SELECT coalesce(list(DISTINCT generator ORDER BY generator), []) FROM (
             SELECT unnest([{generator}, {group}]) AS generator
             FROM summary s WHERE s.dataset = $dataset AND s.model IS NOT NULL)) AS generators,
          (SELECT coalesce(list(DISTINCT topic ORDER BY topic), []) FROM summary
             WHERE dataset = $dataset AND topic IS NOT NULL) AS topics,
          (SELECT coalesce(list(DISTINCT topic_type ORDER BY topic_type), []) FROM summary
             WHERE dataset = $dataset AND topic_type IS NOT NULL) AS topic_types,
          (SELECT coalesce(list(DISTINCT value ORDER BY value), []) FROM tag
             WHERE dataset = $dataset AND kind = 'difficulty') AS difficulties,
          (SELECT coalesce(list(DISTINCT value ORDER BY value), []) FROM tag
             WHERE dataset = $dataset AND kind = 'error_type') AS error_types,
          (SELECT CASE WHEN count(DISTINCT d.source) > 1 THEN list(DISTINCT d.source ORDER BY d.source) ELSE [] END
             FROM summary s JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
             WHERE s.dataset = $dataset AND d.source IS NOT NULL) AS corpora,
          (SELECT coalesce(list(DISTINCT {tag_item} ORDER BY {tag_item}), []) FROM tag
             WHERE dataset = $dataset AND kind NOT IN ('error_type', 'difficulty')) AS tags,
          (SELECT coalesce(list(source ORDER BY source <> 'gold', kind, source), []) FROM label_source
             WHERE dataset = $dataset) AS sources,
          (SELECT coalesce(list(DISTINCT source ORDER BY source <> 'gold', source), []) FROM label
             WHERE dataset = $dataset AND level = 'summary' AND value IS NOT NULL) AS summary_sources
        """.format(generator=generator_sql("s"), group=group_sql("s"), tag_item=TAG_ITEM),
        {"dataset": dataset},
    )
    labels = execute_named(cur, _SUMMARY_LABELS, {"dataset": dataset, "no_label": NO_LABEL}).fetchall()
    repeated = cur.execute(_REPEATED_SOURCES, [dataset]).fetchall()
    return replace(
        options,
        generators=tuple(display_order(options.generators)),
        summary_labels=tuple(sorted(labels)),
        flip_sources=tuple(row[0] for row in repeated),
    )


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
        why = "its paper names this model per split; choose " + join_words(split_into, "or")
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
        "corpus": options.corpora,
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
    unit, unit_notes = _check_unit(filters.unit, options)
    if unit != filters.unit:
        changes["unit"] = unit
        notes += unit_notes
    return replace(filters, **changes), notes


def _check_unit(unit: UnitFilter, options: FilterOptions) -> tuple[UnitFilter, list[str]]:
    """Drop unit tags no unit carries and label conditions that cannot be read or name no source."""
    if not (unit.unit_tags or unit.unit_labels):
        return unit, []
    known = {
        *options.tags,
        *(f"error_type: {value}" for value in options.error_types),
        *(f"difficulty: {value}" for value in options.difficulties),
    }
    tags = tuple(t for t in unit.unit_tags if split_item(t) and t in known)
    notes = [
        ignored("unit_tags", t, "no summary or unit of this dataset carries that tag")
        for t in unit.unit_tags
        if t not in tags
    ]
    labels = []
    for item in unit.unit_labels:
        read = read_condition(item)
        if read is None:
            notes.append(ignored("unit_labels", item, "expected SOURCE: VERDICT, SOURCE: <=NUMBER or SOURCE: >NUMBER"))
        elif read[0] not in options.sources:
            notes.append(ignored("unit_labels", item, "no such label source here"))
        else:
            labels.append(item)
    if unit.unit_level is None:
        notes.append(
            ignored("unit_tags", ", ".join(unit.unit_tags + unit.unit_labels), "no unit_level says which units")
        )
    return replace(unit, unit_tags=tags, unit_labels=tuple(labels)), notes
