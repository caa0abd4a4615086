"""The Explore page in AppTest: deep links, filters and the URL, row choice, previous/next,
the detail per dataset, and escaped dataset text in the page's HTML."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from faithlens import config
from faithlens.build import ingest
from tests import raw
from tests.apptest import clean
from tests.raw import DATA, FABLES_LABELS, fables_books, storysumm_records, tofueval_rows

PAGE = "pages/explore.py"
DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
FABLES = "fables-gpt-4-turbo-preview"


def key(dataset: str, name: str) -> str:
    return f"explore.{dataset}.{name}"


def caption(at) -> str:
    return next(m.value for m in at.markdown if "summaries" in m.value or "summary where" in m.value)


def unescaped(markdown: str) -> str:
    """Markdown as it reads: without md_escape's backslashes."""
    return re.sub(r"\\(.)", r"\1", markdown)


def html_blocks(at) -> str:
    return "\n".join(block.value for block in at.html)


def test_deep_link_opens_the_summary_sentence_and_source(app_test) -> None:
    record = storysumm_records()[DANIEL]
    at = app_test(PAGE, dataset="storysumm", summary=DANIEL, sentence="8", source="gold", ngram="3")
    at.run()
    clean(at)
    assert DANIEL in at.subheader[0].value
    assert at.selectbox(key=key("storysumm", f"sentence.{DANIEL}")).value == 8
    markup = html_blocks(at)
    assert "fl-sent fl-label-unfaithful fl-selected" in markup
    assert html.escape(record["summary"][7], quote=True) in markup
    assert '<mark class="fl-align-best' in markup, "the chosen sentence's best passage is highlighted in the story"
    assert at.query_params["summary"] == DANIEL and at.query_params["sentence"] == "8"
    assert at.query_params["ngram"] == "3"


def test_url_filters_are_applied_and_captioned(app_test) -> None:
    at = app_test(PAGE, dataset="tofueval", error_types="Reasoning Error", split="dev")
    at.run()
    clean(at)
    expected = set()
    for path in (DATA / "tofueval" / "factual_consistency").glob("*_dev.csv"):
        with path.open(encoding="utf-8", newline="") as handle:
            expected |= {
                (r["doc_id"], r["topic"], r["model_name"])
                for r in csv.DictReader(handle)
                if "Reasoning Error" in r["type"]
            }
    assert caption(at).startswith(f"**{len(expected)} summaries where split is dev")
    assert at.multiselect(key=key("tofueval", "f.error_types")).value == ["Reasoning Error"]


def test_changing_a_filter_updates_the_list_and_the_url(app_test) -> None:
    records = storysumm_records()
    at = app_test(PAGE, dataset="storysumm")
    at.run()
    at.selectbox(key=key("storysumm", "f.split")).set_value("test").run()
    at.selectbox(key=key("storysumm", "f.difficulty")).set_value("hard").run()
    clean(at)
    expected = sum(1 for r in records.values() if r["split"] == "test" and r["difficulty"] == "hard")
    assert caption(at).startswith(f"**{expected} summaries where split is test and difficulty is hard")
    assert at.query_params["split"] == "test" and at.query_params["difficulty"] == "hard"
    at.text_input(key=key("storysumm", "f.search")).input("mermaid").run()
    assert at.query_params["search"] == "mermaid"
    at.button(key=key("storysumm", "clear")).click().run()
    clean(at)
    assert caption(at) == f"**All {len(records)} summaries**"
    assert "split" not in at.query_params and "search" not in at.query_params


def test_choosing_a_row_opens_that_summary_and_next_moves_on(app_test) -> None:
    at = app_test(PAGE, dataset="storysumm", split="val")
    at.run()
    table = at.dataframe[0].value
    at.session_state[key("storysumm", "table")] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()
    clean(at)
    chosen = table["summary"].iloc[2]
    assert at.query_params["summary"] == chosen
    assert chosen in at.subheader[0].value
    at.button(key=key("storysumm", "next")).click().run()
    clean(at)
    assert at.query_params["summary"] == table["summary"].iloc[3]
    assert at.query_params["split"] == "val"
    at.button(key=key("storysumm", "previous")).click().run()
    assert at.query_params["summary"] == chosen


