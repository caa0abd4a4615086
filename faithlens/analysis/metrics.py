"""Agreement metrics between a reference and a compared source, to the papers' definitions.

Inputs are arrays of binary labels ("faithful" / "unfaithful", after the mapping), optionally
with a weight per row so callers can pass counts aggregated in DuckDB instead of one row per
unit. Every number comes from scikit-learn.

Conventions, as in the StorySumm paper (Tables 7-12) and its released notebook:
- the *positive* class of precision and recall is **faithful**;
- `pct_*` and `balanced_accuracy` are percentages (0-100); kappa, precision, recall and F1 are 0-1;
- % easy / % hard detected: of the units the reference labels unfaithful and tags easy (hard),
  the share the compared source labels unfaithful.

Degenerate cases give None (shown as a blank / JSON null), never a silent 0:
- no units: every metric is None and n is 0;
- kappa: None when both sources use one and the same single class (chance agreement is 1);
- precision: None when the compared source calls nothing faithful; recall: None when the
  reference calls nothing faithful (scikit-learn's zero_division is set to NaN, then mapped to None);
- balanced accuracy: None unless the reference has both classes (it is the mean of two recalls);
- per-class F1: None when the class appears in neither source; macro-F1: None if either F1 is None;
- % easy / % hard: None when there is no reference-unfaithful unit with that tag.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
    recall_score,
)

from faithlens.analysis.mapping import FAITHFUL, UNFAITHFUL

CLASSES: tuple[str, str] = (FAITHFUL, UNFAITHFUL)
GRID_SIZE = 150

DEFINITIONS: dict[str, str] = {
    "n": "Units that both sources label and that the mapping keeps.",
    "kappa": "Cohen's kappa between the two sources' binary labels: agreement corrected for chance (1 perfect, 0 chance).",
    "pct_faithful": "% of the units that the compared source labels faithful.",
    "precision": "Precision of the faithful class: of the units the compared source calls faithful, the share the reference also calls faithful.",
    "recall": "Recall of the faithful class: of the units the reference calls faithful, the share the compared source also calls faithful.",
    "pct_easy_detected": "% of the reference-unfaithful units tagged easy (StorySumm difficulty) that the compared source labels unfaithful.",
    "pct_hard_detected": "% of the reference-unfaithful units tagged hard (StorySumm difficulty) that the compared source labels unfaithful.",
    "balanced_accuracy": "Mean of the recall of the faithful class and the recall of the unfaithful class, in % (50 = chance).",
    "f1_faithful": "F1 of the faithful class: harmonic mean of its precision and recall.",
    "f1_unfaithful": "F1 of the unfaithful class (FABLES reports F1 per class).",
    "macro_f1": "Unweighted mean of the two per-class F1 scores.",
    "threshold": (
        "Score sources only: a unit is faithful when its score is above the threshold, tuned for the highest "
        "balanced accuracy on the val (dev) split and then applied to test. Default as the StorySumm release's "
        f"notebook: the first of {GRID_SIZE} evenly spaced thresholds in [0, 1]; or an exhaustive cut-point search: "
        "the lowest midpoint between two consecutive distinct val scores (it reproduces the paper's Table 8 "
        "UniEval val row, which no grid threshold reaches)."
    ),
}


@dataclass(frozen=True)
class BinaryMetrics:
    """Every figure the Compare page and the `metrics` command report for one set of units."""

    n: int
    kappa: float | None
    pct_faithful: float | None
    precision: float | None
    recall: float | None
    pct_easy_detected: float | None
    pct_hard_detected: float | None
    balanced_accuracy: float | None
    f1_faithful: float | None
    f1_unfaithful: float | None
    macro_f1: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


_CODE = {FAITHFUL: 1, UNFAITHFUL: 0}
_CODES = [1, 0]  # CLASSES as scikit-learn sees them: integers are far cheaper to validate than strings


def _value(number: float) -> float | None:
    return None if number is None or np.isnan(number) else float(number)


def _encode(labels: np.ndarray) -> np.ndarray:
    """faithful -> 1, unfaithful -> 0; anything else is a caller's error (map labels first)."""
    labels = np.asarray(labels, dtype=object)
    codes = (labels == FAITHFUL).astype(np.int8)
    if not np.all(codes | (labels == UNFAITHFUL)):
        raise ValueError(f"binary labels must be {' or '.join(CLASSES)}; map the vocabulary first")
    return codes


def _both_classes(codes: np.ndarray) -> bool:
    return bool(codes.size) and 0 < int(codes.sum()) < codes.size


