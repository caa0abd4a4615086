"""The Overview of TofuEval and FABLES in AppTest: each paper table's figure is drawn with the paper's
printed row beside ours (matches / differs and why) and the evidence under it; FABLES shows its two
views, all 26 books first. The numbers themselves are checked against the raw files in
tests/core/test_tofueval_table2.py and test_fables_table2.py."""

from __future__ import annotations

import json

from tests.apptest import clean


def _text(at) -> str:
    return "\n".join([*(m.value for m in at.markdown), *(c.value for c in at.caption)]).replace("\\", "")


def test_tofueval_table_2_is_shown_beside_the_paper(app_test) -> None:
    at = app_test("app.py", dataset="tofueval")
    at.run()
    clean(at)
    subheaders = [s.value.replace("\\", "") for s in at.subheader]  # as shown: Markdown escapes dropped
    assert subheaders[:2] == [
        "TofuEval Table 2, sentence level: unfaithful sentences per corpus and topic type",
        "TofuEval Table 2, summary level: unfaithful summaries per corpus and topic type",
    ]
    text = _text(at)
    assert text.count("Beside the paper: TofuEval (Tang et al., NAACL 2024), Table 2") == 2
    assert "Marginal topics differ: 34.8 / 36.4 here" in text and "Marginal topics differ: 51.6 / 51.3 here" in text
    assert "shuffles their order per topic" in text, "the slot note beside the breakdown"
    first = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert not any(name.startswith("slot ") for trace in first["data"] for name in trace["x"])
    html = "\n".join(block.value for block in at.html)
    assert "Table 2 as printed: Average" in html
    assert "differs (2 of 4 match)" in html, "the main-topic cells match, the marginal ones do not"
    assert "no figure of ours" in html
    assert len(at.get("download_button")) == 5, "each figure's table and its comparison, and the label distribution"


def test_fables_table_2_has_the_all_books_and_the_papers_24_books_views(app_test) -> None:
    at = app_test("app.py", dataset="fables")
    at.run()
    clean(at)
    subheaders = [s.value.replace("\\", "") for s in at.subheader]  # as shown: Markdown escapes dropped
    assert subheaders[0] == "FABLES Table 2: claim verdicts per generator, all 26 books"
    assert subheaders[1].startswith("FABLES Table 2, the paper's 24 books")
    text = _text(at)
    assert text.count("Beside the paper: FABLES (Kim et al., COLM 2024), Table 2") == 2
    assert "How the books are found" in text
    html = "\n".join(block.value for block in at.html)
    assert "matches" in html and "differs" in html
