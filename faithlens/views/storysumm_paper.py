"""StorySumm's evaluator tables beside FaithLens's figures: the paper's Tables 8, 11 and 12 and the
release's own results table (the authors' notebook, Results.ipynb), each printed row next to the
Compare row that stands for it, and why a figure differs.

Compare reproduces the release's table figure for figure (gold against each released evaluator at
summary level, thresholds on the notebook's 150-point grid). The paper's tables differ for most
evaluators, and each difference gets a cause found in the data, not asserted:

- a label source (the prompted evaluators, FABLES, MiniCheck): the released predictions are not the
  ones the paper scored. When the paper's % faithful differs this is certain (% faithful depends on
  the predictions alone, and the summaries are the same 96); the notebook printing our figure for
  the full set confirms it.
- a score source (UniEval, AlignScore): every threshold on the released scores is tried (`Evidence`).
  A row that the other threshold search gives is a matter of the search (`cutpoints` reproduces
  Table 8's UniEval val row, the grid the notebook's); a row that some other threshold gives was
  tuned elsewhere (Tables 11 and 12 keep the threshold tuned on the annotator labels, which the
  release lacks); a row that no threshold gives comes from other scores than the released ones.

The comparison applies to the bundled StorySumm dataset only (`applies`): an imported StorySumm-format
file is other data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import duckdb
import numpy as np

from faithlens.analysis import metrics, published, tally
from faithlens.analysis.mapping import DEFAULT, UNFAITHFUL
from faithlens.analysis.published import DIFFERS, Compared, PaperTable, Row
from faithlens.analysis.thresholds import TUNING_NAMES, TUNINGS
from faithlens.views.compare import PairResult, threshold_for
from faithlens.vocab import GOLD

PAPER = "storysumm"
FORMAT = "storysumm"
LEVEL = "summary"
PAPER_TABLES = ("table8", "table11", "table12")
RELEASE = "release"
EVALUATOR_TABLES = (*PAPER_TABLES, RELEASE)

RELEASE_PREDICTIONS = "released predictions"
RELEASE_SCORES = "released scores"
THRESHOLD_SEARCH = "threshold search"
OTHER_THRESHOLD = "another threshold"
CHANGED_DATA = "data changed"


@dataclass(frozen=True)
class Cause:
    """Why a printed row and ours differ: a short kind (for counts) and the full reason."""

    kind: str
    text: str


@dataclass(frozen=True)
class Found:
    """A threshold on the released scores of one split that gives every figure of a printed row."""

    threshold: float
    above: int
    n: int


@dataclass(frozen=True)
class Evidence:
    """What the released scores of one score source say about each of its printed rows, keyed by
    (table key, split): the first threshold that gives the row, if any (`found`), and the threshold
    searches whose val-tuned threshold gives it (`tunings`)."""

    tuned: dict[str, float]
    found: dict[tuple[str, str], Found | None]
    tunings: dict[tuple[str, str], tuple[str, ...]]


@dataclass(frozen=True)
class PaperLine:
    """One printed row beside ours: the table, the row, each printed figure compared, and the cause
    when any differs."""

    source: str
    split: str
    table: PaperTable
    row: Row
    figures: tuple[Compared, ...]
    cause: Cause | None

    @property
    def matches(self) -> int:
        return sum(f.status != DIFFERS for f in self.figures)


def applies(format_name: str, origin: str, level: str | None = LEVEL, reference: str | None = GOLD) -> bool:
    """Whether the published StorySumm tables describe this dataset's figures: the bundled release, at
    summary level, against gold."""
    return format_name == FORMAT and origin == "bundled" and level == LEVEL and reference == GOLD


def bundled_dataset(cur: duckdb.DuckDBPyConnection) -> str | None:
    """The name of the bundled StorySumm dataset, when it is loaded."""
    row = cur.execute(
        "SELECT name FROM dataset WHERE format = ? AND origin = 'bundled' ORDER BY name LIMIT 1", [FORMAT]
    ).fetchone()
    return row[0] if row else None


def evaluator_rows(source: str, tables: Iterable[str] = EVALUATOR_TABLES) -> list[tuple[PaperTable, Row]]:
    """Every printed row of `source` in the evaluator tables, in table order."""
    found = []
    for key in tables:
        table = published.table(PAPER, key)
        found += [(table, row) for row in table.rows if row.key == source]
    return found


def _matches(table: PaperTable, row: Row, values: Mapping[str, float | None]) -> bool:
    """Every printed figure of `row` (but a threshold) is matched by `values`."""
    return all(
        printed.matched_by(values.get(column))
        for column, printed in zip(table.columns, row.values, strict=True)
        if printed.text and column != "threshold"
    )


class _Cuts:
    """One split's scores and reference labels, and the figures of each way of cutting the scores,
    computed once per cut (a cut is known by how many units are above it). Cheap shares (% faithful,
    % easy, % hard) rule a printed row out before scikit-learn computes the rest."""

    def __init__(self, scores: np.ndarray, reference: np.ndarray, difficulty: np.ndarray) -> None:
        self.scores, self.reference, self.difficulty = scores, reference, difficulty
        unfaithful = reference == UNFAITHFUL
        self.tagged = {tag: unfaithful & (difficulty == tag) for tag in ("easy", "hard")}
        self._values: dict[int, dict[str, float | None]] = {}

    def _plausible(self, table: PaperTable, row: Row, above: np.ndarray) -> bool:
        shares = {"pct_faithful": 100.0 * above.mean()}
        for tag, chosen in self.tagged.items():
            if chosen.any():
                shares[f"pct_{tag}_detected"] = 100.0 * (~above[chosen]).mean()
        return all(
            table.printed(row.key, column, row.split) is None
            or table.printed(row.key, column, row.split).matched_by(share)
            for column, share in shares.items()
            if column in table.columns
        )

    def gives(self, table: PaperTable, row: Row, threshold: float) -> bool:
        """Whether labelling the units above `threshold` faithful gives every figure of `row`."""
        above = self.scores > threshold
        if not self._plausible(table, row, above):
            return False
        key = int(above.sum())
        if key not in self._values:
            predicted = metrics.apply_threshold(self.scores, threshold)
            self._values[key] = metrics.binary_metrics(self.reference, predicted, None, self.difficulty).as_dict()
        return _matches(table, row, self._values[key])

    def search(self, table: PaperTable, row: Row) -> Found | None:
        """The first threshold (every cut between two consecutive distinct scores, and both ends)
        that gives every figure of `row`; None when none does."""
        candidates = (float(self.scores.min()) - 1.0, *metrics.cut_points(self.scores), float(self.scores.max()))
        for threshold in candidates:
            if self.gives(table, row, threshold):
                return Found(float(threshold), int((self.scores > threshold).sum()), len(self.scores))
        return None


def score_evidence(cur: duckdb.DuckDBPyConnection, dataset: str, source: str) -> Evidence:
    """Every threshold tried on `source`'s scores against each of its printed rows (see the module)."""
    choices = tally.available_sources(cur, dataset)
    reference, compared = tally.choose_sources(choices, dataset, LEVEL, GOLD, [source])
    frame = tally.tally(cur, dataset, LEVEL, reference, compared, DEFAULT).counts
    frame = frame[frame["score"].notna()]
    splits = tally.splits(cur, dataset)
    tuned = {tuning: threshold_for(source, frame, splits, None, tuning).value for tuning in TUNINGS}
    frame = frame[frame["ref_value"].notna()]
    found: dict[tuple[str, str], Found | None] = {}
    tunings: dict[tuple[str, str], tuple[str, ...]] = {}
    cuts: dict[str, _Cuts] = {}
    for table, row in evaluator_rows(source):
        if row.split not in cuts:
            units = frame if row.split == "all" else frame[frame["split"] == row.split]
            if units.empty:
                continue
            cuts[row.split] = _Cuts(
                units["score"].to_numpy(dtype=float),
                units["ref_value"].to_numpy(dtype=object),
                units["difficulty"].to_numpy(dtype=object),
            )
        split = cuts[row.split]
        found[(table.key, row.split)] = split.search(table, row)
        tunings[(table.key, row.split)] = tuple(t for t, value in tuned.items() if split.gives(table, row, value))
    return Evidence(tuned, found, tunings)


