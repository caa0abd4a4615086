"""The Explore queries: every filter and the search, counted against the raw files read here
independently (csv/json), plus the detail of one summary per dataset."""

from __future__ import annotations

import ast
import csv
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from faithlens import querystate
from faithlens.build.rankers import registry
from faithlens.errors import NotFoundError
from faithlens.filter_options import check_against, filter_options
from faithlens.filters import Filters
from faithlens.views import alignments, explore
from faithlens.views import detail as explore_detail
from faithlens.views.states import DetailState
from faithlens.views.tag_html import Tag
from tests import raw as raw_files
from tests.raw import DATA, fables_books, storysumm_predictions, storysumm_records

TOFU = DATA / "tofueval"


@pytest.fixture(scope="module")
def cur(built_db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = duckdb.connect(str(built_db), read_only=True)
    yield conn
    conn.close()


def tofueval_summaries() -> dict[tuple[str, str, str], dict]:
    """(doc_id, topic, model) -> split, topic type, sentence labels, error types, texts; from the CSVs."""
    types: dict[str, str] = {}
    for path in (TOFU / "topic_category").glob("*.json"):
        types.update(json.loads(path.read_text(encoding="utf-8")))
    summaries: dict[tuple[str, str, str], dict] = {}
    for path in sorted((TOFU / "factual_consistency").glob("*.csv")):
        split = path.stem.rsplit("_", 1)[1]
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                key = (row["doc_id"], row["topic"], row["model_name"])
                entry = summaries.setdefault(
                    key,
                    {"split": split, "topic_type": types.get(row["topic"]), "labels": [], "types": set(), "texts": []},
                )
                entry["labels"].append(row["sent_label"])
                entry["types"].update(t.strip() for t in row["type"].split(",") if t.strip())
                entry["texts"] += [row["summ_sent"], row["exp"]]
    return summaries


def count(cur: duckdb.DuckDBPyConnection, dataset: str, filters: Filters) -> int:
    listed = explore.list_summaries(cur, dataset, filters)
    assert [row[0] for row in listed.rows] == list(listed.ids[: len(listed.rows)])
    return len(listed.ids)


def test_no_filter_lists_every_summary(cur) -> None:
    result = explore.list_summaries(cur, "tofueval", Filters())
    assert len(result.rows) == result.total == len(tofueval_summaries())
    assert Filters().caption(len(result.rows)) == f"All {len(result.rows):,} summaries"


def test_error_type_any_of_and_all_of_match_the_csvs(cur) -> None:
    raw = tofueval_summaries()
    one = {"Reasoning Error"}
    two = {"Reasoning Error", "Extrinsic Information"}
    expected_one = sum(1 for s in raw.values() if s["types"] & one)
    expected_any = sum(1 for s in raw.values() if s["types"] & two)
    expected_all = sum(1 for s in raw.values() if two <= s["types"])
    assert 0 < expected_all < expected_one < expected_any
    assert count(cur, "tofueval", Filters(error_types=("Reasoning Error",))) == expected_one
    assert count(cur, "tofueval", Filters(error_types=tuple(sorted(two)))) == expected_any
    assert count(cur, "tofueval", Filters(error_types=tuple(sorted(two)), error_match="all")) == expected_all


def test_split_topic_type_generator_and_label_match_the_csvs(cur) -> None:
    raw = tofueval_summaries()
    expected = sum(
        1
        for (_, _, model), s in raw.items()
        if s["split"] == "test" and s["topic_type"] == "marginal" and model == "model_A" and "no" in s["labels"]
    )
    slot_a = raw_files.tofueval_generator("model_A")
    filters = Filters(split="test", topic_type="marginal", generator=slot_a, label="unfaithful")
    assert 0 < count(cur, "tofueval", filters) == expected
    assert filters.caption(expected) == (
        f"{expected} summaries where split is test, generator is slot A (shuffled per topic; raw: model_A), "
        "the topic is marginal and gold labels the summary unfaithful"
    )


def test_the_pooled_slots_filter_is_every_summary_but_model_extras(cur) -> None:
    raw = tofueval_summaries()
    filters = Filters(generator=raw_files.TOFUEVAL_SLOTS_POOLED)
    assert count(cur, "tofueval", filters) == sum(1 for (_, _, model) in raw if model != "Model-Extra")


def test_topic_filter_matches_the_csvs(cur) -> None:
    raw = tofueval_summaries()
    topic = "Presidential helicopter cost"
    assert count(cur, "tofueval", Filters(topic=topic)) == sum(1 for (_, t, _) in raw if t == topic)


def test_search_covers_sentences_and_explanations_and_treats_wildcards_literally(cur) -> None:
    raw = tofueval_summaries()
    for word in ("tesoro", "%", "no mention"):
        expected = sum(1 for s in raw.values() if any(word in text.lower() for text in s["texts"]))
        assert count(cur, "tofueval", Filters(search=word)) == expected, word
    assert count(cur, "tofueval", Filters(search="_")) == sum(
        1 for s in raw.values() if any("_" in t for t in s["texts"])
    )


def test_search_reaches_claims_evidence_and_reasons_in_fables(cur) -> None:
    word = "rehearse"
    expected = 0
    for models in fables_books().values():
        for summary in models.values():
            texts = [summary["summary"], summary["general_comment"]]
            for claim in summary["claims"].values():
                texts += [claim["claim"], *claim["evidence"], *claim["reason"]]
            expected += any(word in text.lower() for text in texts)
    assert 0 < count(cur, "fables", Filters(search=word.upper())) == expected


def test_storysumm_label_disagreement_and_difficulty_match_the_json(cur) -> None:
    records = storysumm_records()
    cot = storysumm_predictions()["gpt-4-0125-preview/cot"]
    expected = sum(1 for sid, r in records.items() if r["label"] == 0 and cot[sid]["label"] == 1)
    filters = Filters(label="unfaithful", disagree_with="gpt-4-0125-preview/cot")
    assert 0 < count(cur, "storysumm", filters) == expected
    assert filters.caption(expected).endswith("gold and gpt-4-0125-preview/cot disagree on the summary label")
    disagree = sum(1 for sid, r in records.items() if r["label"] != cot[sid]["label"])
    assert count(cur, "storysumm", Filters(disagree_with="gpt-4-0125-preview/cot")) == disagree
    hard = sum(1 for r in records.values() if r["difficulty"] == "hard")
    assert count(cur, "storysumm", Filters(difficulty="hard")) == hard
    by_cot = sum(1 for sid in records if cot[sid]["label"] == 1)
    assert count(cur, "storysumm", Filters(source="gpt-4-0125-preview/cot", label="faithful")) == by_cot


def test_search_reaches_llm_reasoning(cur) -> None:
    records = storysumm_records()
    predictions = storysumm_predictions()
    word = "hallucination"
    expected = 0
    for sid, record in records.items():
        texts = [*record["summary"], *record["claims"], *record["explanations"]]
        texts += [p[sid]["probs"] for p in predictions.values() if isinstance(p.get(sid, {}).get("probs"), str)]
        expected += any(word in text.lower() for text in texts)
    assert 0 < count(cur, "storysumm", Filters(search=word)) == expected


def test_list_rows_carry_label_and_unfaithful_sentence_counts(cur) -> None:
    records = storysumm_records()
    result = explore.list_summaries(cur, "storysumm", Filters())
    columns = result.columns
    for row in result.rows:
        item = dict(zip(columns, row, strict=True))
        record = records[item["summary_id"]]
        paper_name = {
            ("claude", "val"): "Claude-2 (raw: claude, val)",
            ("claude", "test"): "Claude-3 (raw: claude, test)",
        }
        assert item["generator"] == paper_name.get((record["model"], record["split"]), record["model"])
        assert item["label"] == ("faithful" if record["label"] == 1 else "unfaithful")
        if len(record["errors"]) == len(record["summary"]):
            assert item["unfaithful_sentences"] == record["errors"].count(0)
        else:
            assert item["unfaithful_sentences"] is None
        assert record["summary"][0].startswith(item["preview"][:40])


def test_filter_state_round_trips_through_the_url() -> None:
    filters = Filters(
        source="mixtral/cot",
        split="test",
        label="none",
        error_types=("Reasoning Error", "Contradiction"),
        error_match="all",
        disagree_with="gold",
        search="100% sure",
    )
    params = querystate.encode(filters)
    assert params["error_types"] == ["Reasoning Error", "Contradiction"]
    assert querystate.decode(Filters, params) == (filters, [])
    assert querystate.encode(Filters()) == {}
    hand_edited, notes = querystate.decode(
        Filters, {"label": "great", "error_match": "some", "split": "  ", "search": ["a", "b"]}
    )
    assert hand_edited == Filters(search="b")
    assert [note.split("=")[0] for note in notes] == ["label", "error_match"]
    assert "'great'" in notes[0] and "ignored" in notes[0]


def test_values_a_dataset_does_not_have_are_dropped_with_a_note(cur) -> None:
    options = filter_options(cur, "storysumm")
    checked, notes = check_against(Filters(source="nobody", split="dev", error_types=("Contradiction",)), options)
    assert checked == Filters()
    assert len(notes) == 3


def test_detail_state_validates_numbers() -> None:
    state, notes = querystate.decode(DetailState, {"summary": "x", "sentence": "3", "passages": "9", "min_score": "-4"})
    assert state == DetailState(summary="x", sentence=3)
    assert [note.split("=")[0] for note in notes] == ["passages", "min_score"]
    assert querystate.decode(DetailState, querystate.encode(state)) == (state, [])


def test_a_links_unit_is_resolved_against_the_opened_summary(cur) -> None:
    sid = "1e21553b47944b67bc2cdf67860d8e15"
    record = storysumm_records()[sid]
    detail = explore_detail.load_detail(cur, "storysumm", sid)

    def resolve(**link: str) -> tuple[DetailState, list[str]]:
        state, _ = querystate.decode(DetailState, {"summary": sid, **link})
        return explore_detail.resolve_selection(detail, state)

    assert resolve(unit=f"{sid}#s4", sentence="2") == (DetailState(summary=sid, sentence=5), [])
    last = len(record["claims"])
    claim = f"{sid}#c{last - 1}"
    assert resolve(unit=claim, sentence="2") == (DetailState(summary=sid, sentence=2, claim=last), []), (
        "a stored id counts from 0; the URL names the claim by its label, C<n>"
    )
    assert resolve(unit=claim, claim="1") == (DetailState(summary=sid, claim=last), []), "the unit wins"
    state, notes = resolve(claim=str(last + 1))
    assert state == DetailState(summary=sid) and f"no claim C{last + 1} ({last} claims)" in notes[0]
    other = next(i for i in storysumm_records() if i != sid)
    state, notes = resolve(unit=f"{other}#c0", sentence="2")
    assert state == DetailState(summary=sid, sentence=2) and len(notes) == 1 and other in notes[0]
    state, notes = resolve(sentence=str(len(record["summary"]) + 1))
    assert state == DetailState(summary=sid) and f"has {len(record['summary'])} sentences" in notes[0]


def test_the_list_is_ordered_and_capped_but_keeps_every_id(cur) -> None:
    raw = tofueval_summaries()
    result = explore.list_summaries(cur, "tofueval", Filters(), max_rows=50)
    assert len(result.rows) == 50 and len(result.ids) == len(raw)
    keys = [(row[1], row[2], row[0]) for row in result.rows]
    assert keys == sorted(keys)


def test_neighbours_walk_the_filtered_list_in_order(cur) -> None:
    slot_b = raw_files.tofueval_generator("model_B")
    ids = explore.list_summaries(cur, "tofueval", Filters(split="test", generator=slot_b)).ids
    middle = explore.neighbours(ids, ids[1])
    assert (middle.position, middle.total, middle.previous, middle.next) == (2, len(ids), ids[0], ids[2])
    assert explore.neighbours(ids, ids[0]).previous is None
    assert explore.neighbours(ids, ids[-1]).next is None
    outside = explore.neighbours(ids[1:], ids[0])
    assert (outside.position, outside.first) == (None, ids[1])


def test_storysumm_detail_has_units_alignment_and_every_source(cur) -> None:
    sid = "1e21553b47944b67bc2cdf67860d8e15"
    record = storysumm_records()[sid]
    predictions = storysumm_predictions()
    detail = explore_detail.load_detail(cur, "storysumm", sid)
    assert detail.document.text == record["story"]
    assert [u.text for u in detail.sentences] == record["summary"]
    assert [u.label for u in detail.sentences] == ["faithful" if e else "unfaithful" for e in record["errors"]]
    flagged = [u.explanation for u in detail.sentences if u.label == "unfaithful"]
    assert flagged == record["explanations"]
    assert [c.text for c in detail.claims] == record["claims"]
    stored = alignments.load_alignment(cur, "storysumm", detail.document.document_id, _unit_ids(detail), "bm25")
    assert set(stored.matches) == set(_unit_ids(detail)), "every sentence and claim, by the default ranker"
    assert stored.version == registry()["bm25"].version
    sources = {v.source: v for v in detail.verdicts}
    assert set(sources) == {"gold", *(name for name, p in predictions.items() if sid in p)}
    assert sources["gpt-4-0125-preview/cot"].explanation == predictions["gpt-4-0125-preview/cot"][sid]["probs"]
    assert sources["alignscore-roberta-large"].score == pytest.approx(
        predictions["alignscore-roberta-large"][sid]["probs"]
    )
    assert sources["gold"].unfaithful_sentences == record["errors"].count(0)
    assert Tag("difficulty", record["difficulty"], "gold") in detail.summary.tags, "each tag names its source"


def test_detail_with_another_source_colours_by_its_sentence_labels(cur) -> None:
    sid = "1e21553b47944b67bc2cdf67860d8e15"
    minicheck = storysumm_predictions()["minicheck-flan-t5-large"][sid]
    detail = explore_detail.load_detail(cur, "storysumm", sid, source="minicheck-flan-t5-large")
    assert [u.label for u in detail.sentences] == [
        "faithful" if v else "unfaithful" for v in minicheck["sentence_labels"]
    ]
    assert [u.score for u in detail.sentences] == pytest.approx(minicheck["probs"])
    cot = explore_detail.load_detail(cur, "storysumm", sid, source="gpt-4-0125-preview/cot")
    assert all(u.label is None for u in cot.sentences)
    assert cot.summary_label is not None and cot.summary_label.label is not None


def test_fables_detail_has_claims_evidence_and_no_text(cur) -> None:
    book, models = next(iter(fables_books().items()))
    model, raw = next(iter(models.items()))
    detail = explore_detail.load_detail(cur, "fables", f"{book} / {model}")
    assert detail.document.text is None and "copyright" in detail.document.text_note
    assert detail.summary.general_comment == (raw["general_comment"] or None)
    assert [c.text for c in detail.claims] == [raw["claims"][k]["claim"] for k in sorted(raw["claims"], key=int)]
    first = raw["claims"][min(raw["claims"], key=int)]
    assert list(detail.claims[0].evidence) == [e for e in first["evidence"] if e.strip() and e.strip().lower() != "n/a"]
    assert detail.sentences == ()
    stored = alignments.load_alignment(cur, "fables", detail.document.document_id, _unit_ids(detail), "bm25")
    assert not stored.stored and stored.matches == {}


def test_tofueval_detail_has_topic_error_types_and_key_points(cur) -> None:
    raw = tofueval_summaries()
    key = next(k for k, s in raw.items() if s["types"])
    doc_id, topic, model = key
    detail = explore_detail.load_detail(cur, "tofueval", f"{doc_id} / {model} / {topic}")
    assert (detail.summary.topic, detail.summary.topic_type) == (topic, raw[key]["topic_type"])
    assert {t.value for u in detail.sentences for t in u.tags if t.kind == "error_type"} == raw[key]["types"]
    assert {t.source for u in detail.sentences for t in u.tags} == {"gold"}, "TofuEval's own error types"
    points: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in (TOFU / "completeness").glob("*.csv"):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if row["key_points"].strip():
                    points[(row["doc_id"], row["topic"])] = ast.literal_eval(row["key_points"])
    assert list(detail.key_points) == points[(doc_id, topic)]
    assert detail.document.text is None and "tofueval-docs" in detail.document.text_note


def test_an_unknown_summary_is_a_clear_error(cur) -> None:
    with pytest.raises(NotFoundError, match="no summary 'nope' in dataset 'storysumm'"):
        explore_detail.load_detail(cur, "storysumm", "nope")


def _unit_ids(detail: explore_detail.Detail) -> list[str]:
    return [u.unit_id for u in (*detail.sentences, *detail.claims)]


def test_select_matches_filters_stored_passages_at_read_time(cur) -> None:
    detail = explore_detail.load_detail(cur, "storysumm", "1e21553b47944b67bc2cdf67860d8e15")
    loaded = alignments.load_alignment(cur, "storysumm", detail.document.document_id, _unit_ids(detail), "bm25")
    stored = loaded.matches[detail.sentences[0].unit_id]
    assert alignments.select_matches(stored, 2) == list(stored[:2])
    threshold = stored[1].score
    assert all(m.score >= threshold for m in alignments.select_matches(stored, 5, threshold))
    assert alignments.select_matches(stored, 5, 10_000) == []


def test_a_passage_lights_up_every_unit_it_is_aligned_to(cur) -> None:
    detail = explore_detail.load_detail(cur, "storysumm", "1e21553b47944b67bc2cdf67860d8e15")
    loaded = alignments.load_alignment(cur, "storysumm", detail.document.document_id, _unit_ids(detail), "bm25")
    first = detail.sentences[0].unit_id
    best = loaded.matches[first][0]
    expected = {
        unit: match.rank
        for unit, matches in loaded.matches.items()
        for match in matches
        if match.rank <= 3 and (match.start, match.end) == (best.start, best.end)
    }
    assert alignments.aligned_to(loaded, best.start, best.end, 3)[first] == 1
    assert alignments.aligned_to(loaded, best.start, best.end, 3) == expected
    shown = alignments.passages(loaded, 3)
    assert (best.start, best.end) in shown and shown == sorted(set(shown))


def test_documents_are_named_by_title_and_sorted_naturally(cur) -> None:
    titles = {f"Story {record['story-id']}" for record in storysumm_records().values()}
    result = explore.list_summaries(cur, "storysumm", Filters())
    shown = list(dict.fromkeys(row[result.columns.index("document")] for row in result.rows))

    def natural(text: str) -> list:
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]

    assert set(shown) == titles, "the list names documents as the detail's header does"
    assert shown == sorted(shown, key=natural) and shown[:3] == ["Story 1", "Story 2", "Story 3"]


def test_every_source_verdict_on_each_sentence_is_read_for_the_hover(cur) -> None:
    sid = "1e21553b47944b67bc2cdf67860d8e15"
    record = storysumm_records()[sid]
    labelling = {
        name: p[sid]["sentence_labels"]
        for name, p in storysumm_predictions().items()
        if sid in p and p[sid].get("sentence_labels") is not None
    }
    assert labelling, "the release has sentence labels from some evaluators for this summary"
    detail = explore_detail.load_detail(cur, "storysumm", sid)
    for unit, error_free in zip(detail.sentences, record["errors"], strict=True):
        verdicts = {v.source: v.label for v in detail.unit_verdicts[unit.unit_id]}
        assert list(verdicts)[0] == "gold" and set(verdicts) == {"gold", *labelling}
        assert verdicts["gold"] == ("faithful" if error_free else "unfaithful")
        for name, labels in labelling.items():
            assert verdicts[name] == ("faithful" if labels[unit.position] else "unfaithful"), name
