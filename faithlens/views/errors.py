"""The Errors page's read model and the `errors` command: a family's values over generators, topic
types, corpora or splits (TofuEval Figure 2 and Appendix Figure 5, StorySumm Table 2's easy/hard,
ARM Figure 4, FABLES' verdicts per summarizer), which values share a unit, and the recall per value
of every other label source at the family's level (TofuEval Figure 4, StorySumm Table 8's % easy /
% hard, ARM Figure 7).

Recall of value T for source S: of the units carrying T (that the reference labels unfaithful after
the mapping, when there is a reference), the share S labels unfaithful. With `typed='single'`, only
units carrying no other value of the family count, as TofuEval Figure 4 divides its sentences ("each
subset contains only one error type"). A score source is turned into labels at the threshold Compare
uses (tuned for balanced accuracy on val/dev, unless set) and, like Compare, is reported on the
other splits; it is in-sample when the val/dev split itself is chosen. Units a source does not
label, or whose label the mapping leaves out, are not counted. The recall itself is scikit-learn's
(`faithlens.analysis.metrics.detected`, the % easy / % hard detected of Compare).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

from faithlens.analysis import metrics, tag_stats, tally
from faithlens.analysis.figures import BAR_COLUMNS, BarFigure, Table
from faithlens.analysis.generator_names import slot_note
from faithlens.analysis.mapping import DEFAULT, UNFAITHFUL, Mapping
from faithlens.analysis.tag_stats import DIMENSIONS, Family
from faithlens.analysis.thresholds import ALL, Threshold
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.unit_filter import level_noun
from faithlens.views import compare
from faithlens.vocab import GOLD

OF_TAGGED, OF_ALL = "tagged", "all"
DENOMINATORS = (OF_TAGGED, OF_ALL)
SINGLE, ANY_TYPE = "single", "any"
TYPED = (SINGLE, ANY_TYPE)
NO_REFERENCE = "none"
OTHER_SPLITS = "splits other than "
ALL_GROUPS = "all"


def find_family(cur: duckdb.DuckDBPyConnection, dataset: str, name: str, level: str | None = None) -> Family:
    """The family `name` (a tag kind or `verdict:SOURCE`) at `level` (needed when it has several)."""
    tally.ensure_dataset(cur, dataset)
    found = tag_stats.families(cur, dataset)
    matching = [f for f in found if f.name == name and (level is None or f.level == level)]
    if len(matching) == 1:
        return matching[0]
    if matching:
        levels = ", ".join(f.level for f in matching)
        raise FaithLensError(f"{name} is at several levels of {dataset}: {levels}", "choose one with --level")
    names = ", ".join(dict.fromkeys(f.name for f in found)) or "none"
    where = f" at the {level} level" if level else ""
    raise NotFoundError(f"{dataset} has no tag family or verdicts {name!r}{where}", f"families: {names}")


@dataclass(frozen=True)
class SpreadRow:
    family: str
    value: str
    group: str
    units: int
    pct: float | None

    def as_json(self) -> dict[str, object]:
        pct = None if self.pct is None else round(self.pct, 2)
        return {"family": self.family, "value": self.value, "group": self.group, "units": self.units, "pct": pct}


@dataclass(frozen=True)
class Distribution:
    """A family's values per group of `by` ('all' always last), as counts and % of `of`."""

    family: Family
    by: str | None
    of: str
    tagged_by: str | None
    values: tuple[str, ...]
    groups: tuple[str, ...]
    rows: tuple[SpreadRow, ...]
    totals: dict[str, tuple[int, int]]
    """group -> (units carrying any value, every unit of the level)."""

    @property
    def sources_counted(self) -> str:
        """Whose tags (or verdicts) the figure counts, in words."""
        return self.family.sources_counted(self.tagged_by)

    def notes(self) -> tuple[str, ...]:
        """What a reader must know beside the figure: a breakdown by shuffled slots says so."""
        note = slot_note(self.groups) if self.by in ("generator", "generator_group") else None
        return (note,) if note else ()

    def how(self) -> str:
        unit = level_noun(self.family.level)
        whose = self.sources_counted if self.family.verdicts_of else f"tagged by {self.sources_counted}"
        carried = f"carrying the value ({whose})"
        base = (
            f"{unit} carrying any value of {self.family.name} in the group"
            if self.of == OF_TAGGED
            else f"every {self.family.level} in the group"
        )
        many = " A unit carrying several values counts once under each, so a column can add up to more than 100%."
        return f"Each cell: the {unit} {carried}, and their % of {base}.{many if self.of == OF_TAGGED else ''}"


