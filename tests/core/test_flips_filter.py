"""The 'verdict flips across repeats' filter and the detail's flipping units, over run events written
by hand (no model): a unit flips when the latest ok item events of its (run, repeat)s for one label
source carry more than one label; sentence and claim units lead to their summary."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from faithlens import filter_options, store
from faithlens.filters import Filters
from faithlens.llm.runs import log
from faithlens.llm.runs.log import ItemOutcome
from faithlens.llm.runs.spec import RunSpec
from faithlens.views.detail import load_detail
from tests.raw import storysumm_records

DATASET = "storysumm"
SOURCE = "llm/tofueval-dir/test-model"


@pytest.fixture
def conn(db_copy) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = store.connect(db_copy)
    yield connection
    connection.close()


def _run(conn, level: str, repeats: int, answers: dict[tuple[str, int], tuple[str, str | None]]) -> int:
    spec = RunSpec(DATASET, level, "tofueval-dir", "openai", "test-model", repeats=repeats, source=SOURCE)
    run_id = log.create(conn, spec, sorted({unit for unit, _ in answers}), "by hand")
    for (unit, repeat), (status, label) in answers.items():
        log.record_item(conn, run_id, ItemOutcome(unit, repeat, status, label=label))
    return run_id


def _matching(conn, chosen: Filters) -> set[str]:
    where, params = chosen.where(DATASET)
    rows = conn.execute(f"SELECT s.summary_id FROM summary s WHERE s.dataset = ?{where}", [DATASET, *params])
    return {row[0] for row in rows.fetchall()}


def test_flipping_sentences_and_summaries_lead_to_their_summaries(conn) -> None:
    first, second, third = sorted(storysumm_records())[:3]
    _run(
        conn,
        "sentence",
        2,
        {
            (f"{first}#s0", 0): ("ok", "faithful"),
            (f"{first}#s0", 1): ("ok", "unfaithful"),
            (f"{second}#s1", 0): ("ok", "faithful"),
            (f"{second}#s1", 1): ("ok", "faithful"),
            (f"{third}#s0", 0): ("ok", "faithful"),
            (f"{third}#s0", 1): ("failed", None),
        },
    )
    _run(conn, "summary", 2, {(third, 0): ("ok", "faithful"), (third, 1): ("ok", "unfaithful")})
    assert _matching(conn, Filters(flips=SOURCE)) == {first, third}
    assert _matching(conn, Filters(flips="llm/another/test-model")) == set()
    assert Filters(flips=SOURCE).caption(2) == f"2 summaries where the verdict of {SOURCE} flips across repeats"
    assert load_detail(conn, DATASET, first, SOURCE).flipping == {f"{first}#s0"}
    assert load_detail(conn, DATASET, third, SOURCE).flipping == {third}, "a failed repeat is no verdict"
    assert load_detail(conn, DATASET, second, SOURCE).flipping == frozenset()


def test_only_the_latest_event_of_an_item_counts(conn) -> None:
    summary_id = sorted(storysumm_records())[0]
    run_id = _run(conn, "summary", 2, {(summary_id, 0): ("ok", "faithful"), (summary_id, 1): ("ok", "unfaithful")})
    log.record_item(conn, run_id, ItemOutcome(summary_id, 1, "ok", label="faithful"))
    assert _matching(conn, Filters(flips=SOURCE)) == set()


def test_the_filter_is_offered_for_sources_with_repeats_and_checked_against_them(conn) -> None:
    summary_id = sorted(storysumm_records())[0]
    assert filter_options.filter_options(conn, DATASET).flip_sources == ()
    _run(conn, "summary", 1, {(summary_id, 0): ("ok", "faithful")})
    assert filter_options.filter_options(conn, DATASET).flip_sources == (), "one repeat cannot flip"
    _run(conn, "summary", 3, {(summary_id, 0): ("ok", "faithful")})
    options = filter_options.filter_options(conn, DATASET)
    assert options.flip_sources == (SOURCE,)
    assert filter_options.check_against(Filters(flips=SOURCE), options) == (Filters(flips=SOURCE), [])
    kept, notes = filter_options.check_against(Filters(flips="llm/nothing"), options)
    assert kept.flips is None and notes and "flips='llm/nothing'" in notes[0]
