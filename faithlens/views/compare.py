"""The Compare page's read model and the `metrics` command: a reference against other label sources
at one level, with the papers' metrics for all units, per split (and, when asked, per topic type and
per corpus and its topic types, the cells of TofuEval's Table 3), and the drill-down into one cell
of a confusion matrix.

Counting happens in `faithlens.analysis.tally`; every metric comes from `faithlens.analysis.metrics`
(scikit-learn). A score source is compared at a threshold (`faithlens.analysis.thresholds`): tuned
on val/dev and applied to the other splits, so it has rows for those splits only, as in the
StorySumm and TofuEval papers; a dataset without val/dev is tuned and reported on all units together
(in-sample; the result says so).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import duckdb
import numpy as np
import pandas as pd

from faithlens.analysis import metrics, tally
from faithlens.analysis.mapping import DEFAULT, Mapping
from faithlens.analysis.metrics import CLASSES, BinaryMetrics
from faithlens.analysis.tally import Example, Group, SourceChoice, available_sources, has_topic_types, values_used
from faithlens.analysis.thresholds import ALL, GRID, TUNING_SPLITS, TUNINGS, Threshold
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.vocab import GOLD

__all__ = [
    "ALL",
    "JSON_KEYS",
    "PAIR_KEYS",
    "CompareResult",
    "Example",
    "Group",
    "MetricRow",
    "PairResult",
    "SourceChoice",
    "available_sources",
    "compare",
    "drill_down",
    "has_topic_types",
    "threshold_for",
    "values_used",
]

JSON_KEYS = ("source", "split", *(f.name for f in fields(BinaryMetrics)), "threshold", "left_out")
"""The scalar figures of one row of Compare's agreement table, in its column order (every metric of
`BinaryMetrics`, the threshold, the units left out), as `metrics --json` names them; each row adds
its confusion matrix and its pair's coverage (`PAIR_KEYS`)."""
PAIR_KEYS = ("reference_labelled", "labelled", "both", "tuned_on")
"""What Compare says of a pair under its matrix: how many units each source labels, how many both,
and the split a score source's threshold is tuned on (None for a label source or a set threshold)."""


@dataclass(frozen=True)
class MetricRow:
    """Metrics and the confusion matrix of one compared source on one split (and group of units)."""

    source: str
    split: str
    subset: Group
    metrics: BinaryMetrics
    confusion: tuple[tuple[int, int], tuple[int, int]]  # reference rows x compared columns, faithful first
    excluded: int  # units both sources label but the mapping (or a missing score) leaves out
    threshold: float | None = None

    @property
    def group(self) -> str:
        """The group's name: 'all', a topic type, a corpus, or a corpus and topic type ('mediasum main')."""
        return self.subset.name

    def as_json(self, with_group: bool = False) -> dict[str, object]:
        """Every figure of the row: JSON_KEYS, then `confusion` (reference rows x compared columns,
        faithful first, as the heatmap draws it)."""
        values = {
            **self.metrics.as_dict(),
            "source": self.source,
            "split": self.split,
            "threshold": self.threshold,
            "left_out": self.excluded,
        }
        out = {key: _rounded(values[key]) for key in JSON_KEYS}
        out["confusion"] = [list(line) for line in self.confusion]
        if with_group:
            out["topic_type"] = None if self.subset.topic_type == ALL else self.subset.topic_type
            out["corpus"] = None if self.subset.corpus == ALL else self.subset.corpus
        return out


@dataclass(frozen=True)
class PairResult:
    """Reference vs one compared source."""

    source: SourceChoice
    rows: tuple[MetricRow, ...]
    threshold: Threshold | None
    labelled: int  # units the compared source labels at this level
    both: int  # units both label, before the mapping

    def row(self, split: str = ALL, group: str = ALL) -> MetricRow | None:
        return next((r for r in self.rows if r.split == split and r.group == group), None)

    @property
    def excluded(self) -> int:
        """Units both label that the mapping (or a missing score) leaves out, over all reported splits."""
        overall = self.row(ALL)
        return overall.excluded if overall else sum(r.excluded for r in self.rows if r.group == ALL)