def distribution(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    family: Family,
    by: str | None = None,
    of: str = OF_TAGGED,
    tagged_by: str | None = None,
) -> Distribution:
    """The values of `family` per group of `by` (a key of DIMENSIONS, or None for all units)."""
    if by is not None and by not in DIMENSIONS:
        raise FaithLensError(f"cannot break down by {by!r}", f"use one of {', '.join(DIMENSIONS)}")
    if of not in DENOMINATORS:
        raise FaithLensError(f"unknown denominator {of!r}", f"use one of {', '.join(DENOMINATORS)}")
    spread = tag_stats.spread(cur, dataset, family, by, tagged_by)
    groups = (*spread.groups["group"].tolist(), ALL_GROUPS) if by else (ALL_GROUPS,)
    totals = {g: (int(t), int(u)) for g, t, u in spread.groups.itertuples(index=False)} if by else {}
    totals[ALL_GROUPS] = (int(spread.groups["tagged"].sum()), int(spread.groups["units"].sum()))
    cells = spread.cells.groupby(["value", "group"])["units"].sum()
    overall = spread.cells.groupby("value")["units"].sum().sort_values(ascending=False, kind="stable")
    values = tuple(overall.index)
    rows = []
    for value in values:
        for group in groups:
            units = int(overall[value]) if group == ALL_GROUPS else int(cells.get((value, group), 0))
            denominator = totals[group][0 if of == OF_TAGGED else 1]
            pct = 100.0 * units / denominator if denominator else None
            rows.append(SpreadRow(family.name, value, group, units, pct))
    return Distribution(family, by, of, tagged_by, values, groups, tuple(rows), totals)


SLOTS_FIRST = ("topic_type", "corpus", "generator_group", "generator", "split")
"""The breakdowns' order where generators are shuffled slots (TofuEval): what means something first."""


def available_dimensions(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    """The dimensions with at least two values in `dataset` (a breakdown into one group says nothing),
    the first being the page's default. `generator_group` is offered only where it pools some
    generators (TofuEval's shuffled slots); then topic type and corpus come first, as a slot is no model."""
    sql = (
        "SELECT " + ", ".join(f"count(DISTINCT {column})" for column in DIMENSIONS.values()) + " FROM summary s "
        "LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id WHERE s.dataset = ?"
    )
    counts = dict(zip(DIMENSIONS, cur.execute(sql, [dataset]).fetchone(), strict=True))
    pooled = 1 < counts["generator_group"] < counts["generator"]
    found = [name for name, n in counts.items() if n > 1 and (name != "generator_group" or pooled)]
    return tuple(sorted(found, key=SLOTS_FIRST.index) if pooled else found)


def together(
    cur: duckdb.DuckDBPyConnection, dataset: str, family: Family, tagged_by: str | None = None
) -> pd.DataFrame:
    """Units carrying both values, values on both axes (the diagonal: units carrying the value)."""
    pairs = tag_stats.together(cur, dataset, family, tagged_by)
    values = list(pairs.groupby("first")["units"].max().sort_values(ascending=False, kind="stable").index)
    matrix = pairs.pivot(index="first", columns="second", values="units").reindex(index=values, columns=values)
    return matrix.fillna(0).astype(int)


@dataclass(frozen=True)
class RecallRow:
    family: str
    value: str
    source: str
    flagged: int
    total: int
    recall: float | None
    units: str
    """Which units counted, in words ('all', 'test', 'splits other than val')."""
    threshold: float | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "family": self.family,
            "value": self.value,
            "source": self.source,
            "flagged": self.flagged,
            "total": self.total,
            "recall": None if self.recall is None else round(self.recall, 4),
            "units": self.units,
            "threshold": self.threshold,
        }


