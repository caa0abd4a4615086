"""The Reproduced figures page in AppTest: the summary line over every paper, one table per paper table
with the paper's figure beside ours, filters read from and written to the URL, links into Compare, the
Overview, Errors, Runs and Sessions, TofuEval's charts without printed numbers, ARM's tables before any
source exists, and a bad link value. Expected counts come from the figures typed from the papers and the
raw files (tests/core), not from the code under test."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

from tests import raw
from tests.core import reproduced_printed as printed
from tests.core import storysumm_expected as expected
from tests.core import storysumm_published as typed

PAGE = "pages/reproduced.py"


def _tables(at) -> list[str]:
    return [html.unescape(e.value) for e in at.html if 'class="fl-pp"' in e.value]


def _links(at) -> list[str]:
    return [link for table in _tables(at) for link in re.findall(r'<a href="([^"]+)" target="_self">', table)]


def _headings(at) -> list[str]:
    return [h.value.replace("\\", "") for h in at.subheader]


def test_the_page_lists_every_papers_figures_with_a_summary(open_page) -> None:
    at = open_page(PAGE, dataset="storysumm")
    summary = next(m.value for m in at.markdown if "published figures" in m.value).replace("\\", "")
    assert summary.startswith(f"**{printed.ALL_PAPERS} published figures: ")
    assert "have no figure of ours (each says why)" in summary and "Beside charts that print no numbers" in summary
    headings = _headings(at)
    for citation, names in {
        "StorySumm (Subbiah et al., EMNLP 2024)": ("Table 2", "Table 6", "Table 8", "Table 11", "Table 12"),
        "FABLES (Kim et al., COLM 2024)": ("Table 2",),
        "TofuEval (Tang et al., NAACL 2024)": ("Table 2", "Table 5", "Section 3.3", "Figure 2", "Figure 4", "Figure 5"),
        "ARM: Is the Top Still Spinning? (Subbiah et al., EMNLP 2025)": ("Table 2", "Table 3", "Table 4", "Table 5"),
    }.items():
        for name in names:
            assert any(h.startswith(f"{citation}, {name}:") for h in headings), (citation, name)
    assert len(_tables(at)) == sum(printed.TABLES.values())
    assert at.get("download_button"), "the figures shown as CSV"
    assert dict(at.query_params) == {"dataset": "storysumm"}


def test_tofueval_charts_show_ours_beside_no_printed_number_and_link_to_errors(open_page) -> None:
    at = open_page(PAGE, dataset="storysumm", paper="tofueval", table="figure2")
    (shown,) = _tables(at)
    sentences = raw.tofueval_typed_sentences()
    typed_all = [s for s in sentences if s["types"]]
    extrinsic = 100 * sum("Extrinsic Information" in s["types"] for s in typed_all) / len(typed_all)
    assert f"chart<small>ours {extrinsic:.1f}</small>" in shown
    assert "Published as a chart; no printed numbers to compare." in shown
    assert {urlsplit(link).path for link in _links(at)} == {"/errors"}
    states = [parse_qs(urlsplit(link).query) for link in _links(at)]
    assert {state["by"][0] for state in states} == {"none", "topic_type", "generator_group"}
    at.selectbox(key="reproduced.storysumm.status").set_value("no printed number").run()
    assert at.query_params["status"] == "no printed number" and len(_tables(at)) == 1


def test_arm_before_any_source_says_what_to_create_and_where(open_page) -> None:
    at = open_page(PAGE, dataset="storysumm", paper="arm")
    tables = _tables(at)
    assert len(tables) == printed.TABLES["arm"]
    assert all('td class="fl-pp-ok"' not in t and 'td class="fl-pp-diff"' not in t for t in tables), "none of ours yet"
    text = "\n".join(tables)
    assert "run arm-rewrite (both) with a Claude model on StorySumm's summary sentences" in text
    assert "Code an ARM preference session" in text and "ARM's subjectivity labels" in text
    assert {urlsplit(link).path for link in _links(at)} == {"/runs", "/sessions"}


def test_filters_come_from_the_url_and_keep_only_those_figures(open_page) -> None:
    at = open_page(PAGE, dataset="storysumm", table="table8", status="differs")
    (shown,) = _tables(at)
    rows = shown.split('<tr class="fl-pp-figures">')[1:]
    table8 = expected.expected_rows("cutpoints")
    differing = [
        key
        for key, printed in typed.PAPER_TABLE_8.items()
        if any(not expected.within_printed(table8[key][f], p) for f, p in zip(typed.FIELDS, printed, strict=True))
    ]
    assert len(rows) == len(differing), "one line per printed row with a difference"
    assert all("fl-pp-diff" in line for line in rows), "each line shown has a differing figure"
    assert at.query_params["table"] == "table8" and at.query_params["status"] == "differs"
    at.selectbox(key="reproduced.storysumm.status").set_value("(all)").run()
    assert "status" not in at.query_params
    (shown,) = _tables(at)
    assert shown.count('<tr class="fl-pp-figures">') == len(typed.PAPER_TABLE_8)


def test_links_open_the_view_that_computes_the_figure(open_page) -> None:
    at = open_page(PAGE, dataset="storysumm", table="table8")
    links = [urlsplit(link) for link in _links(at)]
    assert {link.path for link in links} == {"/compare"}
    states = [parse_qs(link.query) for link in links]
    assert {state["sources"][0] for state in states} == {key[0] for key in typed.PAPER_TABLE_8}
    unieval_val = next(s for s in states if s["sources"] == ["unieval"] and s.get("view") == ["val"])
    assert unieval_val["tuning"] == ["cutpoints"] and unieval_val["paper"] == ["1"]
    at = open_page(PAGE, dataset="storysumm", paper="storysumm", table="table2")
    assert {urlsplit(link).path for link in _links(at)} == {"/"}


def test_a_link_value_the_page_cannot_use_gets_a_note(open_page) -> None:
    at = open_page(PAGE, dataset="storysumm", paper="nope", table="table99")
    notes = [w.value.replace("\\", "") for w in at.warning]
    assert any(n.startswith("paper=") for n in notes) and any(n.startswith("table=") for n in notes)
    assert len(_tables(at)) == sum(printed.TABLES.values()), "every figure stays listed"
    assert dict(at.query_params) == {"dataset": "storysumm"}