@dataclass(frozen=True)
class CompareResult:
    dataset: str
    level: str
    reference: SourceChoice
    reference_labelled: int
    mapping: Mapping
    splits: tuple[str, ...]
    groups: tuple[Group, ...]
    pairs: tuple[PairResult, ...]

    def json_rows(self, with_group: bool = False) -> list[dict[str, object]]:
        """Each pair's rows (`MetricRow.as_json`) with the pair's coverage (PAIR_KEYS): every number the
        Compare page shows for these choices."""
        return [
            {**row.as_json(with_group), **self._coverage(pair)}
            for pair in self.pairs
            for row in pair.rows
            if with_group or row.group == ALL
        ]

    def _coverage(self, pair: PairResult) -> dict[str, object]:
        tuned = pair.threshold is not None and pair.threshold.tuned
        values = (self.reference_labelled, pair.labelled, pair.both, pair.threshold.tuned_on if tuned else None)
        return dict(zip(PAIR_KEYS, values, strict=True))


def _rounded(value: object) -> object:
    return round(value, 6) if isinstance(value, float) else value


def _row_sets(
    splits: tuple[str, ...], groups: tuple[Group, ...], scored: bool, tuned_on: str
) -> list[tuple[str, Group]]:
    """Label sources: all units, then each split. A score source tuned on val/dev: each split (the
    tuning split and those the threshold is applied to), never the in-sample/out-of-sample mix."""
    if scored:
        shown = list(splits) if tuned_on != ALL else [ALL]
    else:
        shown = [ALL, *splits]
    return [(split, group) for split in shown for group in groups]


def _mask(frame: pd.DataFrame, split: str, group: Group) -> np.ndarray:
    keep = np.ones(len(frame), dtype=bool)
    for column, value in (("split", split), ("corpus", group.corpus), ("topic_type", group.topic_type)):
        if value != ALL:
            keep &= (frame[column] == value).to_numpy()
    return keep


def _metric_row(
    source: str,
    split: str,
    group: Group,
    frame: pd.DataFrame,
    predicted: np.ndarray,
    weight: np.ndarray,
    threshold: float | None,
) -> MetricRow:
    """Metrics over `frame`'s rows (reference in ref_value; `predicted` aligned with it)."""
    keep = _mask(frame, split, group)
    kept = keep & frame["ref_value"].notna().to_numpy() & pd.notna(predicted)
    reference = frame["ref_value"].to_numpy(dtype=object)[kept]
    chosen = np.asarray(predicted, dtype=object)[kept]
    weights = weight[kept]
    difficulty = frame["difficulty"].to_numpy(dtype=object)[kept]
    result = metrics.binary_metrics(reference, chosen, weights, difficulty)
    matrix = metrics.confusion(reference, chosen, weights)
    return MetricRow(
        source=source,
        split=split,
        subset=group,
        metrics=result,
        confusion=((int(matrix[0, 0]), int(matrix[0, 1])), (int(matrix[1, 0]), int(matrix[1, 1]))),
        excluded=int(weight[keep & ~kept].sum()),
        threshold=threshold,
    )


def threshold_for(
    source: str, scores: pd.DataFrame, splits: tuple[str, ...], override: float | None, tuning: str = GRID
) -> Threshold:
    """The caller's threshold, or the one tuned for balanced accuracy on the val/dev split by the
    `tuning` search (`thresholds.TUNINGS`).

    `scores` has one row per (unit group) with columns score, split, ref_value (the reference's
    binary label) and n; the range (the grid's, and a slider's) is [0, 1], or the scores' own range
    when they fall outside it.
    """
    tuned_on = next((s for s in splits if s in TUNING_SPLITS), ALL)
    grid = metrics.threshold_grid(scores["score"].to_numpy(dtype=float))
    sample = scores if tuned_on == ALL else scores[scores["split"] == tuned_on]
    sample = sample[sample["ref_value"].notna()]
    candidates = grid if tuning == GRID else metrics.cut_points(sample["score"].to_numpy(dtype=float))
    where = (float(grid[0]), float(grid[-1]), tuning, len(candidates))
    if override is not None:
        return Threshold(float(override), False, tuned_on, None, *where)
    tuned = metrics.tune_threshold(
        sample["score"].to_numpy(dtype=float), sample["ref_value"].to_numpy(dtype=object), candidates
    )
    if tuned is None:
        raise FaithLensError(
            f"cannot tune a threshold for {source}: the reference labels on the {tuned_on} units are not of both classes",
            "set a threshold by hand",
        )
    return Threshold(tuned, True, tuned_on, tuned, *where)


def _label_pair(
    choice: SourceChoice, counts: pd.DataFrame, splits: tuple[str, ...], groups: tuple[Group, ...]
) -> tuple[MetricRow, ...]:
    frame = counts[counts["source"] == choice.name]
    weight = frame["n"].to_numpy(dtype=np.int64)
    predicted = frame["cmp_value"].to_numpy(dtype=object)
    return tuple(
        _metric_row(choice.name, split, group, frame, predicted, weight, None)
        for split, group in _row_sets(splits, groups, scored=False, tuned_on=ALL)
    )