@dataclass(frozen=True)
class Recall:
    family: Family
    reference: str | None
    typed: str
    split: str
    mapping: Mapping
    sources: tuple[tally.SourceChoice, ...]
    thresholds: dict[str, Threshold]
    rows: tuple[RecallRow, ...]
    notes: tuple[str, ...]
    tagged_by: str | None = None

    def _tags(self) -> str:
        return "" if self.family.verdicts_of else f" (tagged by {self.family.sources_counted(self.tagged_by)})"

    def how(self) -> str:
        unit = level_noun(self.family.level)
        carrying = (
            f"carrying only that value of {self.family.name} (TofuEval Figure 4's single-type subsets)"
            if self.typed == SINGLE
            else f"carrying that value of {self.family.name} (with or without others)"
        )
        positives = f" that {self.reference} labels unfaithful" if self.reference else ""
        return (
            f"Recall of a value: of the {unit} {carrying}{self._tags()}{positives}, the share the source labels "
            f"unfaithful (mapping: {self.mapping}). Units the source does not label, or whose label the mapping leaves out, "
            "are not counted. Score sources are labelled at their threshold, as on Compare."
        )


def sources_at(cur: duckdb.DuckDBPyConnection, dataset: str, family: Family) -> dict[str, tally.SourceChoice]:
    """Every label source at the family's level, as Compare sees them (read once per recall)."""
    return tally.available_sources(cur, dataset).get(family.level, {})


def references(at_level: dict[str, tally.SourceChoice], family: Family) -> tuple[str, ...]:
    """The sources that can be the reference: labels (not only scores), the verdict family's own source left out."""
    return tuple(name for name, c in at_level.items() if c.mode == "label" and name != family.verdicts_of)


def recall_sources(
    at_level: dict[str, tally.SourceChoice], family: Family, reference: str | None
) -> list[tally.SourceChoice]:
    """The sources with labels or scores at the family's level, the reference and the verdict family's own source left out."""
    skip = {reference, family.verdicts_of}
    return [c for c in at_level.values() if c.mode in ("label", "score") and c.name not in skip]


def default_reference(at_level: dict[str, tally.SourceChoice], family: Family) -> str | None:
    """gold when it labels the family's level (and is not the family itself), else no reference."""
    return GOLD if GOLD in references(at_level, family) else None


def _check_reference(dataset: str, at_level: dict, family: Family, reference: str | None) -> None:
    if reference is not None and reference not in references(at_level, family):
        names = ", ".join(references(at_level, family)) or "none"
        raise NotFoundError(
            f"{reference!r} gives no labels at the {family.level} level of {dataset}", f"reference: {names} or none"
        )


def _pick(
    dataset: str, at_level: dict, family: Family, reference: str | None, sources: list[str] | None
) -> list[tally.SourceChoice]:
    candidates = {c.name: c for c in recall_sources(at_level, family, reference)}
    if sources is None:
        return list(candidates.values())
    unknown = [name for name in sources if name not in candidates]
    if unknown:
        raise NotFoundError(
            f"{unknown[0]!r} gives no labels or scores at the {family.level} level of {dataset} to count recall for",
            f"choose from {', '.join(candidates) or '(none)'}",
        )
    return [candidates[name] for name in dict.fromkeys(sources)]


def _thresholds(
    cur, dataset: str, family: Family, tuning: str | None, scored: list[str], mapping: Mapping, given: dict
) -> tuple[dict[str, Threshold], list[str]]:
    """Each score source's threshold as Compare applies it (tuned against `tuning`: the reference, or gold)."""
    found, notes = {}, []
    for name in scored:
        try:
            if tuning is None:
                raise FaithLensError("no reference labels to tune its threshold against", "set a threshold")
            result = compare.compare(cur, dataset, family.level, tuning, [name], mapping, given)
            found[name] = result.pairs[0].threshold
        except FaithLensError as error:
            notes.append(f"{name} is left out: {error.message}; {error.hint}")
    return found, notes