def test_a_summary_level_source_says_it_has_no_sentence_labels(app_test) -> None:
    at = app_test(PAGE, dataset="storysumm", summary=DANIEL, source="gpt-4-0125-preview/cot")
    at.run()
    clean(at)
    assert any("gives no sentence labels" in c.value for c in at.caption)
    assert "fl-sent fl-label-none" in html_blocks(at)
    reasoning = re.findall(r'<details class="fl-why"><summary>(.*?)</summary>', html_blocks(at))
    assert any("gpt-4-0125-preview/cot" in summary for summary in reasoning), "the CoT reasoning is expandable"


def test_fables_says_why_the_book_is_missing_and_shows_claims_and_comment(app_test) -> None:
    book, models = next(iter(fables_books().items()))
    model, raw = next(iter(models.items()))
    at = app_test(PAGE, dataset="fables", summary=f"{book} / {model}")
    at.run()
    clean(at)
    assert any("copyrighted" in info.value for info in at.info)
    markup = html_blocks(at)
    assert html.escape(raw["general_comment"][:60], quote=True) in markup
    first = raw["claims"][min(raw["claims"], key=int)]["claim"]
    assert html.escape(first, quote=True) in markup


def fables_claim(index: int) -> tuple[str, str, dict]:
    """(summary id, unit id, raw claim) of the `index`-th claim of the first FABLES summary."""
    book, models = next(iter(fables_books().items()))
    model, raw = next(iter(models.items()))
    summary_id = f"{book} / {model}"
    number = sorted(raw["claims"], key=int)[index]
    return summary_id, f"{summary_id}#c{number}", raw["claims"][number]


def chosen_claims(at) -> list[str]:
    """Text of the claim list items marked as chosen (the boxed copy is checked separately)."""
    return re.findall(r'<li class="fl-selected" aria-current="true">(.*?)</li>', html_blocks(at), re.S)


def test_an_old_claim_unit_link_marks_the_same_claim_and_the_url_names_it_as_its_label(app_test) -> None:
    """Stored ids count claims from 0 (`#c2` is the third claim, shown as C3): an old `unit=` link opens the
    claim it always opened, and the URL then says `claim=3`, as the label does."""
    summary_id, unit_id, claim = fables_claim(2)
    at = app_test(PAGE, dataset="fables", summary=summary_id, unit=unit_id)
    at.run()
    clean(at)
    assert not at.warning, [w.value for w in at.warning]
    claim_text = html.escape(claim["claim"], quote=True)
    (marked,) = chosen_claims(at)
    assert f"<b>C3</b> {claim_text}" in marked and ">chosen<" in marked
    assert "Chosen claim C3" in " ".join(m.value for m in at.markdown)
    boxed = html_blocks(at).split('<div class="fl-chosen">')[1]
    assert boxed.startswith(f'<span class="fl-badge fl-label-{FABLES_LABELS[claim["label"]]}">')
    quotes = [q for q in claim["evidence"] if q.strip() and q.strip().lower() != "n/a"]
    assert quotes and all(html.escape(q, quote=True) in boxed for q in quotes)
    picker = at.selectbox(key=key("fables", f"claim.{summary_id}"))
    assert picker.value == 3
    assert at.query_params["claim"] == "3" and "unit" not in at.query_params and "sentence" not in at.query_params

    _, _, other = fables_claim(0)
    picker.set_value(1).run()
    assert at.query_params["claim"] == "1"
    assert f"<b>C1</b> {html.escape(other['claim'], quote=True)}" in chosen_claims(at)[0]
    at.selectbox(key=key("fables", f"claim.{summary_id}")).set_value(0).run()
    assert "claim" not in at.query_params and chosen_claims(at) == []


def test_a_claim_link_opens_the_claim_its_number_names(app_test) -> None:
    summary_id, _, claim = fables_claim(1)
    at = app_test(PAGE, dataset="fables", summary=summary_id, claim="2")
    at.run()
    clean(at)
    assert not at.warning, [w.value for w in at.warning]
    (marked,) = chosen_claims(at)
    assert f"<b>C2</b> {html.escape(claim['claim'], quote=True)}" in marked
    assert at.query_params["claim"] == "2"


