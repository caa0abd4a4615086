"""Explore states for the Errors page's cells: each opens Explore on exactly the units a cell counts
(a `UnitFilter` on one unit: the value, the other value of a pair, the reference's and the source's
verdicts), with the generator, topic type, corpus or split of the cell's group as summary filters.
Explore then counts those units in its caption, so the number clicked is the number shown: a cell
counting only one source's tags (gold, by default) links with that tag source."""

from __future__ import annotations

from dataclasses import replace

from faithlens.analysis.mapping import FAITHFUL, UNFAITHFUL, Mapping
from faithlens.analysis.tag_stats import Family
from faithlens.analysis.thresholds import ALL
from faithlens.filters import Filters
from faithlens.unit_filter import TAG_SEPARATOR, UnitFilter, threshold_item
from faithlens.views.errors import ALL_GROUPS, OTHER_SPLITS, SINGLE, Distribution, Recall, RecallRow
from faithlens.views.states import ExploreState
from faithlens.vocab import GOLD

FILTER_OF = {"generator_group": "generator"}
"""The Explore filter a breakdown's group names, where it is not the breakdown's own name (Explore's
generator filter takes a group of generators, TofuEval's pooled slots, as well as one)."""


def _carries(family: Family, values: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The unit filter's part saying the unit carries each of `values`."""
    if family.verdicts_of is not None:
        return {"unit_labels": tuple(f"{family.verdicts_of}{TAG_SEPARATOR}{v}" for v in values)}
    return {"unit_tags": tuple(f"{family.name}{TAG_SEPARATOR}{v}" for v in values)}


def _verdicts(source: str, mapping: Mapping, binary: str) -> tuple[str, ...]:
    return tuple(f"{source}{TAG_SEPARATOR}{value}" for value in mapping.values_to(binary))


def spread_cell(dataset: str, shown: Distribution, value: str, group: str) -> ExploreState | None:
    """The units of one value in one group; None for the group of units without a recorded value."""
    if group == "":
        return None
    field = FILTER_OF.get(shown.by, shown.by)
    summary = {} if group == ALL_GROUPS or field is None else {field: group}
    unit = UnitFilter(unit_level=shown.family.level, tagged_by=shown.tagged_by, **_carries(shown.family, (value,)))
    return _state(dataset, Filters(**summary, unit=unit), shown.family.verdicts_of)


def pair_cell(dataset: str, family: Family, tagged_by: str | None, first: str, second: str) -> ExploreState:
    """The units carrying both values (one value on the diagonal)."""
    unit = UnitFilter(
        unit_level=family.level, tagged_by=tagged_by, **_carries(family, tuple(dict.fromkeys((first, second))))
    )
    return _state(dataset, Filters(unit=unit), family.verdicts_of)


def recall_cell(
    dataset: str, result: Recall, row: RecallRow, flagged: bool, splits: tuple[str, ...], tagged_by: str | None
) -> ExploreState | None:
    """The units of a recall row the source flags (or misses); None when its units are several splits
    that no single split filter names."""
    split = _split(row.units, splits)
    if split is False:
        return None
    family = result.family
    carried = _carries(family, (row.value,))
    labels = list(carried.get("unit_labels", ()))
    if result.reference is not None:
        labels += _verdicts(result.reference, result.mapping, UNFAITHFUL)
    if row.threshold is not None:
        labels.append(threshold_item(row.source, row.threshold, above=not flagged))
    else:
        labels += _verdicts(row.source, result.mapping, UNFAITHFUL if flagged else FAITHFUL)
    unit = UnitFilter(
        unit_level=family.level,
        unit_tags=carried.get("unit_tags", ()),
        unit_only=result.typed == SINGLE and family.verdicts_of is None,
        tagged_by=tagged_by,
        unit_labels=tuple(labels),
    )
    colour = result.reference or GOLD if row.threshold is not None else row.source
    return _state(dataset, Filters(split=split, unit=unit), colour)


def _split(units: str, splits: tuple[str, ...]) -> str | None | bool:
    """The split filter for a recall row's units: None for all, False when no one split says them."""
    if units == ALL:
        return None
    if units.startswith(OTHER_SPLITS):
        others = [s for s in splits if s != units.removeprefix(OTHER_SPLITS)]
        return others[0] if len(others) == 1 else False
    return units


def _state(dataset: str, filters: Filters, colour: str | None) -> ExploreState:
    """Explore coloured by `colour` (the source whose verdicts the cell is about), else gold."""
    return ExploreState(dataset=dataset, filters=replace(filters, source=colour or GOLD))