def _units_for(frame: pd.DataFrame, split: str, threshold: Threshold | None) -> tuple[pd.DataFrame, str, str | None]:
    """The rows a source is counted on, their description, and a note when that is in-sample."""
    tuned_on = threshold.tuned_on if threshold is not None and threshold.tuned else ALL
    if split == ALL and tuned_on != ALL:
        return frame[frame["split"] != tuned_on], OTHER_SPLITS + tuned_on, None
    rows = frame if split == ALL else frame[frame["split"] == split]
    in_sample = threshold is not None and threshold.tuned and tuned_on in (split, ALL)
    return rows, split, ("in-sample: its threshold was tuned on these units" if in_sample else None)


def _predicted(frame: pd.DataFrame, threshold: Threshold | None) -> np.ndarray:
    if threshold is None:
        return frame["verdict"].to_numpy(dtype=object)
    return metrics.apply_threshold(frame["score"].to_numpy(dtype=float), threshold.value)


def recall(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    family: Family,
    sources: list[str] | None = None,
    reference: str | None = None,
    mapping: Mapping = DEFAULT,
    thresholds: dict[str, float] | None = None,
    split: str = ALL,
    typed: str = SINGLE,
    tagged_by: str | None = None,
) -> Recall:
    """Recall per value of `family` for each source (default: every source at its level but the reference)."""
    if typed not in TYPED:
        raise FaithLensError(f"unknown unit choice {typed!r}", f"use one of {', '.join(TYPED)}")
    splits = tally.splits(cur, dataset)
    if split != ALL and split not in splits:
        raise NotFoundError(f"{dataset} has no split {split!r}", f"use all or one of {', '.join(splits)}")
    at_level = sources_at(cur, dataset, family)
    _check_reference(dataset, at_level, family, reference)
    chosen = _pick(dataset, at_level, family, reference, sources)
    scored = [c.name for c in chosen if c.mode == "score"]
    tuning = reference or default_reference(at_level, family)
    found, notes = _thresholds(cur, dataset, family, tuning, scored, mapping, thresholds or {})
    chosen = [c for c in chosen if c.mode != "score" or c.name in found]
    judged = tag_stats.judged(cur, dataset, family, [c.name for c in chosen], reference, mapping, tagged_by)
    if typed == SINGLE:
        judged = judged[judged["types"] == 1]
    rows = []
    for choice in chosen:
        frame, units, note = _units_for(judged[judged["source"] == choice.name], split, found.get(choice.name))
        notes += [f"{choice.name}: {note}"] if note else []
        predicted = _predicted(frame, found.get(choice.name))
        kept = np.array([p is not None for p in predicted], dtype=bool)
        frame, predicted = frame[kept], predicted[kept]
        weight = frame["n"].to_numpy(dtype=np.int64)
        positives = np.full(len(frame), UNFAITHFUL, dtype=object)
        carried = frame["value"].to_numpy(dtype=object)
        for value in family.values:
            mask = carried == value
            share = metrics.detected(positives, predicted, carried, value, weight)
            flagged = int(weight[mask & (predicted == UNFAITHFUL)].sum())
            threshold = found[choice.name].value if choice.name in found else None
            rows.append(
                RecallRow(
                    family.name,
                    value,
                    choice.name,
                    flagged,
                    int(weight[mask].sum()),
                    None if share is None else share / 100.0,
                    units,
                    threshold,
                )
            )
    return Recall(family, reference, typed, split, mapping, tuple(chosen), found, tuple(rows), tuple(notes), tagged_by)


def recall_figure(result: Recall) -> BarFigure:
    """Recall per value, one bar per source (TofuEval Figure 4, ARM Figure 7), and the table of it."""
    counted = [row for row in result.rows if row.recall is not None]
    bars = Table.of(BAR_COLUMNS, ((r.value, r.source, 100.0 * r.recall, r.flagged, r.total) for r in counted))
    counted_tags = {"tagged_by": result.family.sources_counted(result.tagged_by)}
    table = Table.from_records(
        ("family", "value", "source", "flagged", "total", "recall", "units", "threshold", "tagged_by"),
        ({**row.as_json(), **counted_tags} for row in result.rows),
    )
    names = ",".join(c.name for c in result.sources)
    return BarFigure(
        key=f"recall|{result.family.key}|{result.reference}|{result.typed}|{result.split}|{names}|{result.tagged_by}",
        title="Recall per value",
        caption=result.how(),
        bars=bars,
        table=table,
        stacked=False,
        axis="recall (% of the units flagged)",
    )