def test_a_claim_number_past_the_summarys_claims_is_dropped_with_a_note(app_test) -> None:
    summary_id, _, _ = fables_claim(0)
    count = len(next(iter(next(iter(fables_books().values())).values()))["claims"])
    at = app_test(PAGE, dataset="fables", summary=summary_id, claim=str(count + 1))
    at.run()
    clean(at)
    notes = [unescaped(w.value) for w in at.warning]
    assert any(f"claim='{count + 1}' in the link was ignored" in n and f"({count} claims)" in n for n in notes), notes
    assert "claim" not in at.query_params and chosen_claims(at) == []


def test_a_unit_of_another_summary_is_dropped_with_a_warning(app_test) -> None:
    summary_id, _, _ = fables_claim(0)
    foreign = f"{DANIEL}#c0"
    at = app_test(PAGE, dataset="fables", summary=summary_id, unit=foreign)
    at.run()
    clean(at)
    assert any("ignored: not a unit of summary" in unescaped(w.value) and DANIEL in w.value for w in at.warning)
    assert "unit" not in at.query_params and at.query_params["summary"] == summary_id
    assert chosen_claims(at) == [] and '<div class="fl-chosen">' not in html_blocks(at)


def test_a_sentence_unit_selects_the_sentence_and_the_url_says_sentence(app_test) -> None:
    record = storysumm_records()[DANIEL]
    at = app_test(PAGE, dataset="storysumm", summary=DANIEL, unit=f"{DANIEL}#s4", sentence="2")
    at.run()
    clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert at.selectbox(key=key("storysumm", f"sentence.{DANIEL}")).value == 5
    selected = re.search(
        r'<span class="fl-sent [^"]* fl-selected" tabindex="0">(.*?)<span class="fl-mark">', html_blocks(at)
    )
    assert selected is not None and html.unescape(selected.group(1)) == record["summary"][4]
    assert at.query_params["sentence"] == "5" and "unit" not in at.query_params


@pytest.mark.parametrize("level", ["sentence", "claim"])
def test_compare_drill_down_links_open_explore_on_their_unit(app_test, level: str) -> None:
    from components.confusion import explore_state
    from faithlens import querystate
    from faithlens.views.compare import Example

    record = storysumm_records()[DANIEL]
    position = 3
    text = record["summary" if level == "sentence" else "claims"][position]
    unit_id = f"{DANIEL}#{level[0]}{position}"
    example = Example(DANIEL, unit_id, position, record["split"], None, text, None, None, None, None, None)
    at = app_test(PAGE, **querystate.encode(explore_state(example, "storysumm", level, FABLES)))
    at.run()
    clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert at.selectbox(key=key("storysumm", "source")).value == FABLES
    if level == "sentence":
        assert at.selectbox(key=key("storysumm", f"sentence.{DANIEL}")).value == position + 1
    else:
        assert at.selectbox(key=key("storysumm", f"claim.{DANIEL}")).value == position + 1
        assert at.query_params["claim"] == str(position + 1), "the link names the claim as Compare's label does"
        (marked,) = chosen_claims(at)
        assert html.escape(text, quote=True) in marked


def test_an_unknown_summary_is_ignored_with_a_note_and_the_first_match_opens(app_test) -> None:
    at = app_test(PAGE, dataset="storysumm", summary="no-such-summary", sentence="2")
    at.run()
    assert not at.exception and not at.error
    notes = [w.value for w in at.warning]
    assert any("summary='no\\-such\\-summary' in the link was ignored" in note for note in notes), notes
    assert any("sentence='2' in the link was ignored" in note for note in notes), notes
    first = at.dataframe[0].value["summary"].iloc[0]
    assert at.subheader[0].value.endswith(first), "the first row of the list is open"
    assert dict(at.query_params) == {"dataset": "storysumm"}


