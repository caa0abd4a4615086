"""faithlens/analysis/published/tofueval.toml and fables.toml hold the papers' printed figures: each
table against the figures typed again in tests/core/tofueval_fables_published.py, and each typed row
found as a line of the paper's own text. The charts the TofuEval paper prints no numbers for are
listed as such, not typed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from faithlens.analysis import published
from tests.core import tofueval_fables_published as typed

TYPED = {
    ("tofueval", "table2"): typed.TOFUEVAL_TABLE2,
    ("tofueval", "table5"): typed.TOFUEVAL_TABLE5,
    ("tofueval", "table6"): typed.TOFUEVAL_TABLE6,
    ("fables", "table2"): typed.FABLES_TABLE2,
}
PAPER = {"tofueval": typed.TOFUEVAL_PAPER, "fables": typed.FABLES_PAPER}


@pytest.mark.parametrize(("paper", "key"), sorted(TYPED))
def test_the_toml_holds_the_printed_figures(paper: str, key: str) -> None:
    table = published.table(paper, key)
    assert {row.label: tuple(value.text for value in row.values) for row in table.rows} == TYPED[paper, key]


def _lines(path: Path) -> set[str]:
    """The paper's lines, tabs as spaces, a footnote mark, a % sign and the std's subscript markup dropped."""
    text = path.read_text(encoding="utf-8")
    return {" ".join(re.sub(r"[⁰-⁹]|%|_\{|\}", " ", line).split()) for line in text.splitlines()}


@pytest.mark.parametrize(("paper", "key"), sorted(TYPED))
def test_every_typed_row_is_a_line_of_the_paper(paper: str, key: str) -> None:
    if not PAPER[paper].is_file():
        pytest.skip(f"the papers are not at {PAPER[paper]}")
    lines = _lines(PAPER[paper])
    missing = [label for label, values in TYPED[paper, key].items() if " ".join((label, *values)) not in lines]
    assert not missing


def test_section_3_3_counts_are_the_papers_and_its_own_arithmetic_is_off() -> None:
    section = published.table("tofueval", "section3_3")
    assert tuple(value.text for value in section.rows[0].values) == typed.TOFUEVAL_SECTION3_3
    if typed.TOFUEVAL_PAPER.is_file():
        text = " ".join(typed.TOFUEVAL_PAPER.read_text(encoding="utf-8").split())
        assert (
            "we removed 23 model outputs" in text and "resulting in 1,479 summaries (3,966 summary sentences)" in text
        )
    generated, removed, kept, _ = (int(v.replace(",", "")) for v in typed.TOFUEVAL_SECTION3_3)
    assert generated - removed == kept - 2


def test_the_charts_without_numbers_are_listed_not_typed() -> None:
    names = {figure.name for figure in published.unprinted("tofueval")}
    assert names == {"Figure 2", "Figure 4", "Figure 5"}
    assert {table.name for table in published.paper_tables("tofueval")}.isdisjoint(names)


def test_figure_4s_prose_numbers_are_typed_as_quoted() -> None:
    (figure4,) = [chart for chart in published.unprinted("tofueval") if chart.name == "Figure 4"]
    assert tuple(value.text for value in figure4.quoted.rows[0].values) == typed.TOFUEVAL_FIGURE4_PROSE
    if typed.TOFUEVAL_PAPER.is_file():
        text = " ".join(typed.TOFUEVAL_PAPER.read_text(encoding="utf-8").split())
        recall, lower = typed.TOFUEVAL_FIGURE4_PROSE
        assert f"GPT-3.5-Turbo only detect {recall}% of such errors—approximately {lower}% lower" in text


def test_printed_precision_and_separators() -> None:
    fables = published.table("fables", "table2")
    assert fables.printed("MIXTRAL", "partial").decimals == 2, "'17.2' stands for 17.20: the table rounds to 2"
    assert fables.printed("CLAUDE-3-OPUS", "chunk_size").value == 180000
    assert fables.printed("MIXTRAL", "partial").matched_by(17.2027) and not fables.printed(
        "MIXTRAL", "partial"
    ).matched_by(17.21)
