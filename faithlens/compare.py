"""Compare label sources against a reference: the one core function behind the Compare page and
the `metrics` command, plus the drill-down into one cell of a confusion matrix.

How a source speaks at a level (`SourceChoice.mode`):
- `label`: it has labels with a value there; the mapping turns values into faithful / unfaithful.
- `score`: its labels there carry a score and no value (AlignScore, UniEval); a threshold turns a
  score into a label: faithful when the score is above it. By default the threshold is tuned on the
  val/dev split (`metrics.tune_threshold`) and applied to the other splits, so a score source has
  rows for those splits only, as in the StorySumm and TofuEval papers. A dataset without a val/dev
  split is tuned and reported on all units together (in-sample; the result says so).
- `derived` (summary level only): the source has no summary labels but labels the summary's
  sentences (or else claims): the summary is unfaithful if any unit maps to unfaithful, faithful if
  every labelled unit maps to faithful, and left out otherwise (TofuEval's aggregation).

Metrics are computed over the units both sources label and the mapping keeps, for all units
together and per split (and per topic type when asked: TofuEval's main / marginal).
Counts are aggregated in DuckDB; scikit-learn computes every metric from them (`faithlens.metrics`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

from faithlens import metrics
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.mapping import DEFAULT, FAITHFUL, UNFAITHFUL, Mapping
from faithlens.metrics import CLASSES, BinaryMetrics
from faithlens.vocab import GOLD, LEVELS

ALL = "all"
TUNING_SPLITS = ("val", "dev")
JSON_KEYS = (
    "source",
    "split",
    "n",
    "kappa",
    "pct_faithful",
    "precision",
    "recall",
    "pct_easy_detected",
    "pct_hard_detected",
    "balanced_accuracy",
    "f1_faithful",
    "f1_unfaithful",
    "threshold",
)


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
class Threshold:
    """The threshold applied to a score source and where it came from."""

    value: float
    tuned: bool  # False when the caller set it (the page's slider)
    tuned_on: str  # split the tuning used ('all' when the dataset has no val/dev split)
    tuned_value: float | None  # what tuning gave (None when the caller set the threshold)
    low: float
    high: float


@dataclass(frozen=True)
class MetricRow:
    """Metrics and the confusion matrix of one compared source on one split (and topic group)."""

    source: str
    split: str
    group: str
    metrics: BinaryMetrics
    confusion: tuple[tuple[int, int], tuple[int, int]]  # reference rows x compared columns, faithful first
    excluded: int  # units both sources label but the mapping (or a missing score) leaves out
    threshold: float | None = None

    def as_json(self, with_group: bool = False) -> dict[str, object]:
        values = {**self.metrics.as_dict(), "source": self.source, "split": self.split, "threshold": self.threshold}
        out = {key: _rounded(values[key]) for key in JSON_KEYS}
        if with_group:
            out["topic_type"] = None if self.group == ALL else self.group
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
    groups: tuple[str, ...]
    pairs: tuple[PairResult, ...]

    def json_rows(self, with_group: bool = False) -> list[dict[str, object]]:
        return [row.as_json(with_group) for pair in self.pairs for row in pair.rows if with_group or row.group == ALL]


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


def _rounded(value: object) -> object:
    return round(value, 6) if isinstance(value, float) else value


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
           s.text, NULL::VARCHAR AS unit_id
    FROM summary s WHERE s.dataset = $dataset
)""",
    "unit": """
frame AS (
    SELECT u.unit_id AS target_id, u.summary_id, u.position, s.split, s.topic_type, u.text, u.unit_id
    FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
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
           coalesce(f.split, '') AS split, f.topic_type,
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
SELECT 'pair' AS part, source, split, coalesce(topic_type, '') AS topic_type, ref_value, cmp_value, difficulty,
       CASE WHEN list_contains($scored::VARCHAR[], source) THEN target_id END AS unit,
       CASE WHEN list_contains($scored::VARCHAR[], source) THEN score END AS score,
       count(*)::BIGINT AS n
FROM pairs GROUP BY ALL
UNION ALL
SELECT 'coverage', source, NULL, NULL, NULL, NULL, NULL, NULL, NULL, count(*)::BIGINT
FROM labels WHERE raw_value IS NOT NULL OR score IS NOT NULL GROUP BY source"""
_TALLY_COLUMNS = ["part", "source", "split", "topic_type", "ref_value", "cmp_value", "difficulty", "unit", "score", "n"]

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
SELECT p.summary_id, p.unit_id, p.position, nullif(p.split, ''), p.topic_type, p.text, p.ref_raw, p.cmp_raw,
       p.score, coalesce(p.ref_explanation, rn.notes), coalesce(p.cmp_explanation, cn.notes)
FROM pairs p
LEFT JOIN unit_notes rn ON rn.source = $reference AND rn.summary_id = p.summary_id
LEFT JOIN unit_notes cn ON cn.source = $source AND cn.summary_id = p.summary_id
WHERE p.source = $source AND p.ref_value = $reference_value
  AND (CASE WHEN $is_score THEN (CASE WHEN p.score > $threshold THEN 'faithful' ELSE 'unfaithful' END)
            ELSE p.cmp_value END) = $compared_value
  AND ($split = 'all' OR p.split = $split)
  AND ($group = 'all' OR p.topic_type = $group)
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


