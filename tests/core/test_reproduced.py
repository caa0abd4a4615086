"""The Reproduced figures read model and `python -m faithlens reproduced`, for StorySumm: the printed
numbers in faithlens/analysis/published/storysumm.toml against the ones typed in the tests from the
paper, every figure of ours against the raw files (recomputed with scikit-learn in
tests/core/storysumm_expected.py), the status against the printed precision, and the cause of every
difference checked on the raw scores."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import duckdb
import numpy as np
import pytest

from faithlens import cli
from faithlens.analysis import published
from faithlens.errors import FaithLensError
from faithlens.views import reproduced
from faithlens.views.states import CompareState, OverviewState
from tests import raw
from tests.core import storysumm_expected as expected
from tests.core import storysumm_published as typed

EVALUATOR_TABLES = {
    "table8": {key: values for key, values in typed.PAPER_TABLE_8.items()},
    "table11": {(source, "val"): values for source, values in typed.PAPER_TABLE_11.items()},
    "table12": {(source, "test"): values for source, values in typed.PAPER_TABLE_12.items()},
    "release": {key: values for key, values in typed.AUTHORS_NOTEBOOK.items()},
}
TABLE2_COLUMNS = ("summaries", "pct_faithful", "easy", "hard")


@pytest.fixture(scope="module")
def everything(built_db: Path) -> reproduced.Report:
    with duckdb.connect(str(built_db), read_only=True) as conn, conn.cursor() as cur:
        return reproduced.reproduce(cur)


@pytest.fixture(scope="module")
def report(everything: reproduced.Report) -> reproduced.Report:
    """StorySumm's figures (the other papers' are checked in test_reproduce_tofueval_fables, test_reproduce_arm)."""
    return reproduced.Report(tuple(f for f in everything.figures if f.paper == "storysumm"), everything.absent)


def test_every_paper_is_listed_in_the_issues_order(everything: reproduced.Report) -> None:
    assert list(dict.fromkeys(f.paper for f in everything.figures)) == ["storysumm", "fables", "tofueval", "arm"]
    assert everything.absent == ()


def _typed(table: str, key: str, split: str, column: str) -> tuple[float, int | None]:
    """The figure as typed in the tests from the paper, and the decimals its table rounds to."""
    if table == "table2":
        return typed.PAPER_TABLE_2[(key, split)][TABLE2_COLUMNS.index(column)], None
    if table == "table6":
        return typed.PAPER_TABLE_6_GOLD[TABLE2_COLUMNS.index(column) - 1], None
    if column == "threshold":
        return typed.AUTHORS_THRESHOLDS[key], None
    rounded = 2 if table != "table8" and column in typed.TWO_DECIMALS else None
    return EVALUATOR_TABLES[table][(key, split)][typed.FIELDS.index(column)], rounded


def _ours(table: str, key: str, split: str, column: str) -> float:
    """Our figure recomputed from the raw files: the paper's score rows by cut points, the release's by the grid."""
    if table in ("table2", "table6"):
        return expected.generator_table()[(key, split)][TABLE2_COLUMNS.index(column)]
    tuning = "grid" if table == "release" or key not in expected.SCORE_SOURCES else "cutpoints"
    return _rows(tuning)[(key, split)][column]


@functools.cache
def _rows(tuning: str) -> dict:
    return expected.expected_rows(tuning)


def test_the_printed_numbers_are_the_papers(report: reproduced.Report) -> None:
    assert len(report.figures) == typed.PRINTED_FIGURES
    for figure in report.figures:
        row, column = figure.row, figure.compared.column
        value, rounded = _typed(figure.table.key, row.key, row.split, column)
        assert float(figure.compared.paper.text) == pytest.approx(value, abs=1e-12), (figure.table.name, row, column)
        if rounded:
            assert figure.compared.paper.decimals == rounded, "a printed 0.3 in Tables 11/12 stands for 0.30"


def test_every_figure_of_ours_is_recomputed_from_the_raw_files(report: reproduced.Report) -> None:
    for figure in report.figures:
        row, column = figure.row, figure.compared.column
        tolerance = 0.05 if figure.table.key == "table2" and column == "pct_faithful" else 1e-6  # shown to 1 decimal
        want = _ours(figure.table.key, row.key, row.split, column)
        assert figure.compared.ours == pytest.approx(want, abs=tolerance), (figure.table.name, row.label, column)


def test_each_status_follows_the_printed_precision(report: reproduced.Report) -> None:
    for figure in report.figures:
        row, column = figure.row, figure.compared.column
        value, rounded = _typed(figure.table.key, row.key, row.split, column)
        ours = _ours(figure.table.key, row.key, row.split, column)
        matches = expected.within_printed(ours, figure.compared.paper.text, rounded)
        assert figure.status == ("matches" if matches else "differs"), (figure.table.name, row.label, column)
        if figure.status == "differs":
            assert figure.cause_kind and len(figure.compared.cause) > 40, (figure.table.name, row.label, column)


def _figures(report: reproduced.Report, table: str, key: str, split: str) -> list[reproduced.Figure]:
    return [f for f in report.figures if f.table.key == table and f.row.key == key and f.row.split == split]


def test_the_release_table_is_reproduced_figure_for_figure(report: reproduced.Report) -> None:
    release = [f for f in report.figures if f.table.key == "release"]
    assert len(release) == 7 * len(typed.AUTHORS_NOTEBOOK) + 2 * len(typed.AUTHORS_THRESHOLDS)
    assert all(f.status == "matches" for f in release)


def test_table_2_differs_by_the_annotator_labels_and_table_6_matches(report: reproduced.Report) -> None:
    table2 = [f for f in report.figures if f.table.key == "table2"]
    assert {f.status for f in table2 if f.compared.column == "summaries"} == {"matches"}
    differing = [f for f in table2 if f.status == "differs"]
    assert differing and {f.cause_kind for f in differing} == {"annotator labels"}
    assert "annotator labels are not in the release" in differing[0].compared.cause
    assert [f.status for f in report.figures if f.table.key == "table6"] == ["matches"] * 3


def _cut_giving(source: str, split: str, printed: tuple, rounded: int | None) -> float | None:
    """Independently: the first threshold on the released scores of `split` that gives every printed figure."""
    records, scores = raw.storysumm_records(), raw.storysumm_predictions()[source]
    distinct = sorted({scores[i]["probs"] for i in records if records[i]["split"] == split})
    cuts = [distinct[0] - 1, *((a + b) / 2 for a, b in zip(distinct[:-1], distinct[1:], strict=True)), distinct[-1]]
    for cut in cuts:
        got = expected.figures(expected.at_threshold(source, cut), split)
        decimals = [rounded if f in typed.TWO_DECIMALS else None for f in typed.FIELDS]
        if all(expected.within_printed(got[f], p, d) for f, p, d in zip(typed.FIELDS, printed, decimals, strict=True)):
            return cut
    return None


def test_the_score_rows_differences_are_found_on_the_released_scores(report: reproduced.Report) -> None:
    assert all(f.status == "matches" for f in _figures(report, "table8", "unieval", "val")), "cut points give it"
    table11 = _figures(report, "table11", "unieval", "val")
    cut = _cut_giving("unieval", "val", typed.PAPER_TABLE_11["unieval"], 2)
    records, scores = raw.storysumm_records(), raw.storysumm_predictions()["unieval"]
    above = sum(scores[i]["probs"] > cut for i in records if records[i]["split"] == "val")
    assert {f.cause_kind for f in table11 if f.status == "differs"} == {"another threshold"}
    assert f"at threshold {cut:.4f} ({above} of 33 val summaries above it)" in table11[0].compared.cause
    assert "annotator labels" in table11[0].compared.cause, "the paper's Table 9 tells why"
    for table, source in [("table8", "unieval"), ("table12", "unieval"), ("table8", "alignscore-roberta-large")]:
        printed = EVALUATOR_TABLES[table][(source, "test")]
        assert _cut_giving(source, "test", printed, 2 if table == "table12" else None) is None
        differing = [f for f in _figures(report, table, source, "test") if f.status == "differs"]
        assert differing and {f.cause_kind for f in differing} == {"released scores"}


def test_label_sources_differences_are_the_released_predictions(report: reproduced.Report) -> None:
    records, predictions = raw.storysumm_records(), raw.storysumm_predictions()
    for table in ("table8", "table11", "table12"):
        for figure in report.figures:
            if figure.table.key != table or figure.row.key in expected.SCORE_SOURCES or figure.status != "differs":
                continue
            assert figure.cause_kind == "released predictions"
            ids = [i for i in records if figure.row.split in ("all", records[i]["split"])]
            share = 100 * np.mean([predictions[figure.row.key][i]["label"] == 1 for i in ids])
            printed = EVALUATOR_TABLES[table][(figure.row.key, figure.row.split)][1]
            if not expected.within_printed(share, printed):
                assert f"{share:.1f}% of" in figure.compared.cause and f"prints {printed}%" in figure.compared.cause
            if table == "table8":
                assert "Results.ipynb) prints our figures" in figure.compared.cause


def test_each_figure_links_to_the_view_that_computes_it(report: reproduced.Report) -> None:
    for figure in report.figures:
        state = figure.link.state
        if figure.table.key in ("table2", "table6"):
            assert figure.link.page == "overview" and state == OverviewState("storysumm")
            continue
        assert figure.link.page == "compare" and isinstance(state, CompareState) and state.paper
        assert state.sources == (figure.row.key,)
        score_row = figure.row.key in expected.SCORE_SOURCES and figure.table.key != "release"
        assert state.tuning == ("cutpoints" if score_row else "grid")
        assert state.view == (None if figure.row.split == "all" else figure.row.split)
    link = _figures(report, "table8", "unieval", "val")[0].link
    assert link.href() == "/compare?dataset=storysumm&sources=unieval&tuning=cutpoints&paper=1&view=val"


def test_the_summary_counts_every_figure(report: reproduced.Report) -> None:
    summary = report.summary()
    assert summary.total == typed.PRINTED_FIGURES == summary.matches + summary.differs + summary.missing
    assert sum(n for _, n in summary.causes) == summary.differs
    assert summary.line().startswith(f"{typed.PRINTED_FIGURES} published figures: {summary.matches} match")


def test_the_cli_prints_the_same_figures(
    built_db: Path, report: reproduced.Report, everything: reproduced.Report, capsys
) -> None:
    assert cli.main(["reproduced", "--db", str(built_db), "--json"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert len(every["figures"]) == len(everything.figures)
    assert every["summary"]["unprinted"] == everything.summary().unprinted > 0
    missing = [f for f in every["figures"] if f["status"] == "no figure of ours"]
    assert missing and all(f["cause"] and f["cause_kind"] for f in missing), "a gap says why in the CSV and JSON"
    assert cli.main(["reproduced", "--db", str(built_db), "--paper", "storysumm", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    summary = report.summary()
    assert out["summary"]["total"] == summary.total and out["summary"]["matches"] == summary.matches
    assert len(out["figures"]) == typed.PRINTED_FIGURES
    first = out["figures"][0]
    assert (first["table"], first["row"], first["column"], first["paper_value"]) == (
        "Table 2",
        "Davinci-3",
        "summaries",
        "11",
    )
    assert first["link"] == "/?dataset=storysumm"
    assert cli.main(["reproduced", "--db", str(built_db), "--table", "table8", "--status", "differs", "--json"]) == 0
    chosen = json.loads(capsys.readouterr().out)["figures"]
    assert chosen and all(f["table"] == "Table 8" and f["status"] == "differs" and f["cause"] for f in chosen)


def test_the_published_file_refuses_a_figure_that_is_not_a_printed_string(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "bad.toml").write_text(
        'citation = "x"\n[[table]]\nkey = "t"\nname = "Table 1"\ntitle = "t"\nwhere = "w"\ncolumns = ["kappa"]\n'
        'rounded_to = {kappa = 2}\nrows = [{key = "a", values = [0.3]}]\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(published, "FOLDER", tmp_path)
    published.paper_tables.cache_clear()
    try:
        with pytest.raises(FaithLensError, match="must be a string as printed"):
            published.paper_tables("bad")
    finally:
        published.paper_tables.cache_clear()
