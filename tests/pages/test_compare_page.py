"""The Compare page in AppTest: tables and heatmaps for StorySumm, choices read from and written to
the URL, the threshold slider, the mapping, drill-down links into Explore, and bad URL values.

The page is reached through app.py and `switch_page`, as in the real app, so its links to
Explore resolve."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score

from tests import raw

PAGE = "pages/compare.py"
FABLES = "fables-gpt-4-turbo-preview"
SCORE_SOURCES = ("alignscore-roberta-large", "unieval")
MAP_PARTIAL = "compare.storysumm.map.partial"
MAPPING_OPEN = "compare.storysumm.mapping"
SLIDER = (
    "compare.storysumm.threshold.summary.gold.partial=unfaithful,unverifiable=exclude,ambiguous=exclude.grid.unieval"
)


@pytest.fixture
def compare_page(open_page):
    def make(**params: str | list[str]):
        return open_page(PAGE, **params)

    return make


def matrices(at) -> dict[str, list[list[int]]]:
    """Title -> counts (reference rows x compared columns) of every confusion matrix on the page
    (`components.charts.matrix_html` markup, its class names fixed)."""
    found = {}
    for block in "".join(element.value for element in at.html).split('<div class="fl-cm">')[1:]:
        title = html.unescape(re.search(r'class="fl-cm-title">(.*?)</div>', block).group(1))
        counts = [int(n.replace(",", "")) for n in re.findall(r'class="fl-cm-count">([\d,]+)<', block)]
        found[title] = [counts[:2], counts[2:]]
    return found


def table(at, index: int = 0) -> pd.DataFrame:
    """The `index`-th metrics table on the page (`components.confusion.metrics_html` markup) as shown:
    text, and numbers as printed (one decimal for percentages, four for thresholds)."""
    tables = [t for element in at.html for t in re.findall(r'<div class="fl-mt">(.*?)</div>', element.value, re.S)]
    lines = [
        [html.unescape(cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", line)]
        for line in re.findall(r"<tr>(.*?)</tr>", tables[index])
    ]
    return pd.DataFrame([[_shown(cell) for cell in line] for line in lines[1:]], columns=lines[0])


def _shown(cell: str) -> object:
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell or None


def explore_links(at) -> list[dict[str, list[str]]]:
    return [
        parse_qs(link.proto.query_string)
        for link in at.get("page_link")
        if link.proto.label.startswith("Open in Explore")
    ]


def raw_cell(ref: int, cmp: int) -> set[str]:
    records, fables = raw.storysumm_records(), raw.storysumm_predictions()[FABLES]
    return {i for i, r in records.items() if r["label"] == ref and fables[i]["label"] == cmp}


def test_storysumm_shows_every_evaluator_with_its_rows_and_matrices(compare_page) -> None:
    at = compare_page(dataset="storysumm")
    predictions = raw.storysumm_predictions()
    overview = table(at)
    expected_rows = sum(2 if source in SCORE_SOURCES else 3 for source in predictions)
    assert len(overview) == expected_rows
    assert set(overview["Source"]) == set(predictions)
    assert set(overview.loc[overview["Source"] == "unieval", "Split"]) == {"val", "test"}
    assert len(matrices(at)) == len(predictions) - len(SCORE_SOURCES) + 2 * len(SCORE_SOURCES)
    assert at.radio[0].value == "summary" and at.selectbox[0].value == "gold"
    assert dict(at.query_params) == {"dataset": "storysumm"}, "choices the page made itself stay out of the URL"


def test_fables_heatmap_counts_match_the_raw_files(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources=FABLES)
    expected = [[len(raw_cell(1, 1)), len(raw_cell(1, 0))], [len(raw_cell(0, 1)), len(raw_cell(0, 0))]]
    assert matrices(at)[f"{FABLES} · all units"] == expected, "reference on the rows, faithful first"
    row = table(at).query("Source == @FABLES and Split == 'all'").iloc[0]
    assert row["n"] == 96


def test_choices_come_from_the_url_and_go_back_to_it(compare_page) -> None:
    at = compare_page(dataset="storysumm", level="sentence")
    assert at.radio[0].value == "sentence"
    assert at.multiselect[0].value == ["minicheck-flan-t5-large"]
    at.radio[0].set_value("summary").run()
    assert "level" not in at.query_params, "the first level is the default"
    at.multiselect[0].set_value([FABLES, "unieval"]).run()
    assert at.query_params["sources"] == [FABLES, "unieval"]
    assert set(table(at)["Source"]) == {FABLES, "unieval"}


def test_view_split_shows_that_splits_matrices(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources=[FABLES, "unieval"], view="test")
    assert set(matrices(at)) == {f"{FABLES} · test split", "unieval · test split"}
    records = raw.storysumm_records()
    n_test = sum(r["split"] == "test" for r in records.values())
    assert sum(map(sum, matrices(at)[f"{FABLES} · test split"])) == n_test


def test_threshold_slider_updates_rows_and_url(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources="unieval")
    tuned = at.slider(key=SLIDER).value
    assert tuned == pytest.approx(131 / 149), "the first best of np.linspace(0, 1, 150) on val"
    at.slider(key=SLIDER).set_value(0.5).run()
    records, unieval = raw.storysumm_records(), raw.storysumm_predictions()["unieval"]
    val = [i for i, r in records.items() if r["split"] == "val"]
    share = 100 * np.mean([unieval[i]["probs"] > 0.5 for i in val])
    row = table(at).query("Split == 'val'").iloc[0]
    assert row["% faithful"] == pytest.approx(share, abs=0.05) and row["Threshold"] == pytest.approx(0.5)
    assert at.query_params["thresholds"] == "unieval=0.5"
    at.button(key=f"{SLIDER}.reset").click().run()
    assert at.slider(key=SLIDER).value == pytest.approx(tuned)
    assert "thresholds" not in at.query_params


def test_threshold_from_the_url(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources="unieval", thresholds="unieval=0.7")
    assert at.slider(key=SLIDER).value == pytest.approx(0.7)
    records, unieval = raw.storysumm_records(), raw.storysumm_predictions()["unieval"]
    test = [i for i, r in records.items() if r["split"] == "test"]
    gold = [r["label"] for i, r in records.items() if r["split"] == "test"]
    bacc = 100 * balanced_accuracy_score(gold, [int(unieval[i]["probs"] > 0.7) for i in test])
    assert table(at).query("Split == 'test'").iloc[0]["Bal. acc. %"] == pytest.approx(bacc, abs=0.05)


def test_mapping_from_the_url_and_back(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources=FABLES, mapping="partial=exclude")
    at.session_state[MAPPING_OPEN] = True  # the expander draws its controls only while open
    at.run()
    assert at.selectbox(key=MAP_PARTIAL).value == "exclude"
    assert at.query_params["mapping"] == "partial=exclude,unverifiable=exclude,ambiguous=exclude"
    at.selectbox(key=MAP_PARTIAL).set_value("unfaithful").run()
    assert "mapping" not in at.query_params, "the default mapping stays out of the URL"
    assert at.expander[0].label == "Label mapping to binary: partial=unfaithful,unverifiable=exclude,ambiguous=exclude"


def test_drill_down_lists_the_cells_units_with_explore_links(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources=FABLES, pair=FABLES, cell="unfaithful,faithful")
    links = explore_links(at)
    expected = raw_cell(0, 1)
    assert {link["summary"][0] for link in links} == expected and len(links) == len(expected)
    assert all(link["dataset"] == ["storysumm"] and link["source"] == [FABLES] for link in links)
    assert at.query_params["cell"] == "unfaithful,faithful"
    at.segmented_control[0].set_value("faithful,unfaithful").run()
    assert {link["summary"][0] for link in explore_links(at)} == raw_cell(1, 0)


def test_sentence_drill_down_links_select_the_sentence(compare_page) -> None:
    at = compare_page(dataset="storysumm", level="sentence", cell="unfaithful,unfaithful")
    links = explore_links(at)
    assert links
    for link in links:
        summary_id, unit = link["summary"][0], link["unit"][0]
        assert unit == f"{summary_id}#s{int(link['sentence'][0]) - 1}"


@pytest.mark.parametrize(
    "params",
    [
        {"level": "paragraph", "reference": "nobody", "view": "never", "cell": "x,y"},
        {"sources": ["nope", "unieval"], "thresholds": "unieval=high,=3,garbage", "mapping": "partial=maybe"},
        {"pair": "nope", "dsplit": "nope", "topics": "x"},
        {"thresholds": "unieval=7"},
        {"thresholds": "unieval=nan"},
        {"sources": FABLES, "thresholds": "unieval=0.5"},
    ],
)
def test_every_ignored_link_value_gets_a_note_and_the_url_shows_what_is_used(compare_page, params) -> None:
    at = compare_page(dataset="storysumm", **params)
    assert at.radio[0].value == "summary"
    assert len(table(at)) >= 2
    notes = [w.value.replace("\\", "") for w in at.warning]
    for name in params:
        if name == "sources" and FABLES in params[name]:
            continue
        assert any(note.startswith(f"{name}=") and "in the link was ignored" in note for note in notes), (name, notes)
    assert "thresholds" not in at.query_params, "an ignored threshold leaves the tuned one in use and in view"
    if "sources" not in params:
        assert dict(at.query_params) == {"dataset": "storysumm"}


def test_the_drill_down_split_follows_the_matrices_view(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources=[FABLES, "unieval"], dsplit="val")
    drill = next(r for r in at.radio if r.label == "Split")
    assert drill.value == "val"
    next(r for r in at.radio if r.label == "Units").set_value("test").run()
    drill = next(r for r in at.radio if r.label == "Split")
    assert drill.value == "test", "a new view starts the drill-down at that view"
    assert at.query_params["view"] == "test" and "dsplit" not in at.query_params


def test_a_new_level_resets_the_controls_that_no_longer_apply(compare_page) -> None:
    at = compare_page(dataset="storysumm", pair=FABLES, dsplit="val", cell="faithful,unfaithful", view="test")
    at.radio[0].set_value("sentence").run()
    assert dict(at.query_params) == {"dataset": "storysumm", "level": "sentence"}
    assert next(r for r in at.radio if r.label == "Split").value == "all"
    assert next(r for r in at.radio if r.label == "Units").value == "all"


@pytest.mark.parametrize("dataset", ["tofueval", "fables"])
def test_a_dataset_with_only_gold_says_there_is_nothing_to_compare(compare_page, dataset: str) -> None:
    at = compare_page(dataset=dataset)
    assert any("nothing to compare" in info.value for info in at.info)
    assert not matrices(at)


def _paper_html(at) -> str:
    """The "Paper's figures" table (`components.paper_html` markup), '' when it is not drawn."""
    return html.unescape("".join(element.value for element in at.html if 'class="fl-pp"' in element.value))


def test_storysumm_says_it_reproduces_the_release_table_and_offers_the_papers(compare_page) -> None:
    at = compare_page(dataset="storysumm")
    assert any("release's own results table, figure for figure" in c.value for c in at.caption)
    toggle = next(t for t in at.toggle if t.label.startswith("Paper's figures"))
    assert toggle.value is False and not _paper_html(at), "the paper's figures wait for the toggle"
    toggle.set_value(True).run()
    shown = _paper_html(at)
    for name in ("Table 8", "Table 11", "Table 12", "Release notebook"):
        assert f'"fl-pp-text">{name}<' in shown
    assert at.query_params["paper"] == "1"


def test_the_papers_figures_name_each_difference_and_its_cause(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources=["unieval", "gpt-4-0125-preview/justquestion"], paper="1")
    shown = _paper_html(at)
    assert "Tuning by the exhaustive cut-point search gives this row" in shown, "Table 8's UniEval val row"
    assert "at threshold 0.8306 (20 of 33 val summaries above it)" in shown, "Table 11's UniEval row"
    assert "No threshold on the released test scores gives Table 8's row" in shown
    records, gpt4 = raw.storysumm_records(), raw.storysumm_predictions()["gpt-4-0125-preview/justquestion"]
    faithful = 100 * np.mean([gpt4[i]["label"] == 1 for i in records])
    assert f"label {faithful:.1f}% of all 96 summaries faithful, where Table 8 prints 71%" in shown
    kappa = cohen_kappa_score([records[i]["label"] for i in records], [gpt4[i]["label"] for i in records])
    assert f'title="paper 0.13, ours {kappa:.6g}: differs"' in shown, "Table 8's kappa .13 beside ours, amber"


def test_the_cut_point_search_is_a_threshold_search_in_the_url(compare_page) -> None:
    at = compare_page(dataset="storysumm", sources="unieval")
    search = next(r for r in at.radio if r.label == "Threshold search")
    assert search.value == "grid"
    search.set_value("cutpoints").run()
    records, unieval = raw.storysumm_records(), raw.storysumm_predictions()["unieval"]
    val = [i for i, r in records.items() if r["split"] == "val"]
    distinct = sorted({unieval[i]["probs"] for i in val})
    cuts = [(a + b) / 2 for a, b in zip(distinct[:-1], distinct[1:], strict=True)]
    gold = [r["label"] for i, r in records.items() if r["split"] == "val"]
    baccs = [balanced_accuracy_score(gold, [int(unieval[i]["probs"] > t) for i in val]) for t in cuts]
    best = cuts[int(np.argmax(baccs))]
    assert at.query_params["tuning"] == "cutpoints"
    assert at.slider(key=SLIDER.replace(".grid.", ".cutpoints.")).value == pytest.approx(best)
    row = table(at).query("Split == 'val'").iloc[0]
    assert row["Bal. acc. %"] == pytest.approx(100 * max(baccs), abs=0.05) and row["Threshold"] == pytest.approx(
        best, abs=5e-5
    )
    assert any("cut-point search, which reproduces the paper's Table 8 UniEval val row" in c.value for c in at.caption)


def test_the_papers_figures_are_storysumms_summary_level(compare_page) -> None:
    at = compare_page(dataset="storysumm", level="sentence", paper="1")
    assert not _paper_html(at) and not any(t.label.startswith("Paper's figures") for t in at.toggle)
    assert any(w.value.replace("\\", "").startswith("paper=") for w in at.warning)
    assert "paper" not in at.query_params