def _run(cur: duckdb.DuckDBPyConnection, sql: str, params: dict[str, object]) -> duckdb.DuckDBPyConnection:
    """Execute with exactly the named parameters `sql` uses (DuckDB refuses extra ones)."""
    used = set(re.findall(r"\$(\w+)", sql))
    return cur.execute(sql, {key: value for key, value in params.items() if key in used})


def _query(level: str, derived: bool, body: str, extra: str = "") -> str:
    """The statement: labels (direct, plus derived summary labels only when a source needs them;
    materialized once), the units of the level, the pairs, any extra CTEs, then `body`."""
    labels = _DIRECT + ("\n    UNION ALL" + _DERIVED if derived else "")
    frame = _FRAME["summary" if level == "summary" else "unit"]
    return f"WITH labels AS MATERIALIZED ({labels}\n),{frame},{_PAIRS}{extra}\n{body}"


# --- sources ----------------------------------------------------------------------------------------


def _ensure_dataset(cur: duckdb.DuckDBPyConnection, dataset: str) -> None:
    names = [row[0] for row in cur.execute("SELECT name FROM dataset ORDER BY name").fetchall()]
    if dataset not in names:
        raise NotFoundError(f"no dataset named {dataset!r}", f"choose one of {', '.join(names) or '(none loaded)'}")


def available_sources(cur: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, dict[str, SourceChoice]]:
    """{level: {source: SourceChoice}} for every level where the dataset has labels (gold first)."""
    _ensure_dataset(cur, dataset)
    rows = _run(cur, _SOURCES, {"dataset": dataset}).fetchall()
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