def _scope(split: str, n: int) -> str:
    return f"all {n}" if split == "all" else f"the {n} {split}"


def _label_cause(table: PaperTable, row: Row, values: Mapping[str, float | None], notebook: bool) -> Cause:
    """A label source's row differs: the predictions (see the module). `notebook`: the release's
    own table prints our figures for this row."""
    n = int(values["n"] or 0)
    if table.key == RELEASE:
        return Cause(
            CHANGED_DATA,
            "The notebook ran on the released files; this database's labels of the source or of gold are not "
            "those (re-imported or changed since).",
        )
    share, printed = values["pct_faithful"], table.printed(row.key, "pct_faithful", row.split)
    if printed is not None and not printed.matched_by(share):
        text = (
            f"The released predictions label {share:.1f}% of {_scope(row.split, n)} summaries faithful, where "
            f"{table.name} prints {printed.text}%. % faithful depends on the predictions alone, so the released "
            "ones are not those the paper scored."
        )
    else:
        text = (
            f"The released predictions label as many of {_scope(row.split, n)} summaries faithful as {table.name} "
            "does, but not the same ones (or the easy/hard tags changed): its other figures differ."
        )
    if notebook:
        text += " The release's own results table (Results.ipynb) prints our figures."
    return Cause(RELEASE_PREDICTIONS, text)


