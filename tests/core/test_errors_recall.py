"""Recall per value (TofuEval Figure 4's protocol, StorySumm's % easy / % hard) on a small canonical
import whose answers are worked out by hand from the table in tests/core/hand_errors.py, and on
StorySumm against Compare and the paper."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from faithlens.analysis.mapping import Mapping
from faithlens.errors import FaithLensError
from faithlens.views import compare, errors
from tests.core.hand_errors import CODER_SOURCE, DATASET


@pytest.fixture
def cur(hand_db: Path):
    conn = duckdb.connect(str(hand_db), read_only=True)
    yield conn.cursor()
    conn.close()


def _recall(cur, **kwargs) -> dict[str, tuple[int, int, float | None]]:
    family = errors.find_family(cur, DATASET, "error_type")
    result = errors.recall(cur, DATASET, family, [CODER_SOURCE], **kwargs)
    return {row.value: (row.flagged, row.total, row.recall) for row in result.rows}


def test_single_type_units_that_gold_calls_unfaithful(cur) -> None:
    # A alone and gold-unfaithful (partial counts as unfaithful by default): s1#s0 flagged, s2#s1 missed,
    # s2#s2 flagged; B alone: s2#s0 flagged. s1#s1 carries both types, s3#s0 is faithful in gold.
    assert _recall(cur, reference="gold") == {"A": (2, 3, pytest.approx(2 / 3)), "B": (1, 1, 1.0)}


def test_any_unit_carrying_the_type(cur) -> None:
    # s1#s1 (A and B, missed) now counts for both.
    assert _recall(cur, reference="gold", typed=errors.ANY_TYPE) == {"A": (2, 4, 0.5), "B": (1, 2, 0.5)}


def test_without_a_reference_every_tagged_unit_counts(cur) -> None:
    # s3#s0 (faithful in gold, tagged A) joins the single-type A units and is flagged.
    assert _recall(cur, reference=None) == {"A": (3, 4, 0.75), "B": (1, 1, 1.0)}


def test_the_mapping_decides_whether_partial_is_unfaithful(cur) -> None:
    excluded = Mapping.parse("partial=exclude")
    assert _recall(cur, reference="gold", mapping=excluded) == {"A": (1, 2, 0.5), "B": (1, 1, 1.0)}


def test_a_reference_or_source_the_level_lacks_is_refused(cur) -> None:
    family = errors.find_family(cur, DATASET, "error_type")
    with pytest.raises(FaithLensError, match="'nobody' gives no labels at the sentence level"):
        errors.recall(cur, DATASET, family, reference="nobody")
    with pytest.raises(FaithLensError, match="'ghost' gives no labels or scores"):
        errors.recall(cur, DATASET, family, ["ghost"], reference="gold")


@pytest.fixture(scope="module")
def story(built_db: Path):
    conn = duckdb.connect(str(built_db), read_only=True)
    yield conn.cursor()
    conn.close()


def test_storysumm_easy_and_hard_recall_is_compares_pct_detected(story) -> None:
    family = errors.find_family(story, "storysumm", "difficulty")
    result = errors.recall(story, "storysumm", family, reference="gold")
    got = {(row.source, row.value): row for row in result.rows}
    for pair in compare.compare(story, "storysumm", "summary", "gold").pairs:
        name = pair.source.name
        split = "test" if pair.threshold is not None else "all"  # score sources: tuned on val, applied to test
        row = pair.row(split)
        assert got[(name, "easy")].recall * 100 == pytest.approx(row.metrics.pct_easy_detected), name
        assert got[(name, "hard")].recall * 100 == pytest.approx(row.metrics.pct_hard_detected), name
        assert got[(name, "easy")].units == ("splits other than val" if pair.threshold is not None else "all")


def test_storysumm_fables_rater_catches_what_table_8_says(story) -> None:
    """StorySumm Table 8, FABLES (GPT-4) on the full set: 70.0% of easy, 52.5% of hard errors."""
    family = errors.find_family(story, "storysumm", "difficulty")
    result = errors.recall(story, "storysumm", family, ["fables-gpt-4-turbo-preview"], reference="gold")
    assert {row.value: round(100 * row.recall, 1) for row in result.rows} == {"easy": 70.0, "hard": 52.5}