def _score_pair(
    choice: SourceChoice,
    counts: pd.DataFrame,
    splits: tuple[str, ...],
    groups: tuple[Group, ...],
    override: float | None,
    tuning: str,
) -> tuple[tuple[MetricRow, ...], Threshold]:
    frame = counts[counts["source"] == choice.name]
    scores = frame["score"].to_numpy(dtype=float)
    scored = ~np.isnan(scores)
    threshold = threshold_for(choice.name, frame[scored], splits, override, tuning)
    labels = metrics.apply_threshold(np.nan_to_num(scores), threshold.value)
    predicted = np.where(scored, labels, None)
    weight = frame["n"].to_numpy(dtype=np.int64)
    rows = tuple(
        _metric_row(choice.name, split, group, frame, predicted, weight, threshold.value)
        for split, group in _row_sets(splits, groups, scored=True, tuned_on=threshold.tuned_on)
    )
    return rows, threshold


def compare(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    level: str,
    reference: str = GOLD,
    sources: list[str] | None = None,
    mapping: Mapping = DEFAULT,
    thresholds: dict[str, float] | None = None,
    by_topic: bool = False,
    tuning: str = GRID,
) -> CompareResult:
    """Reference vs each compared source (default: every other source at this level).

    `thresholds` overrides the tuned threshold of named score sources; `by_topic` adds rows per
    topic type (TofuEval main / marginal) and, when the summaries come from two or more corpora, per
    corpus and per corpus and topic type (TofuEval's MediaSum / MeetingBank, as its Table 3) beside
    each split's rows; `tuning` is the threshold search (`thresholds.TUNINGS`: the release notebook's
    grid, or the exhaustive cut points).
    """
    if tuning not in TUNINGS:
        raise FaithLensError(f"threshold tuning {tuning!r} is not known", f"use one of {', '.join(TUNINGS)}")
    choices = available_sources(cur, dataset)
    ref, compared = tally.choose_sources(choices, dataset, level, reference, sources)
    splits = tally.splits(cur, dataset)
    groups = tally.groups(cur, dataset) if by_topic else (Group(),)
    counted = tally.tally(cur, dataset, level, ref, compared, mapping)
    counts = counted.counts
    pairs = []
    for choice in compared:
        if choice.mode == "score":
            override = (thresholds or {}).get(choice.name)
            rows, threshold = _score_pair(choice, counts, splits, groups, override, tuning)
        else:
            rows, threshold = _label_pair(choice, counts, splits, groups), None
        both = int(counts.loc[counts["source"] == choice.name, "n"].sum())
        pairs.append(PairResult(choice, rows, threshold, counted.coverage.get(choice.name, 0), both))
    return CompareResult(
        dataset=dataset,
        level=level,
        reference=ref,
        reference_labelled=counted.coverage.get(ref.name, 0),
        mapping=mapping,
        splits=splits,
        groups=groups,
        pairs=tuple(pairs),
    )


def drill_down(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    level: str,
    reference: str,
    source: str,
    reference_value: str,
    compared_value: str,
    mapping: Mapping = DEFAULT,
    split: str = ALL,
    group: str = ALL,
    threshold: float | None = None,
    tuning: str = GRID,
) -> list[Example]:
    """The units of one confusion-matrix cell: the reference says `reference_value`, `source` says
    `compared_value` (after the mapping; for a score source after `threshold`, tuned if None), on
    `split` and the units of `group` (a `Group.name`: 'all', 'main', 'mediasum', 'mediasum main')."""
    for name, value in (("reference_value", reference_value), ("compared_value", compared_value)):
        if value not in CLASSES:
            raise FaithLensError(f"{name} {value!r} is not a binary label", f"use {' or '.join(CLASSES)}")
    choices = available_sources(cur, dataset)
    ref, (choice,) = tally.choose_sources(choices, dataset, level, reference, [source])
    splits = tally.splits(cur, dataset)
    if split != ALL and split not in splits:
        raise NotFoundError(f"{dataset} has no split {split!r}", f"use all or one of {', '.join(splits)}")
    named = {g.name: g for g in tally.groups(cur, dataset)}
    if group not in named:
        raise NotFoundError(f"{dataset} has no group of units {group!r}", f"use one of {', '.join(named)}")
    if choice.mode == "score" and threshold is None:
        threshold = compare(cur, dataset, level, reference, [source], mapping, tuning=tuning).pairs[0].threshold.value
    return tally.cell_units(
        cur, dataset, level, ref, choice, mapping, (reference_value, compared_value), split, named[group], threshold
    )
