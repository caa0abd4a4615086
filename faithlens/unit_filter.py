"""Explore's unit filter: conditions that must hold on one and the same summary, sentence or claim,
so a figure's cell (the Errors page's "sentences of model_A tagged Reasoning Error that gpt-4 misses")
opens as exactly those units and Explore can count them.

A unit matches when, at `unit_level`:
- it carries every tag of `unit_tags` (`family: value`), from `tagged_by` when set (else any source);
  with `unit_only`, it carries no other value of those families (TofuEval Figure 4's single-type units);
- for each source named in `unit_labels`, that source's current label of the unit is one of the
  values given for it (`gold: unfaithful`, `gold: partial`), or its score is at most / above a
  threshold (`unieval: <=0.53`, `unieval: >0.53`: faithful is strictly above, as Compare applies it).

Entries of one source are alternatives; different sources must all hold. Every subquery binds the
dataset, so DuckDB evaluates each once (as `faithlens.filters` does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from faithlens.querystate import param
from faithlens.store import LATEST_LABEL
from faithlens.vocab import LEVELS, VERDICTS

TAG_SEPARATOR = ": "
"""Between family and value in `family: value` and between source and condition in `source: value`."""


@dataclass(frozen=True)
class LabelCondition:
    """What one source must say about the unit: one of `values`, or a score on one side of `threshold`."""

    source: str
    values: tuple[str, ...] = ()
    threshold: float | None = None
    above: bool = False

    def caption(self) -> str:
        if self.threshold is not None:
            side = "above" if self.above else "at or below"
            return f"{self.source} scores it {side} {self.threshold:g}"
        return f"{self.source} labels it " + " or ".join(self.values)


def level_noun(level: str, count: int = 2) -> str:
    """'sentence', 'sentences', 'summaries': a level named for `count` units."""
    if count == 1:
        return level
    return "summaries" if level == "summary" else f"{level}s"


def split_item(item: str) -> tuple[str, str] | None:
    """`family: value` or `source: condition` -> its two parts (None when there is no separator)."""
    head, sep, tail = item.rpartition(TAG_SEPARATOR)
    return (head.strip(), tail.strip()) if sep and head.strip() and tail.strip() else None


def read_condition(item: str) -> tuple[str, str | float, bool] | None:
    """`gold: unfaithful` -> ('gold', 'unfaithful', False); `unieval: >0.5` -> ('unieval', 0.5, True);
    None when the entry cannot be read."""
    parts = split_item(item)
    if parts is None:
        return None
    source, condition = parts
    if condition in VERDICTS:
        return source, condition, False
    for prefix, above in (("<=", False), (">", True)):
        if condition.startswith(prefix):
            try:
                number = float(condition[len(prefix) :])
            except ValueError:
                return None
            return (source, number, above) if math.isfinite(number) else None
    return None


def threshold_item(source: str, threshold: float, above: bool) -> str:
    """The `unit_labels` entry for a score on one side of a threshold."""
    return f"{source}{TAG_SEPARATOR}{'>' if above else '<='}{threshold!r}"


@dataclass(frozen=True)
class UnitFilter:
    """Conditions on one unit (see the module docstring); empty: no unit filter."""

    unit_level: str | None = param(choices=LEVELS)
    unit_tags: tuple[str, ...] = ()
    unit_only: bool = False
    tagged_by: str | None = None
    unit_labels: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.unit_level is not None and bool(self.unit_tags or self.unit_labels)

    def conditions(self) -> list[LabelCondition]:
        """The readable `unit_labels`, grouped per source in the order first named."""
        grouped: dict[str, LabelCondition] = {}
        for item in self.unit_labels:
            read = read_condition(item)
            if read is None:
                continue
            source, value, above = read
            known = grouped.get(source, LabelCondition(source))
            if isinstance(value, float):
                grouped[source] = LabelCondition(source, threshold=value, above=above)
            elif known.threshold is None:
                grouped[source] = LabelCondition(source, (*known.values, value))
        return list(grouped.values())

    def noun(self, count: int) -> str:
        return level_noun(self.unit_level or "unit", count)

    def caption(self) -> str:
        """'a sentence carries error_type: Reasoning Error (and no other error_type) and gold labels it unfaithful'."""
        article = "the summary" if self.unit_level == "summary" else f"a {self.unit_level}"
        parts = []
        if self.unit_tags:
            families = sorted({split_item(t)[0] for t in self.unit_tags if split_item(t)})
            words = f"{article} carries " + " and ".join(self.unit_tags)
            if self.tagged_by:
                words += f" (tagged by {self.tagged_by})"
            if self.unit_only:
                words += " and no other " + " or ".join(families)
            parts.append(words)
        conditions = [c.caption() for c in self.conditions()]
        if conditions and not parts:
            conditions[0] = f"for {article}, " + conditions[0]
        return " and ".join(parts + conditions)

    def matched_sql(self, dataset: str) -> tuple[str, list[object]]:
        """SQL of the matching units' (target_id, summary_id) and its `?` parameters."""
        if self.unit_level == "summary":
            column, sql, params = (
                "summary_id",
                "SELECT summary_id AS target_id, summary_id FROM summary WHERE dataset = ?",
                [],
            )
        else:
            column = "unit_id"
            sql = "SELECT unit_id AS target_id, summary_id FROM unit WHERE dataset = ? AND kind = ?"
            params = [self.unit_level]
        conditions, bound = self._tag_conditions(dataset, column)
        for condition in self.conditions():
            more, values = _label_condition(dataset, self.unit_level, column, condition)
            conditions.append(more)
            bound += values
        sql += "".join(f" AND {c}" for c in conditions)
        return sql, [dataset, *params, *bound]

    def _tag_conditions(self, dataset: str, column: str) -> tuple[list[str], list[object]]:
        by = " AND source = ?" if self.tagged_by else ""
        by_param = [self.tagged_by] if self.tagged_by else []
        out: list[str] = []
        params: list[object] = []
        for item in self.unit_tags:
            family, value = split_item(item) or ("", "")
            out.append(
                f"{column} IN (SELECT target_id FROM tag WHERE dataset = ? AND level = ? AND kind = ? AND value = ?{by})"
            )
            params += [dataset, self.unit_level, family, value, *by_param]
        if self.unit_only and self.unit_tags:
            families = sorted({(split_item(t) or ("", ""))[0] for t in self.unit_tags})
            out.append(
                f"{column} NOT IN (SELECT target_id FROM tag WHERE dataset = ? AND level = ? "
                f"AND list_contains(?, kind) AND NOT list_contains(?, kind || ': ' || value){by})"
            )
            params += [dataset, self.unit_level, families, list(self.unit_tags), *by_param]
        return out, params


def _label_condition(
    dataset: str, level: str | None, column: str, condition: LabelCondition
) -> tuple[str, list[object]]:
    latest = f"SELECT target_id, value, score FROM label WHERE dataset = ? AND source = ? AND level = ? {LATEST_LABEL}"
    if condition.threshold is not None:
        test = "score > ?" if condition.above else "score <= ?"
        wanted: object = condition.threshold
    else:
        test, wanted = "list_contains(?, value::VARCHAR)", list(condition.values)
    return f"{column} IN (SELECT target_id FROM ({latest}) WHERE {test})", [dataset, condition.source, level, wanted]
