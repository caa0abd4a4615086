"""TofuEval's and FABLES' figures for the Reproduced figures page (`faithlens.views.reproduce_tofueval_fables`):
one per printed cell, the status against the printed figures typed in tests/core/tofueval_fables_published.py
and the counts recomputed here from the raw files, and a named cause for every difference. TofuEval's
charts that print no numbers (Figures 2, 4, 5) are listed with ours beside them, recomputed here from the
four CSVs, and the numbers Figure 4's prose states have no figure of ours in the release."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from faithlens.analysis.published import DIFFERS, MATCHES, MISSING, UNPRINTED
from faithlens.views import reproduce_tofueval_fables as reproduce
from tests import raw
from tests.core import tofueval_fables_published as typed


@pytest.fixture(scope="module")
def found(built_db: Path) -> dict:
    with duckdb.connect(str(built_db), read_only=True) as conn, conn.cursor() as cur:
        return {"tofueval": reproduce.tofueval_figures(cur), "fables": reproduce.fables_figures(cur)}


def _status(figures, table: str) -> Counter:
    return Counter(f.status for f in figures if f.table.name == table)


def test_tofueval_table_2_every_printed_cell_once(found) -> None:
    figures = [f for f in found["tofueval"] if f.table.name == "Table 2"]
    assert len(figures) == sum(len(values) for values in typed.TOFUEVAL_TABLE2.values())
    average = [f for f in figures if f.row.label == "Average"]
    assert {f.compared.column for f in average if f.status == MATCHES} == {
        f"{level}_{corpus}_main" for level in ("sentence", "summary") for corpus in ("mediasum", "meetingbank")
    }
    assert all(
        f.status == DIFFERS and f.cause_kind == reproduce.MARGINAL for f in average if "marginal" in f.compared.column
    )
    assert all(f.status == MISSING and f.cause_kind == reproduce.SHUFFLED for f in figures if f.row.label != "Average")


def test_tofueval_table_5_and_section_3_3_from_the_release(found) -> None:
    figures = {(f.table.name, f.row.label, f.compared.column): f for f in found["tofueval"]}
    for corpus, name in (("mediasum", "MediaSum"), ("meetingbank", "MeetingBank")):
        path = raw.DATA / "tofueval" / "topic_category" / f"{corpus}_topic_category.json"
        kinds = Counter(json.loads(path.read_text(encoding="utf-8")).values())
        share = figures["Table 5", name, "main_topic_pct"]
        assert share.compared.ours == pytest.approx(100 * kinds["main"] / kinds.total()) and share.status == MATCHES
        assert figures["Table 5", name, "documents"].compared.ours == 50
        assert figures["Table 5", name, "avg_len"].status == MISSING, "no transcripts in the release"
    size = {
        column: figures["Section 3.3", "TofuEval (five models)", column]
        for column in ("generated", "removed", "summaries", "sentences")
    }
    assert {c: f.compared.ours for c, f in size.items()} == {
        "generated": 1500,
        "removed": 21,
        "summaries": 1479,
        "sentences": 3965,
    }
    assert size["removed"].status == DIFFERS and "1,477, not the 1,479" in size["removed"].compared.cause
    assert size["sentences"].status == DIFFERS and "Model-Extra's" in size["sentences"].compared.cause


def test_fables_table_2_as_the_paper_computes_it(found) -> None:
    figures = found["fables"]
    assert len(figures) == sum(len(values) for values in typed.FABLES_TABLE2.values())
    assert _status(figures, "Table 2") == Counter({MATCHES: 30, MISSING: 5}), "all but the chunk sizes match"
    assert {f.compared.column for f in figures if f.status == MISSING} == {"chunk_size"}


@pytest.fixture(scope="module")
def sentences() -> list[dict]:
    return raw.tofueval_typed_sentences()


CHART_ROWS = {
    "none:all",
    "topic_type:main",
    "topic_type:marginal",
    f"generator_group:{raw.TOFUEVAL_SLOTS_POOLED}",
    "generator_group:Model-Extra",
}


@pytest.mark.parametrize(("name", "of"), [("Figure 2", "tagged"), ("Figure 5", "all")])
def test_figures_2_and_5_are_ours_beside_charts_without_numbers(found, sentences, name: str, of: str) -> None:
    figures = [f for f in found["tofueval"] if f.table.name == name]
    types = {t for s in sentences for t in s["types"]}
    assert {f.row.key for f in figures} == CHART_ROWS and {f.compared.column for f in figures} == types
    assert len(figures) == len(CHART_ROWS) * len(types)
    for figure in figures:
        by, group = figure.row.key.split(":", 1)
        members = [s for s in sentences if by == "none" or s[by] == group]
        whole = sum(1 for s in members if s["types"]) if of == "tagged" else len(members)
        carrying = sum(1 for s in members if figure.compared.column in s["types"])
        assert figure.compared.ours == pytest.approx(100 * carrying / whole), (name, figure.row.key)
        assert figure.status == UNPRINTED and figure.compared.paper.text == ""
        assert figure.compared.cause.startswith("published as a chart; no printed numbers to compare")
        state = figure.link.state
        assert figure.link.page == "errors" and (state.family, state.by, state.of) == ("error_type@sentence", by, of)
    if name == "Figure 2":
        marginal = next(f for f in figures if f.row.key == "topic_type:marginal")
        extrinsic = [s for s in sentences if s["topic_type"] == "marginal" and s["types"]]
        share = 100 * sum("Extrinsic Information" in s["types"] for s in extrinsic) / len(extrinsic)
        assert f"is {share:.1f}% of the marginal-topic sentences with an error" in marginal.compared.cause


def test_figure_4_lists_the_single_type_subsets_and_the_prose_figures_have_no_figure_of_ours(found, sentences):
    figures = [f for f in found["tofueval"] if f.table.name == "Figure 4"]
    single = Counter(next(iter(s["types"])) for s in sentences if len(s["types"]) == 1)
    assert {f.compared.column: f.compared.ours for f in figures} == dict(single)
    assert {f.row.key for f in figures} == {"subsets"}, "the release holds no evaluator's labels to recall"
    assert all(f.status == UNPRINTED and f.link.state.typed == "single" for f in figures)
    prose = [f for f in found["tofueval"] if f.table.name == "Figure 4, prose"]
    assert [(f.compared.column, f.compared.paper.text, f.status) for f in prose] == [
        ("recall_extrinsic", typed.TOFUEVAL_FIGURE4_PROSE[0], MISSING),
        ("below_non_llm", typed.TOFUEVAL_FIGURE4_PROSE[1], MISSING),
    ]
    assert "run tofueval-dir or tofueval-exp with a GPT-3.5-Turbo model" in prose[0].compared.cause
    assert prose[0].link.page == "runs" and prose[0].as_json()["cause"] == prose[0].compared.cause
