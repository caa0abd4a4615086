"""StorySumm's two `claude` models shown as its paper names them (section 2.2, Table 2): Claude-2
wrote the val summaries, Claude-3 the test ones; and TofuEval's model_A..model_E shown as the slots
they are (the release's README: "the orders of models for all topics are shuffled"), pooled as the
paper's five models. Expected counts and ids come from the raw files (tests/raw.py); the names are
the paper's and the README's, written out here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from faithlens import querystate
from faithlens.build import ingest
from faithlens.filter_options import check_against, filter_options
from faithlens.filters import Filters
from faithlens.views import explore, overview
from faithlens.views.states import ExploreState
from tests import raw

CLAUDE_2 = "Claude-2 (raw: claude, val)"
CLAUDE_3 = "Claude-3 (raw: claude, test)"
# StorySumm paper, Table 2: summaries per generation model.
PAPER_TABLE_2_COUNTS = {"Davinci-3": 11, "GPT-3.5": 21, "ChatGPT": 11, "GPT-4": 21, "Claude-2": 11, "Claude-3": 21}


@pytest.fixture(scope="module")
def cur(built_db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = duckdb.connect(str(built_db), read_only=True)
    with conn.cursor() as cursor:
        yield cursor
    conn.close()


def _raw_claude(split: str) -> set[str]:
    return {i for i, r in raw.storysumm_records().items() if r["model"] == "claude" and r["split"] == split}


def test_raw_claude_splits_match_the_papers_claude_2_and_claude_3_counts() -> None:
    per = Counter((r["model"], r["split"]) for r in raw.storysumm_records().values())
    assert {split for model, split in per if model == "claude"} == {"val", "test"}
    assert per["claude", "val"] == PAPER_TABLE_2_COUNTS["Claude-2"]
    assert per["claude", "test"] == PAPER_TABLE_2_COUNTS["Claude-3"]


def test_overview_table_names_claude_by_split_with_the_raw_value(cur) -> None:
    (figure,) = overview.build(cur, "storysumm").headline.generators
    rows = dict(zip(figure.table.column("generator"), figure.table.column("summaries"), strict=True))
    assert rows[CLAUDE_2] == len(_raw_claude("val"))
    assert rows[CLAUDE_3] == len(_raw_claude("test"))
    assert "claude" not in rows
    assert sorted(n for g, n in rows.items() if g != "Overall") == sorted(PAPER_TABLE_2_COUNTS.values())
    assert "section 2.2" in figure.caption


def test_stored_model_stays_raw(cur) -> None:
    models = {
        row[0] for row in cur.execute("SELECT DISTINCT model FROM summary WHERE dataset = 'storysumm'").fetchall()
    }
    assert models == {r["model"] for r in raw.storysumm_records().values()}


def test_filter_options_offer_the_paper_names_not_the_ambiguous_raw_one(cur) -> None:
    generators = filter_options(cur, "storysumm").generators
    assert CLAUDE_2 in generators and CLAUDE_3 in generators and "claude" not in generators
    expected = {r["model"] for r in raw.storysumm_records().values()} - {"claude"}
    assert set(generators) - {CLAUDE_2, CLAUDE_3} == expected


@pytest.mark.parametrize(("shown", "split"), [(CLAUDE_2, "val"), (CLAUDE_3, "test")])
def test_a_filter_on_a_paper_name_selects_exactly_that_splits_claude_summaries(cur, shown: str, split: str) -> None:
    filters = Filters(generator=shown)
    result = explore.list_summaries(cur, "storysumm", filters)
    assert set(result.ids) == _raw_claude(split)
    assert filters.caption(len(result.ids)) == f"{len(_raw_claude(split))} summaries where generator is {shown}"


@pytest.mark.parametrize("written", [CLAUDE_3, "Claude-3", "claude-3"])
def test_a_claude_3_filter_round_trips_through_the_url(cur, written: str) -> None:
    """A link holds the shown name (or the paper's short name, typed by hand); read back and checked
    against the dataset it means the test-split claude summaries and nothing else."""
    params = querystate.encode(ExploreState(dataset="storysumm", filters=Filters(generator=written)))
    state, notes = querystate.decode(ExploreState, params)
    assert notes == []
    checked, notes = check_against(state.filters, filter_options(cur, "storysumm"))
    assert notes == [] and checked.generator == CLAUDE_3
    assert querystate.encode(ExploreState(dataset="storysumm", filters=checked))["generator"] == CLAUDE_3
    assert set(explore.list_summaries(cur, "storysumm", checked).ids) == _raw_claude("test")


def test_the_raw_claude_in_an_old_link_is_ambiguous_and_dropped_naming_both(cur) -> None:
    checked, notes = check_against(Filters(generator="claude"), filter_options(cur, "storysumm"))
    assert checked.generator is None
    assert len(notes) == 1 and CLAUDE_2 in notes[0] and CLAUDE_3 in notes[0]


def test_the_rule_is_storysumms_alone(db_copy: Path, tmp_path: Path) -> None:
    """Another format's `claude` on val is shown raw and filtered raw."""
    path = tmp_path / "mine.jsonl"
    path.write_text(
        '{"document_id": "d", "summary_id": "a", "model": "claude", "split": "val", "sentences": [{"text": "x"}]}\n',
        encoding="utf-8",
    )
    ingest.import_file(db_copy, path, "canonical", "mine")
    conn = duckdb.connect(str(db_copy), read_only=True)
    with conn.cursor() as cursor:
        assert filter_options(cursor, "mine").generators == ("claude",)
        assert explore.list_summaries(cursor, "mine", Filters(generator="claude")).ids == ("a",)
        assert check_against(Filters(generator="Claude-2"), filter_options(cursor, "mine"))[0].generator is None
    conn.close()


# ---------------------------------------------------------------- TofuEval's shuffled slots

SLOT_A = "slot A (shuffled per topic; raw: model_A)"
POOLED = "slots A–E pooled (the paper's five models)"


def _tofueval_summaries(model: str | None = None) -> set[str]:
    """Summary ids as FaithLens makes them (document / model / topic), from the raw CSVs."""
    return {
        f"{r['doc_id']} / {r['model_name']} / {r['topic']}"
        for r in raw.tofueval_rows()
        if model is None or r["model_name"] == model
    }


def test_tofueval_generators_are_offered_pooled_first_then_models_then_slots(cur) -> None:
    generators = filter_options(cur, "tofueval").generators
    assert generators == (POOLED, "Model-Extra", *(raw.tofueval_generator(f"model_{x}") for x in "ABCDE"))
    assert generators[2] == SLOT_A


@pytest.mark.parametrize("written", ["model_A", "slot A", "Slot a", SLOT_A])
def test_an_old_link_naming_model_a_still_opens_slot_a(cur, written: str) -> None:
    checked, notes = check_against(Filters(generator=written), filter_options(cur, "tofueval"))
    assert notes == [] and checked.generator == SLOT_A
    assert set(explore.list_summaries(cur, "tofueval", checked).ids) == _tofueval_summaries("model_A")


@pytest.mark.parametrize("written", [POOLED, "pooled", "slots A-E"])
def test_the_pooled_slots_are_every_summary_but_model_extras(cur, written: str) -> None:
    checked, notes = check_against(Filters(generator=written), filter_options(cur, "tofueval"))
    assert notes == [] and checked.generator == POOLED
    expected = _tofueval_summaries() - _tofueval_summaries("Model-Extra")
    assert set(explore.list_summaries(cur, "tofueval", checked).ids) == expected
    assert len(expected) == 1479, "the paper's 1,479 summaries (section 3.3)"


def test_slot_names_are_tofuevals_alone(db_copy: Path, tmp_path: Path) -> None:
    """Another format's model_A is a model: shown and filtered raw, with no pooled group."""
    path = tmp_path / "mine.jsonl"
    path.write_text(
        '{"document_id": "d", "summary_id": "a", "model": "model_A", "sentences": [{"text": "x"}]}\n', encoding="utf-8"
    )
    ingest.import_file(db_copy, path, "canonical", "mine")
    conn = duckdb.connect(str(db_copy), read_only=True)
    with conn.cursor() as cursor:
        assert filter_options(cursor, "mine").generators == ("model_A",)
        assert explore.list_summaries(cursor, "mine", Filters(generator="model_A")).ids == ("a",)
    conn.close()