def _score_cause(
    table: PaperTable, row: Row, pair: PairResult, values: Mapping[str, float | None], evidence: Evidence | None
) -> Cause:
    """A score source's row differs: what the search over every threshold found (see the module)."""
    split, threshold = row.split, pair.threshold
    if _matches(table, row, values):
        printed = table.printed(row.key, "threshold", split)
        return Cause(
            THRESHOLD_SEARCH,
            f"Only the threshold differs: {table.name}'s ({printed.text if printed else '?'}) and ours "
            f"({threshold.value:.4f}) label the {split} summaries alike, so every other figure matches.",
        )
    key = (table.key, split)
    found = evidence.found.get(key) if evidence else None
    tunings = evidence.tunings.get(key, ()) if evidence else ()
    mine = "" if threshold.tuned else f" Ours is at the threshold you set ({threshold.value:.4f})."
    if tunings and (not threshold.tuned or threshold.tuning not in tunings):
        chosen = tunings[0]
        kind = THRESHOLD_SEARCH
        text = (
            f"Tuning by {TUNING_NAMES[chosen]} gives this row (threshold {evidence.tuned[chosen]:.4f}); "
            f"ours {'is tuned by ' + TUNING_NAMES[threshold.tuning] if threshold.tuned else 'is not tuned'}."
        )
    elif found is not None:
        kind = OTHER_THRESHOLD
        text = (
            f"The released scores give this row at threshold {found.threshold:.4f} ({found.above} of {found.n} "
            f"{split} summaries above it), which no tuning on the released val labels chooses."
        )
    else:
        kind = RELEASE_SCORES
        text = (
            f"No threshold on the released {split} scores gives {table.name}'s row: the scores (or labels) behind "
            "it are not the released ones."
        )
    return Cause(kind, " ".join(part for part in (text + mine, row.note) if part))


def paper_lines(
    pairs: Iterable[PairResult], evidence: Mapping[str, Evidence], tables: Iterable[str] = EVALUATOR_TABLES
) -> list[PaperLine]:
    """Each printed row of `tables` beside the row of `pairs` (Compare's results, gold against a
    source at summary level) that stands for it, with the cause of any difference. `evidence` holds
    `score_evidence` per score source; without it a score row's cause says less."""
    release = published.table(PAPER, RELEASE)
    lines = []
    for pair in pairs:
        source = pair.source.name
        for table, row in evaluator_rows(source, tables):
            ours = pair.row(row.split)
            if ours is None:
                continue
            values = {**ours.metrics.as_dict(), "threshold": ours.threshold}
            figures = published.compare(table, source, values, row.split)
            cause = None
            if any(f.status == DIFFERS for f in figures):
                if pair.threshold is not None:
                    cause = _score_cause(table, row, pair, values, evidence.get(source))
                else:
                    notebook = release.row(source, row.split)
                    cause = _label_cause(table, row, values, bool(notebook and _matches(release, notebook, values)))
                figures = published.compare(table, source, values, row.split, cause.text)
            lines.append(PaperLine(source, row.split, table, row, tuple(figures), cause))
    return lines
