"""Metrics on small hand-computed confusion matrices, threshold tuning on toy cases with a known
answer, and the label mapping to binary."""

from __future__ import annotations

import numpy as np
import pytest

from faithlens.analysis import mapping, metrics
from faithlens.errors import FaithLensError

F, U = "faithful", "unfaithful"


def expand(cells: dict[tuple[str, str], int]) -> tuple[np.ndarray, np.ndarray]:
    """(reference, predicted) arrays holding each (reference, predicted) cell `n` times."""
    reference = [ref for (ref, _), n in cells.items() for _ in range(n)]
    predicted = [cmp for (_, cmp), n in cells.items() for _ in range(n)]
    return np.array(reference, dtype=object), np.array(predicted, dtype=object)


# Reference on the rows: 15 faithful (10 kept faithful, 5 called unfaithful), 23 unfaithful (3 called faithful).
CELLS = {(F, F): 10, (F, U): 5, (U, F): 3, (U, U): 20}


def test_hand_computed_matrix() -> None:
    reference, predicted = expand(CELLS)
    got = metrics.binary_metrics(reference, predicted)
    assert got.n == 38
    assert got.pct_faithful == pytest.approx(100 * 13 / 38)
    assert got.precision == pytest.approx(10 / 13)
    assert got.recall == pytest.approx(10 / 15)
    assert got.balanced_accuracy == pytest.approx(100 * (10 / 15 + 20 / 23) / 2)
    observed, chance = 30 / 38, (15 * 13 + 23 * 25) / 38**2
    assert got.kappa == pytest.approx((observed - chance) / (1 - chance))
    assert got.f1_faithful == pytest.approx(2 * 10 / (2 * 10 + 5 + 3))
    assert got.f1_unfaithful == pytest.approx(2 * 20 / (2 * 20 + 3 + 5))
    assert got.macro_f1 == pytest.approx((20 / 28 + 40 / 48) / 2)
    assert got.pct_easy_detected is None and got.pct_hard_detected is None
    assert metrics.confusion(reference, predicted).tolist() == [[10, 5], [3, 20]]


def test_weights_give_the_same_numbers_as_repeated_rows() -> None:
    reference = np.array([ref for ref, _ in CELLS], dtype=object)
    predicted = np.array([cmp for _, cmp in CELLS], dtype=object)
    weight = np.array(list(CELLS.values()))
    assert metrics.binary_metrics(reference, predicted, weight) == metrics.binary_metrics(*expand(CELLS))
    assert metrics.confusion(reference, predicted, weight).tolist() == [[10, 5], [3, 20]]


def test_easy_and_hard_detected_count_only_reference_unfaithful_units_with_the_tag() -> None:
    reference = np.array([U, U, U, U, U, U, F, F], dtype=object)
    predicted = np.array([U, U, U, F, U, F, U, F], dtype=object)
    difficulty = np.array(["easy", "easy", "easy", "easy", "hard", "hard", "easy", None], dtype=object)
    got = metrics.binary_metrics(reference, predicted, difficulty=difficulty)
    assert got.pct_easy_detected == pytest.approx(75.0)  # 3 of the 4 easy unfaithful; the faithful 'easy' is ignored
    assert got.pct_hard_detected == pytest.approx(50.0)


def test_one_class_everywhere_leaves_undefined_metrics_empty() -> None:
    got = metrics.binary_metrics(np.array([F, F, F], dtype=object), np.array([F, F, F], dtype=object))
    assert got.n == 3 and got.pct_faithful == 100.0
    assert got.kappa is None, "chance agreement is 1, kappa is undefined"
    assert got.balanced_accuracy is None, "the reference has no unfaithful unit"
    assert got.precision == 1.0 and got.recall == 1.0 and got.f1_faithful == 1.0
    assert got.f1_unfaithful is None and got.macro_f1 is None


def test_reference_with_one_class_but_two_predicted() -> None:
    got = metrics.binary_metrics(np.array([F, F, F, F], dtype=object), np.array([F, U, U, F], dtype=object))
    assert got.kappa == 0.0
    assert got.balanced_accuracy is None
    assert got.recall == 0.5 and got.precision == 1.0
    assert got.f1_unfaithful == 0.0 and got.macro_f1 == pytest.approx((2 / 3 + 0) / 2)


def test_nothing_predicted_faithful_has_no_precision_but_zero_f1() -> None:
    got = metrics.binary_metrics(np.array([F, U, U], dtype=object), np.array([U, U, U], dtype=object))
    assert got.precision is None
    assert got.recall == 0.0 and got.f1_faithful == 0.0
    assert got.balanced_accuracy == 50.0 and got.pct_faithful == 0.0


