"""Explore's new filters: corpus, tags with all-of, and the unit filter (conditions on one and the same
unit, as the Errors page's links set them), checked against counts from the raw files or a small
import, and what a link that names something the dataset lacks gets: a note, not a silent drop."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from faithlens import filter_options, querystate
from faithlens.build import ingest
from faithlens.filters import Filters
from faithlens.unit_filter import UnitFilter, read_condition, threshold_item
from faithlens.views import explore
from faithlens.views.states import ExploreState
from tests import raw


@pytest.fixture(scope="module")
def cur(built_db: Path):
    conn = duckdb.connect(str(built_db), read_only=True)
    yield conn.cursor()
    conn.close()


def test_corpus_filter_counts_the_raw_summaries_of_that_corpus(cur) -> None:
    for corpus in ("mediasum", "meetingbank"):
        paths = sorted((raw.DATA / "tofueval" / "factual_consistency").glob(f"{corpus}_*.csv"))
        summaries = {(r["doc_id"], r["topic"], r["model_name"]) for r in raw.tofueval_rows(paths)}
        listing = explore.list_summaries(cur, "tofueval", Filters(corpus=corpus))
        assert len(listing.ids) == len(summaries)
        assert (
            Filters(corpus=corpus).caption(len(summaries))
            == f"{len(summaries):,} summaries where the corpus is {corpus}"
        )
    assert filter_options.filter_options(cur, "tofueval").corpora == ("mediasum", "meetingbank")
    assert filter_options.filter_options(cur, "storysumm").corpora == ()


def test_unit_filter_needs_every_condition_on_the_same_sentence(cur) -> None:
    rows = raw.tofueval_rows()
    both = [
        r for r in rows if {"Extrinsic Information", "Reasoning Error"} <= {t.strip() for t in r["type"].split(",")}
    ]
    unit = UnitFilter(
        unit_level="sentence", unit_tags=("error_type: Extrinsic Information", "error_type: Reasoning Error")
    )
    listing = explore.list_summaries(cur, "tofueval", Filters(unit=unit))
    assert listing.units == len(both)
    summary_level = explore.list_summaries(
        cur, "tofueval", Filters(error_types=("Extrinsic Information", "Reasoning Error"), error_match="all")
    )
    assert len(summary_level.ids) > len(listing.ids), (
        "the summary-level all-of also counts types on different sentences"
    )


def test_a_unit_filter_link_round_trips_through_the_url() -> None:
    state = ExploreState(
        "tofueval",
        Filters(
            corpus="mediasum",
            unit=UnitFilter(
                unit_level="sentence",
                unit_tags=("error_type: Contradiction",),
                unit_only=True,
                tagged_by="gold",
                unit_labels=("gold: unfaithful", threshold_item("scorer", 0.1 + 0.2, above=False)),
            ),
        ),
    )
    decoded, notes = querystate.decode(
        ExploreState, {k: v if isinstance(v, list) else [v] for k, v in querystate.encode(state).items()}
    )
    assert (decoded, notes) == (state, [])
    assert read_condition(state.filters.unit.unit_labels[1]) == ("scorer", 0.1 + 0.2, False), "the threshold is exact"


def test_what_the_dataset_lacks_is_dropped_with_a_note(cur) -> None:
    options = filter_options.filter_options(cur, "tofueval")
    wanted = Filters(
        corpus="cnn",
        unit=UnitFilter(
            unit_level="sentence",
            unit_tags=("error_type: Contradiction", "error_type: Typo"),
            unit_labels=("gold: unfaithful", "nobody: faithful", "gold: maybe"),
        ),
    )
    checked, notes = filter_options.check_against(wanted, options)
    assert checked.corpus is None
    assert checked.unit.unit_tags == ("error_type: Contradiction",)
    assert checked.unit.unit_labels == ("gold: unfaithful",)
    assert len(notes) == 4
    assert any("Typo" in n for n in notes) and any("nobody" in n for n in notes) and any("maybe" in n for n in notes)


def test_tags_all_of_needs_every_tag_on_the_summary_or_its_units(db_copy: Path, tmp_path: Path) -> None:
    lines = [
        {
            "document_id": "d",
            "summary_id": summary,
            "sentences": [{"text": "A sentence."}],
            "claims": [{"text": f"Claim {i}.", "ambiguity_types": types} for i, types in enumerate(claims)],
        }
        for summary, claims in (("x", [["1"], ["2"]]), ("y", [["1"]]), ("z", [["2", "3"]]))
    ]
    path = tmp_path / "amb.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    ingest.import_file(db_copy, path, "canonical")
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        tags = ("ambiguity_type: 1", "ambiguity_type: 2")
        any_of = explore.list_summaries(conn, "amb", Filters(tags=tags)).ids
        all_of = Filters(tags=tags, tag_match="all")
        assert (sorted(any_of), explore.list_summaries(conn, "amb", all_of).ids) == (["x", "y", "z"], ("x",))
        assert all_of.caption(1) == (
            "1 summary where the summary and its sentences or claims carry all of the tags "
            "ambiguity_type: 1 and ambiguity_type: 2"
        )
        same_claim = UnitFilter(unit_level="claim", unit_tags=("ambiguity_type: 2", "ambiguity_type: 3"))
        assert explore.list_summaries(conn, "amb", Filters(unit=same_claim)).units == 1
    finally:
        conn.close()
