"""Every page's URL state round-trips through the query string, keeps defaults out of links, and
says which hand-edited values it ignored (and why) instead of guessing."""

from __future__ import annotations

import pytest

from faithlens import querystate
from faithlens.analysis.mapping import Mapping
from faithlens.analysis.thresholds import Thresholds
from faithlens.filters import Filters
from faithlens.views.states import CompareState, DetailState, ExploreState, OverviewState

FULL_EXPLORE = ExploreState(
    dataset="tofueval",
    filters=Filters(
        source="judge/cot",
        split="dev",
        generator="model_A",
        topic="Budget & Tax",
        topic_type="main",
        label="none",
        difficulty="hard",
        error_types=("Reasoning Error", "Contradiction"),
        error_match="all",
        disagree_with="gold",
        search="100% sure, & more",
    ),
    detail=DetailState(summary="doc / model_A / Budget", sentence=2, unit="doc#c3", passages=5, min_score=40, ngram=3),
)
FULL_COMPARE = CompareState(
    dataset="storysumm",
    level="sentence",
    reference="gold",
    sources=("minicheck", "unieval"),
    mapping=Mapping(partial="exclude", ambiguous="faithful"),
    topics=False,
    thresholds=Thresholds.of({"unieval": 0.5, "alignscore=v2": 0.75}),
    view="test",
    pair="unieval",
    dsplit="val",
    cell="unfaithful,faithful",
)


@pytest.mark.parametrize("state", [OverviewState("fables"), FULL_EXPLORE, FULL_COMPARE, ExploreState(), CompareState()])
def test_every_page_state_round_trips(state: object) -> None:
    assert querystate.decode(type(state), querystate.encode(state)) == (state, [])


def test_defaults_stay_out_of_the_link() -> None:
    assert querystate.encode(ExploreState(dataset="storysumm")) == {"dataset": "storysumm"}
    assert querystate.encode(CompareState(dataset="storysumm", topics=True, mapping=Mapping())) == {
        "dataset": "storysumm"
    }


def test_lists_are_repeated_keys_and_typed_values_use_their_own_string_form() -> None:
    params = querystate.encode(FULL_COMPARE)
    assert params["sources"] == ["minicheck", "unieval"]
    assert params["mapping"] == "partial=exclude,unverifiable=exclude,ambiguous=faithful"
    assert params["thresholds"] == "unieval=0.5,alignscore=v2=0.75"
    assert params["topics"] == "0"
    assert querystate.encode(FULL_EXPLORE)["sentence"] == "2"


@pytest.mark.parametrize(
    ("params", "ignored"),
    [
        ({"sentence": "0"}, "sentence"),
        ({"sentence": "-1"}, "sentence"),
        ({"sentence": "abc"}, "sentence"),
        ({"passages": "99"}, "passages"),
        ({"label": "great"}, "label"),
        ({"error_match": "some"}, "error_match"),
    ],
)
def test_a_value_that_cannot_be_used_is_ignored_with_a_note(params: dict[str, str], ignored: str) -> None:
    state, notes = querystate.decode(ExploreState, {"dataset": "storysumm", **params})
    assert state == ExploreState(dataset="storysumm")
    assert len(notes) == 1 and notes[0].startswith(f"{ignored}={params[ignored]!r} in the link was ignored: expected")


@pytest.mark.parametrize(
    ("params", "ignored"),
    [
        ({"level": "paragraph"}, "level"),
        ({"mapping": "partial=maybe"}, "mapping"),
        ({"thresholds": "unieval=high"}, "thresholds"),
        ({"thresholds": "unieval=nan"}, "thresholds"),
        ({"topics": "x"}, "topics"),
        ({"cell": "x,y"}, "cell"),
    ],
)
def test_compare_link_values_are_checked_too(params: dict[str, str], ignored: str) -> None:
    state, notes = querystate.decode(CompareState, params)
    assert state == CompareState()
    assert len(notes) == 1 and notes[0].startswith(f"{ignored}=")


def test_blanks_unknown_keys_and_repeated_single_values() -> None:
    state, notes = querystate.decode(
        ExploreState, {"split": "  ", "utm_source": "mail", "summary": ["a", "b"], "error_types": ["x", " ", "x", "y"]}
    )
    assert notes == []
    assert state == ExploreState(filters=Filters(error_types=("x", "y")), detail=DetailState(summary="b"))