def confusion(reference: np.ndarray, predicted: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """2x2 counts, reference on the rows and the compared source on the columns, faithful first."""
    if len(reference) == 0:
        return np.zeros((2, 2), dtype=int)
    return confusion_matrix(_encode(reference), _encode(predicted), labels=_CODES, sample_weight=weight).astype(int)


def _kappa(ref: np.ndarray, pred: np.ndarray, weight: np.ndarray | None) -> float | None:
    if not (_both_classes(ref) or _both_classes(pred) or (ref.size and ref[0] != pred[0])):
        return None  # both sources use one and the same class: chance agreement is 1
    return _value(cohen_kappa_score(ref, pred, labels=_CODES, sample_weight=weight))


def kappa(reference: np.ndarray, predicted: np.ndarray, weight: np.ndarray | None = None) -> float | None:
    """Cohen's kappa; None when both sources use only one and the same class."""
    return _kappa(_encode(reference), _encode(predicted), weight)


def _balanced_accuracy(ref: np.ndarray, pred: np.ndarray, weight: np.ndarray | None) -> float | None:
    if not _both_classes(ref):
        return None
    return 100.0 * float(balanced_accuracy_score(ref, pred, sample_weight=weight))


def balanced_accuracy(reference: np.ndarray, predicted: np.ndarray, weight: np.ndarray | None = None) -> float | None:
    """Mean recall of the two classes, in %; None unless the reference has both classes."""
    return _balanced_accuracy(_encode(reference), _encode(predicted), weight)


def _detected(
    ref: np.ndarray, pred: np.ndarray, difficulty: np.ndarray | None, tag: str, weight: np.ndarray | None
) -> float | None:
    if difficulty is None:
        return None
    chosen = (np.asarray(difficulty, dtype=object) == tag) & (ref == 0)
    if not chosen.any():
        return None
    share = recall_score(
        ref[chosen],
        pred[chosen],
        labels=[0],
        average=None,
        zero_division=np.nan,
        sample_weight=None if weight is None else weight[chosen],
    )
    return 100.0 * float(share[0])


def detected(
    reference: np.ndarray,
    predicted: np.ndarray,
    difficulty: np.ndarray | None,
    tag: str,
    weight: np.ndarray | None = None,
) -> float | None:
    """% of reference-unfaithful units tagged `tag` that the compared source labels unfaithful."""
    return _detected(_encode(reference), _encode(predicted), difficulty, tag, weight)


def binary_metrics(
    reference: np.ndarray,
    predicted: np.ndarray,
    weight: np.ndarray | None = None,
    difficulty: np.ndarray | None = None,
) -> BinaryMetrics:
    """All metrics for one set of units (see the module docstring for definitions and None cases)."""
    ref, pred = _encode(reference), _encode(predicted)
    n = int(weight.sum()) if weight is not None else len(ref)
    if n == 0:
        return BinaryMetrics(0, *([None] * 10))
    precision, recall, f1, _ = precision_recall_fscore_support(
        ref, pred, labels=_CODES, zero_division=np.nan, sample_weight=weight
    )
    f1_faithful, f1_unfaithful = _value(f1[0]), _value(f1[1])
    macro = None
    if f1_faithful is not None and f1_unfaithful is not None:
        macro = _value(f1_score(ref, pred, labels=_CODES, average="macro", zero_division=np.nan, sample_weight=weight))
    return BinaryMetrics(
        n=n,
        kappa=_kappa(ref, pred, weight),
        pct_faithful=100.0 * float(np.average(pred, weights=weight)),
        precision=_value(precision[0]),
        recall=_value(recall[0]),
        pct_easy_detected=_detected(ref, pred, difficulty, "easy", weight),
        pct_hard_detected=_detected(ref, pred, difficulty, "hard", weight),
        balanced_accuracy=_balanced_accuracy(ref, pred, weight),
        f1_faithful=f1_faithful,
        f1_unfaithful=f1_unfaithful,
        macro_f1=macro,
    )


def threshold_grid(scores: np.ndarray) -> np.ndarray:
    """The candidate thresholds: 150 evenly spaced in [0, 1] (StorySumm), or in [min, max] of the
    scores when they fall outside [0, 1] (e.g. a 0-100 confidence)."""
    scores = np.asarray(scores, dtype=float)
    low, high = 0.0, 1.0
    if len(scores) and (scores.min() < 0.0 or scores.max() > 1.0):
        low, high = float(scores.min()), float(scores.max())
    return np.linspace(low, high, GRID_SIZE)


def cut_points(scores: np.ndarray) -> np.ndarray:
    """Every midpoint between two consecutive distinct scores: one threshold per way of splitting the
    scores into those above and those below it, so the search over them is exhaustive (a single distinct
    score gives that score itself: everything is below or at it)."""
    distinct = np.unique(np.asarray(scores, dtype=float))
    if len(distinct) < 2:
        return distinct
    return (distinct[:-1] + distinct[1:]) / 2


def apply_threshold(scores: np.ndarray, threshold: float) -> np.ndarray:
    """Faithful when the score is strictly above the threshold, else unfaithful."""
    return np.where(np.asarray(scores, dtype=float) > threshold, FAITHFUL, UNFAITHFUL).astype(object)


def tune_threshold(scores: np.ndarray, labels: np.ndarray, grid: np.ndarray | None = None) -> float | None:
    """The first threshold of `grid` (default `threshold_grid(scores)`; or `cut_points(scores)`, lowest
    first) that reaches the highest balanced accuracy of `apply_threshold(scores, t)` against `labels`;
    None unless `labels` has both classes (balanced accuracy is undefined otherwise)."""
    codes = _encode(labels)
    if not _both_classes(codes):
        return None
    scores = np.asarray(scores, dtype=float)
    grid = threshold_grid(scores) if grid is None else grid
    by_partition: dict[int, float] = {}  # thresholds with the same units above them share one value
    accuracies = []
    for threshold in grid:
        above = scores > threshold
        key = int(above.sum())
        if key not in by_partition:
            by_partition[key] = balanced_accuracy_score(codes, above.astype(np.int8))
        accuracies.append(by_partition[key])
    return float(grid[int(np.argmax(accuracies))])