def _splits(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    found = [
        row[0]
        for row in cur.execute(
            "SELECT DISTINCT split FROM summary WHERE dataset = ? AND split IS NOT NULL", [dataset]
        ).fetchall()
    ]
    return tuple(sorted(found, key=lambda s: (s not in TUNING_SPLITS, s != "test", s)))


def _topic_types(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    rows = cur.execute(
        "SELECT DISTINCT topic_type FROM summary WHERE dataset = ? AND topic_type IS NOT NULL ORDER BY 1", [dataset]
    ).fetchall()
    return tuple(row[0] for row in rows)


def has_topic_types(cur: duckdb.DuckDBPyConnection, dataset: str) -> bool:
    """Whether summaries carry a topic type (TofuEval main / marginal), so a per-topic breakdown exists."""
    return bool(_topic_types(cur, dataset))


def _choose(
    choices: dict[str, dict[str, SourceChoice]], dataset: str, level: str, reference: str, sources: list[str] | None
) -> tuple[SourceChoice, list[SourceChoice]]:
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


# --- metrics over row sets --------------------------------------------------------------------------


def _row_sets(splits: tuple[str, ...], groups: tuple[str, ...], scored: bool, tuned_on: str) -> list[tuple[str, str]]:
    """Label sources: all units, then each split. A score source tuned on val/dev: each split (the
    tuning split and those the threshold is applied to), never the in-sample/out-of-sample mix."""
    if scored:
        shown = list(splits) if tuned_on != ALL else [ALL]
    else:
        shown = [ALL, *splits]
    return [(split, group) for split in shown for group in groups]


def _mask(frame: pd.DataFrame, split: str, group: str) -> np.ndarray:
    keep = np.ones(len(frame), dtype=bool)
    if split != ALL:
        keep &= (frame["split"] == split).to_numpy()
    if group != ALL:
        keep &= (frame["topic_type"] == group).to_numpy()
    return keep


def _metric_row(
    source: str,
    split: str,
    group: str,
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
        group=group,
        metrics=result,
        confusion=((int(matrix[0, 0]), int(matrix[0, 1])), (int(matrix[1, 0]), int(matrix[1, 1]))),
        excluded=int(weight[keep & ~kept].sum()),
        threshold=threshold,
    )


def _threshold(source: str, scores: pd.DataFrame, splits: tuple[str, ...], override: float | None) -> Threshold:
    """The caller's threshold, or the one tuned for balanced accuracy on the val/dev split."""
    tuned_on = next((s for s in splits if s in TUNING_SPLITS), ALL)
    grid = metrics.threshold_grid(scores["score"].to_numpy(dtype=float))
    if override is not None:
        return Threshold(float(override), False, tuned_on, None, float(grid[0]), float(grid[-1]))
    tuning = scores if tuned_on == ALL else scores[scores["split"] == tuned_on]
    tuning = tuning[tuning["ref_value"].notna()]
    tuned = metrics.tune_threshold(
        tuning["score"].to_numpy(dtype=float), tuning["ref_value"].to_numpy(dtype=object), grid
    )
    if tuned is None:
        raise FaithLensError(
            f"cannot tune a threshold for {source}: the reference labels on the {tuned_on} units are not of both classes",
            "set a threshold by hand",
        )
    return Threshold(tuned, True, tuned_on, tuned, float(grid[0]), float(grid[-1]))


def _label_pair(
    choice: SourceChoice, counts: pd.DataFrame, splits: tuple[str, ...], groups: tuple[str, ...]
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
    groups: tuple[str, ...],
    override: float | None,
) -> tuple[tuple[MetricRow, ...], Threshold]:
    frame = counts[counts["source"] == choice.name]
    scores = frame["score"].to_numpy(dtype=float)
    scored = ~np.isnan(scores)
    threshold = _threshold(choice.name, frame[scored], splits, override)
    labels = metrics.apply_threshold(np.nan_to_num(scores), threshold.value)
    predicted = np.where(scored, labels, None)
    weight = frame["n"].to_numpy(dtype=np.int64)
    rows = tuple(
        _metric_row(choice.name, split, group, frame, predicted, weight, threshold.value)
        for split, group in _row_sets(splits, groups, scored=True, tuned_on=threshold.tuned_on)
    )
    return rows, threshold


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


def compare(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    level: str,
    reference: str = GOLD,
    sources: list[str] | None = None,
    mapping: Mapping = DEFAULT,
    thresholds: dict[str, float] | None = None,
    by_topic: bool = False,
) -> CompareResult:
    """Reference vs each compared source (default: every other source at this level).

    `thresholds` overrides the tuned threshold of named score sources; `by_topic` adds rows per
    topic type (TofuEval main / marginal) beside each split's rows.
    """
    choices = available_sources(cur, dataset)
    ref, compared = _choose(choices, dataset, level, reference, sources)
    splits = _splits(cur, dataset)
    groups = (ALL, *(_topic_types(cur, dataset) if by_topic else ()))
    params = _params(dataset, level, ref, compared, mapping)
    derived = any(c.mode == "derived" for c in (ref, *compared))
    tally = pd.DataFrame(_run(cur, _query(level, derived, _TALLY), params).fetchall(), columns=_TALLY_COLUMNS)
    coverage = dict(tally.loc[tally["part"] == "coverage", ["source", "n"]].itertuples(index=False))
    counts = tally[tally["part"] == "pair"]
    pairs = []
    for choice in compared:
        if choice.mode == "score":
            override = (thresholds or {}).get(choice.name)
            rows, threshold = _score_pair(choice, counts, splits, groups, override)
        else:
            rows, threshold = _label_pair(choice, counts, splits, groups), None
        both = int(counts.loc[counts["source"] == choice.name, "n"].sum())
        pairs.append(PairResult(choice, rows, threshold, int(coverage.get(choice.name, 0)), both))
    return CompareResult(
        dataset=dataset,
        level=level,
        reference=ref,
        reference_labelled=int(coverage.get(ref.name, 0)),
        mapping=mapping,
        splits=splits,
        groups=groups,
        pairs=tuple(pairs),
    )


def values_used(
    cur: duckdb.DuckDBPyConnection, dataset: str, level: str, sources: list[str]
) -> dict[str, dict[str, int]]:
    """{source: {vocabulary value: count}} of the named sources' current labels at `level` (for a
    derived source, at the level its labels come from): what the mapping has to decide about."""
    choices = available_sources(cur, dataset).get(level, {})
    wanted = {(name, choices[name].from_level) for name in sources if name in choices}
    params = {"dataset": dataset, "sources": [name for name, _ in wanted], "levels": [lvl for _, lvl in wanted]}
    out: dict[str, dict[str, int]] = {}
    for source, at_level, value, n in _run(cur, _VALUES, params).fetchall():
        if (source, at_level) in wanted:
            out.setdefault(source, {})[value] = n
    return out


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
) -> list[Example]:
    """The units of one confusion-matrix cell: the reference says `reference_value`, `source` says
    `compared_value` (after the mapping; for a score source after `threshold`, tuned if None)."""
    for name, value in (("reference_value", reference_value), ("compared_value", compared_value)):
        if value not in CLASSES:
            raise FaithLensError(f"{name} {value!r} is not a binary label", f"use {' or '.join(CLASSES)}")
    choices = available_sources(cur, dataset)
    ref, (choice,) = _choose(choices, dataset, level, reference, [source])
    if split != ALL and split not in _splits(cur, dataset):
        raise NotFoundError(
            f"{dataset} has no split {split!r}", f"use all or one of {', '.join(_splits(cur, dataset))}"
        )
    is_score = choice.mode == "score"
    if is_score and threshold is None:
        pair = compare(cur, dataset, level, reference, [source], mapping).pairs[0]
        threshold = pair.threshold.value
    params = {
        **_params(dataset, level, ref, [choice], mapping),
        "source": source,
        "reference_value": reference_value,
        "compared_value": compared_value,
        "is_score": is_score,
        "threshold": float(threshold) if threshold is not None else 0.0,
        "split": split,
        "group": group,
    }
    derived = choice.mode == "derived" or ref.mode == "derived"
    rows = _run(cur, _query(level, derived, _EXAMPLES, _UNIT_NOTES), params).fetchall()
    return [Example(*row) for row in rows]