def test_no_units() -> None:
    empty = np.array([], dtype=object)
    got = metrics.binary_metrics(empty, empty)
    assert got.n == 0 and all(value is None for key, value in got.as_dict().items() if key != "n")
    assert metrics.confusion(empty, empty).tolist() == [[0, 0], [0, 0]]


def test_threshold_tuning_picks_the_first_grid_point_of_the_best_plateau() -> None:
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
    labels = np.array([U, U, U, U, F, F, F, F], dtype=object)
    # Perfect separation for every t in [0.4, 0.6); the grid is k/149, and 60/149 is the first >= 0.4.
    assert metrics.tune_threshold(scores, labels) == pytest.approx(60 / 149)
    assert len(metrics.threshold_grid(scores)) == 150


def test_threshold_tuning_takes_the_first_of_two_equal_maxima() -> None:
    scores = np.array([0.2, 0.3, 0.5, 0.7])
    labels = np.array([U, F, U, F], dtype=object)
    # t in [0.2, 0.3): F,F,F -> recalls (1, 1/2); t in [0.5, 0.7): only 0.7 faithful -> (1/2, 1). Both 75%.
    tuned = metrics.tune_threshold(scores, labels)
    assert 0.2 <= tuned < 0.3
    assert tuned == pytest.approx(30 / 149)


def test_a_score_equal_to_the_threshold_is_unfaithful() -> None:
    assert metrics.apply_threshold(np.array([0.5, 0.50001, 0.2]), 0.5).tolist() == [U, F, U]


def test_tuning_needs_both_classes() -> None:
    assert metrics.tune_threshold(np.array([0.1, 0.9]), np.array([F, F], dtype=object)) is None


def test_scores_outside_unit_interval_get_a_grid_over_their_range() -> None:
    grid = metrics.threshold_grid(np.array([50.0, 75.0, 100.0]))
    assert grid[0] == 50.0 and grid[-1] == 100.0 and len(grid) == 150


def test_default_mapping() -> None:
    default = mapping.DEFAULT
    assert [default.target(v) for v in ("faithful", "unfaithful", "partial", "unverifiable", "ambiguous", "n/a")] == [
        F,
        U,
        U,
        None,
        None,
        None,
    ]
    assert str(default) == "partial=unfaithful,unverifiable=exclude,ambiguous=exclude"
    assert default.values_to(U) == ["unfaithful", "partial"]
    assert default.values_to(F) == ["faithful"]


def test_mapping_parse_and_string_form_round_trip() -> None:
    chosen = mapping.Mapping.parse("partial=exclude, ambiguous=unfaithful")
    assert chosen == mapping.Mapping(partial="exclude", unverifiable="exclude", ambiguous="unfaithful")
    assert mapping.Mapping.parse(str(chosen)) == chosen
    assert mapping.Mapping.parse("") == mapping.DEFAULT and mapping.Mapping.parse(None) == mapping.DEFAULT
    assert chosen.target("partial") is None and chosen.target("ambiguous") == U
    assert mapping.Mapping.parse("unverifiable=faithful").values_to(F) == ["faithful", "unverifiable"]


@pytest.mark.parametrize(
    "text", ["partial", "partial=maybe", "faithful=unfaithful", "n/a=faithful", "colour=red", "partial="]
)
def test_mapping_rejects_what_it_cannot_mean(text: str) -> None:
    with pytest.raises(FaithLensError):
        mapping.Mapping.parse(text)


def test_mapping_describes_every_value_in_plain_english() -> None:
    lines = mapping.Mapping.parse("partial=exclude").describe()
    assert len(lines) == 6
    assert "partial (partly supported by the source) is left out." in lines
    assert lines[-1].startswith("n/a") and "left out" in lines[-1]


def test_cut_points_are_every_midpoint_between_distinct_scores() -> None:
    assert metrics.cut_points(np.array([0.9, 0.2, 0.5, 0.5])).tolist() == pytest.approx([0.35, 0.7])
    assert metrics.cut_points(np.array([0.4, 0.4])).tolist() == [0.4], "one distinct score: all at or below it"
    scores = np.array([0.2, 0.5, 0.5, 0.9])
    labels = np.array(["unfaithful", "faithful", "faithful", "faithful"], dtype=object)
    assert metrics.tune_threshold(scores, labels, metrics.cut_points(scores)) == pytest.approx(0.35)
