"""Every count on the Errors page opens Explore on exactly that many units: each cell's link goes
through the URL (encoded, then decoded as Explore reads it) and Explore's list counts the units its
unit filter matches within the summaries every filter keeps."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlencode

import duckdb
import pytest

from faithlens import querystate
from faithlens.analysis import tally
from faithlens.views import error_links, errors, explore
from faithlens.views.states import ExploreState
from tests.core.hand_errors import CODER_SOURCE, DATASET


def _opened(cur, state: ExploreState) -> int:
    """The units (or summaries, at the summary level) Explore counts for a link's state."""
    query = parse_qs(urlencode(querystate.encode(state), doseq=True))
    decoded, notes = querystate.decode(ExploreState, query)
    assert notes == []
    listing = explore.list_summaries(cur, state.dataset, decoded.filters)
    return listing.units if listing.units is not None else len(listing.ids)


@pytest.fixture(scope="module")
def cur(built_db: Path):
    conn = duckdb.connect(str(built_db), read_only=True)
    yield conn.cursor()
    conn.close()


@pytest.mark.parametrize("by", ["generator", "topic_type", "corpus"])
def test_tofueval_distribution_cells(cur, by: str) -> None:
    family = errors.find_family(cur, "tofueval", "error_type")
    shown = errors.distribution(cur, "tofueval", family, by)
    for row in shown.rows:
        state = error_links.spread_cell("tofueval", shown, row.value, row.group)
        assert _opened(cur, state) == row.units, (row.value, row.group)


def test_tofueval_pair_cells(cur) -> None:
    family = errors.find_family(cur, "tofueval", "error_type")
    matrix = errors.together(cur, "tofueval", family)
    for first in matrix.index:
        for second in matrix.columns:
            if matrix.loc[first, second]:
                state = error_links.pair_cell("tofueval", family, None, first, second)
                assert _opened(cur, state) == matrix.loc[first, second], (first, second)


def test_fables_verdicts_per_summarizer_cells(cur) -> None:
    family = errors.find_family(cur, "fables", "verdict:gold", "claim")
    shown = errors.distribution(cur, "fables", family, "generator")
    for row in shown.rows:
        assert _opened(cur, error_links.spread_cell("fables", shown, row.value, row.group)) == row.units


def test_storysumm_recall_cells_flagged_and_missed(cur) -> None:
    family = errors.find_family(cur, "storysumm", "difficulty")
    result = errors.recall(cur, "storysumm", family, reference="gold")
    splits = tally.splits(cur, "storysumm")
    for row in result.rows:
        flagged = error_links.recall_cell("storysumm", result, row, True, splits, None)
        missed = error_links.recall_cell("storysumm", result, row, False, splits, None)
        assert (_opened(cur, flagged), _opened(cur, missed)) == (row.flagged, row.total - row.flagged), row.source
        if row.threshold is not None:
            assert flagged.filters.source == "gold", "a score-only source colours nothing: Explore shows gold"
        else:
            assert flagged.filters.source == row.source


@pytest.mark.parametrize("typed", [errors.SINGLE, errors.ANY_TYPE])
@pytest.mark.parametrize("reference", ["gold", None])
def test_hand_recall_cells(hand_db: Path, typed: str, reference: str | None) -> None:
    conn = duckdb.connect(str(hand_db), read_only=True)
    try:
        cursor = conn.cursor()
        family = errors.find_family(cursor, DATASET, "error_type")
        result = errors.recall(cursor, DATASET, family, [CODER_SOURCE], reference=reference, typed=typed)
        for row in result.rows:
            for flagged, expected in ((True, row.flagged), (False, row.total - row.flagged)):
                state = error_links.recall_cell(DATASET, result, row, flagged, (), None)
                assert _opened(cursor, state) == expected, (row.value, flagged)
    finally:
        conn.close()


def test_the_caption_says_the_cell_in_words(cur) -> None:
    family = errors.find_family(cur, "tofueval", "error_type")
    shown = errors.distribution(cur, "tofueval", family, "topic_type")
    row = next(r for r in shown.rows if r.value == "Reasoning Error" and r.group == "marginal")
    state = error_links.spread_cell("tofueval", shown, row.value, row.group)
    listing = explore.list_summaries(cur, "tofueval", state.filters)
    caption = state.filters.caption(len(listing.ids), listing.units)
    assert caption == (
        f"{row.units} sentences of {len(listing.ids)} summaries where the topic is marginal "
        "and a sentence carries error_type: Reasoning Error"
    )