def test_filters_from_another_dataset_are_dropped_with_a_warning(app_test) -> None:
    at = app_test(PAGE, dataset="storysumm", topic_type="marginal")
    at.run()
    clean(at)
    assert any("topic\\_type" in w.value or "topic_type" in w.value for w in at.warning)
    assert "topic_type" not in at.query_params


XSS_FIXTURE = Path(__file__).parents[1] / "fixtures" / "browser_imports" / "xss_payloads.jsonl"


@pytest.fixture
def own_db(apptest_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A writable copy of the database (with the XSS payload dataset) that the page under test uses;
    yields (path, AppTest factory)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    db = tmp_path / "own.duckdb"
    shutil.copy(apptest_db, db)
    ingest.import_file(db, XSS_FIXTURE, "canonical", "xss_payloads")
    monkeypatch.setenv(config.SETTINGS["db"].env, str(db))
    st.cache_data.clear()
    st.cache_resource.clear()

    def make(**params: str) -> AppTest:
        at = AppTest.from_file(str(Path(__file__).parents[2] / PAGE), default_timeout=30)
        for name, value in params.items():
            at.query_params[name] = value
        return at

    yield db, make
    st.cache_data.clear()
    st.cache_resource.clear()


def test_payload_text_is_escaped_in_every_html_block(own_db) -> None:
    record = json.loads(XSS_FIXTURE.read_text(encoding="utf-8").splitlines()[0])
    _, make = own_db
    at = make(dataset="xss_payloads", summary=record["summary_id"], sentence="2", ngram="2")
    at.run()
    clean(at)
    markup = html_blocks(at)
    for dangerous in ("<script", "<img", "<iframe", "<svg", "<form", "<a ", "<div style", "<b onmouseover", "<input"):
        assert dangerous not in markup, dangerous
    assert html.escape(record["sentences"][1]["explanation"], quote=True) in markup
    assert "&lt;script&gt;" in markup


def test_a_missing_alignment_is_said_and_can_be_computed_from_the_page(own_db) -> None:
    db, make = own_db
    conn = duckdb.connect(str(db))
    conn.execute("DELETE FROM alignment WHERE dataset = 'storysumm' AND unit_id LIKE ?", [f"{DANIEL}#%"])
    conn.close()
    at = make(dataset="storysumm", summary=DANIEL, sentence="1")
    at.run()
    clean(at)
    assert any("No stored alignment" in w.value for w in at.warning)
    assert '<mark class="fl-align-best' not in html_blocks(at)
    at.button(key=key("storysumm", "align.bm25")).click().run()
    clean(at)
    assert not any("No stored alignment" in w.value for w in at.warning)
    assert '<mark class="fl-align-best' in html_blocks(at)


def test_switching_dataset_starts_a_clean_view(app_test) -> None:
    at = app_test(PAGE, dataset="tofueval", split="dev", error_types="Reasoning Error")
    at.run()
    at.radio(key="dataset_picker").set_value("storysumm").run()
    clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert caption(at) == f"**All {len(storysumm_records())} summaries**"
    assert dict(at.query_params) == {"dataset": "storysumm"}


def test_the_summary_label_filter_offers_only_the_labels_that_occur(app_test) -> None:
    at = app_test(PAGE, dataset="storysumm")
    at.run()
    occurring = {"faithful" if record["label"] == 1 else "unfaithful" for record in storysumm_records().values()}
    assert set(at.selectbox(key=key("storysumm", "f.label")).options) == {"(any)", *occurring}


def test_a_filter_change_that_excludes_the_open_summary_opens_the_first_match(app_test) -> None:
    records = storysumm_records()
    val = next(sid for sid, record in records.items() if record["split"] == "val")
    at = app_test(PAGE, dataset="storysumm", summary=val)
    at.run()
    assert at.subheader[0].value.endswith(val)
    at.selectbox(key=key("storysumm", "f.split")).set_value("test").run()
    first = at.dataframe[0].value["summary"].iloc[0]
    assert records[first]["split"] == "test" and at.subheader[0].value.endswith(first)
    assert dict(at.query_params) == {"dataset": "storysumm", "split": "test"}


def test_a_unit_filter_link_counts_its_units_and_can_be_dropped(app_test) -> None:
    rows = [r for r in tofueval_rows() if "Contradiction" in r["type"] and r["model_name"] == "model_A"]
    summaries = {(r["doc_id"], r["topic"], r["model_name"]) for r in rows}
    at = app_test(
        PAGE,
        dataset="tofueval",
        generator="model_A",
        unit_level="sentence",
        unit_tags="error_type: Contradiction",
        unit_labels="gold: unfaithful",
    )
    at.run()
    clean(at)
    assert (
        caption(at)
        .replace("\\", "")
        .startswith(
            f"**{len(rows)} sentences of {len(summaries)} summaries where generator is slot A (shuffled per topic; "
            "raw: model_A) and a sentence carries error_type: Contradiction and gold labels it unfaithful"
        )
    ), "an old link's raw model_A opens its slot, named as a slot"
    assert any("shuffles their order per topic" in c.value for c in at.caption), "the slot note beside the caption"
    opened = at.subheader[0].value.replace("\\", "")  # "slot A (...) · <doc> / model_A / <topic>"
    doc, model, topic = next(
        (r["doc_id"], r["model_name"], r["topic"])
        for r in rows
        if opened.endswith(f"{r['doc_id']} / model_A / {r['topic']}")
    )
    positions = sorted(
        int(r["sent_idx"]) for r in rows if (r["doc_id"], r["model_name"], r["topic"]) == (doc, model, topic)
    )
    named = ", ".join(f"sentence {p}" for p in positions)
    assert f"The unit filter matches {named} of this summary." in [c.value.replace("\\", "") for c in at.caption]
    box = at.checkbox(key=key("tofueval", "f.unit"))
    assert box.value and "Contradiction" in box.label
    box.uncheck().run()
    clean(at)
    assert "unit_tags" not in at.query_params
    assert at.query_params["generator"] == raw.tofueval_generator("model_A"), "the URL says the slot as shown"
    assert caption(at).startswith("**")
    assert "sentences of" not in caption(at)


def test_corpus_and_all_of_tags_are_widgets_bound_to_the_url(app_test) -> None:
    paths = sorted((DATA / "tofueval" / "factual_consistency").glob("meetingbank_*.csv"))
    expected = {(r["doc_id"], r["topic"], r["model_name"]) for r in tofueval_rows(paths)}
    at = app_test(PAGE, dataset="tofueval", corpus="meetingbank")
    at.run()
    clean(at)
    assert at.selectbox(key=key("tofueval", "f.corpus")).value == "meetingbank"
    assert caption(at).startswith(f"**{len(expected)} summaries where the corpus is meetingbank")
    at.selectbox(key=key("tofueval", "f.corpus")).set_value("mediasum").run()
    assert at.query_params["corpus"] == "mediasum"


def test_a_long_document_shows_excerpts_around_the_passages_and_the_whole_text_on_request(own_db, tmp_path) -> None:
    db, make = own_db
    words = [f"w{i}" for i in range(20_000)]
    text = ". ".join(" ".join(words[i : i + 10]) for i in range(0, len(words), 10)) + "."
    sentence = "w5000 w5001 w5002 w5003 w5004 w5005 w5006 w5007 w5008 w5009"
    line = {"document_id": "book", "summary_id": "b1", "document": text, "sentences": [{"text": sentence}]}
    path = tmp_path / "longdoc.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ingest.import_file(db, path, "canonical")
    at = make(dataset="longdoc", summary="b1", sentence="1")
    at.run()
    clean(at)
    markup = html_blocks(at)
    best = re.findall(r'<mark class="fl-align-best">([^<]*)</mark>', markup)
    assert len(best) == 1 and sentence in best[0], "the best passage is marked in its excerpt"
    assert "w19999" not in markup and "words …]" in markup, "the rest of the book is a counted gap"
    assert any(c.value.startswith("A long document:") for c in at.caption)
    at.toggle(key=key("longdoc", "whole")).set_value(True).run()
    clean(at)
    assert "w19999" in html_blocks(at) and "words …]" not in html_blocks(at)
