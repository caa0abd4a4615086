"""ARM's printed Tables 2-5 as typed into faithlens/analysis/published/arm.toml: the figures here are typed
again from the paper (ARM: Is the Top Still Spinning?, Subbiah et al., EMNLP 2025; section and table
below, page numbers not in the extracted text), and each row is found in the paper's own text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from faithlens.analysis import published

PAPER = Path(__file__).resolve().parents[2].parent / "shared" / "papers" / "003_12cbdc4e893b0a8a.txt"

# Section 5.2, Table 2: Bal. acc., F1-macro.
TABLE2 = {
    "Llama-3.1-8B finetuned": ("49.62", "0.50"),
    "Claude-3.5 zero-shot": ("63.85", "0.61"),
    "Claude-3.5 few-shot": ("66.21", "0.62"),
    "Claude-3.5 self-consistency": ("50.42", "0.50"),
    "Claude-3.5 ARM (ours)": ("69.15", "0.53"),
    "GPT-4 zero-shot": ("58.04", "0.57"),
    "GPT-4 few-shot": ("58.94", "0.56"),
    "GPT-4 self-consistency": ("57.73", "0.59"),
    "GPT-4 ARM (ours)": ("63.55", "0.58"),
}
# Section 5.3, Table 3: Subj., Unfaith., Subj. or unfaith., # Rewrites, Avg. edit dist.
TABLE3 = {
    "Claude subj.": ("67.89", "67.42", "69.00", "246", "0.40"),
    "Claude both": ("69.15", "68.05", "69.96", "341", "0.61"),
    "Claude unfaith.": ("66.7", "68.21", "63.56", "218", "0.46"),
    "GPT-4 subj.": ("53.95", "55.42", "54.61", "486", "0.17"),
    "GPT-4 both": ("63.55", "64.95", "63.39", "203", "0.22"),
    "GPT-4 unfaith.": ("64.01", "63.09", "63.56", "390", "0.21"),
}
# Section 5.4, Table 4: Original claims, Rewrites (significance stars dropped).
TABLE4 = {"Agreement": ("36.36", "57.45"), "Faithful": ("20.45", "89.36"), "Preferred": ("23.08", "76.92")}
# Section 5.4, Table 5: % Important, % None important, % Wrong, % None wrong.
TABLE5 = {"Individual": ("84.11", "5.29", "7.52", "87.83"), "Maj. vote": ("68.72", "24.39", "0.56", "98.78")}
TYPED = {"table2": TABLE2, "table3": TABLE3, "table4": TABLE4, "table5": TABLE5}


@pytest.mark.parametrize("key", sorted(TYPED))
def test_arm_toml_holds_the_printed_figures(key: str) -> None:
    table = published.table("arm", key)
    assert {row.label: tuple(value.text for value in row.values) for row in table.rows} == TYPED[key]


@pytest.mark.parametrize("key", sorted(TYPED))
def test_every_typed_row_is_a_line_of_the_paper(key: str) -> None:
    if not PAPER.is_file():
        pytest.skip(f"the papers are not at {PAPER}")
    lines = {
        " ".join(re.sub(r"</?b>|\*+", "", line).split()) for line in PAPER.read_text(encoding="utf-8").splitlines()
    }
    missing = [label for label, values in TYPED[key].items() if " ".join((label, *values)) not in lines]
    assert not missing


def test_table2s_arm_rows_are_table3s_both_rows_and_rows_name_our_sources() -> None:
    """The reason the subjectivity prompt's note was corrected: Table 2's ARM rows equal the "both" prompt's."""
    table2, table3 = published.table("arm", "table2"), published.table("arm", "table3")
    for family in ("claude", "gpt-4"):
        assert table2.printed(f"{family}/arm-rewrite-both", "balanced_accuracy").text == (
            table3.printed(f"{family}/arm-rewrite-both", "subj").text
        )
        assert table2.printed(f"{family}/arm-rewrite-both", "balanced_accuracy").text != (
            table3.printed(f"{family}/arm-rewrite-subjectivity", "subj").text
        )
    assert table3.printed("claude/arm-rewrite-unfaithfulness", "subj").decimals == 2
