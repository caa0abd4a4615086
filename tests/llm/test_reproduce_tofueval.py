"""TofuEval Figure 4 on the Reproduced figures page once an evaluator has labelled sentences: the prose's
"GPT-3.5-Turbo only detect 50% of such errors" (section 5.2) is compared with the recall of a GPT-3.5-Turbo
source made through the real ask path (transcript attached, scripted server), recomputed here from the
raw CSV rows chosen and the replies given; the chart gets that source's recall per error type."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.build import ingest
from faithlens.llm import ask
from faithlens.views import reproduce_tofueval_charts as charts
from tests import raw
from tests.core import tofueval_fables_published as typed
from tests.llm.conftest import ME, asking, target
from tests.llmserver import LLMServer

MODEL = "gpt-3.5-turbo-0125"
SOURCE = f"llm/tofueval-dir/{MODEL}"
REPLIES = ("No", "No", "Yes")
"""One reply per sentence: the first two flagged inconsistent, the third not."""


def _extrinsic_sentences() -> list[dict[str, str]]:
    """Three gold-inconsistent sentences of one document carrying Extrinsic Information alone (raw CSVs)."""
    by_doc: dict[str, list[dict[str, str]]] = {}
    for row in raw.tofueval_rows():
        if row["sent_label"] == "no" and row["type"].strip() == "Extrinsic Information":
            by_doc.setdefault(row["doc_id"], []).append(row)
    return next(rows[: len(REPLIES)] for rows in by_doc.values() if len(rows) >= len(REPLIES))


def test_a_gpt_35_source_stands_beside_the_prose_figure(llm_env: LLMServer, db_copy: Path, tmp_path: Path) -> None:
    rows = _extrinsic_sentences()
    docs = tmp_path / "transcripts.csv"
    with docs.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["doc_id", "source"], [rows[0]["doc_id"], "HOST: A transcript."]])
    ingest.import_file(db_copy, docs, "tofueval-docs", "tofueval")
    conn = store.connect(db_copy)
    for row, reply in zip(rows, REPLIES, strict=True):
        unit_id = f"{row['doc_id']} / {row['model_name']} / {row['topic']}#s{int(row['sent_idx']) - 1}"
        unit = target(conn, "tofueval", unit_id)
        assert unit.text == row["summ_sent"]
        llm_env.queue(reply)
        assert ask.ask(conn, unit, asking(llm_env, "tofueval-dir", model=MODEL), ME).status == "ok"
    conn.close()
    with duckdb.connect(str(db_copy), read_only=True) as read, read.cursor() as cur:
        figures = charts.chart_figures(cur, "tofueval")
    recall = 100 * REPLIES.count("No") / len(REPLIES)

    prose = {f.compared.column: f for f in figures if f.table.name == "Figure 4, prose"}
    shown = prose["recall_extrinsic"]
    assert shown.row.label == f"GPT-3.5-Turbo, Extrinsic Information: ours {SOURCE}"
    assert (shown.compared.paper.text, shown.compared.ours) == (typed.TOFUEVAL_FIGURE4_PROSE[0], pytest.approx(recall))
    assert shown.status == "differs" and "approximate" in shown.compared.cause and shown.cause_kind
    assert shown.link.href() == "/errors?dataset=tofueval&family=error_type%40sentence&sources=" + (
        SOURCE.replace("/", "%2F")
    )
    assert prose["below_non_llm"].status == "no figure of ours"

    chart = [f for f in figures if f.table.name == "Figure 4" and f.row.key == SOURCE]
    assert {f.compared.column: f.compared.ours for f in chart if f.compared.ours is not None} == {
        "Extrinsic Information": pytest.approx(recall)
    }
    assert all(f.status == "no printed number" for f in chart)
