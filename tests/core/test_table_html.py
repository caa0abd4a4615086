"""The table under each Overview figure (`components.charts.table_html`): dataset strings are
escaped and stay out of attributes, every row and cell is there in order, numbers read the way the
figure's CSV holds them (rounded for reading only), and blanks stay blank."""

from __future__ import annotations

import csv
import io
import re

from components.charts import table_html
from faithlens.analysis.figures import Table

PAYLOAD = "<img src=x onerror=alert(1)>\"'&"


def _cells(markup: str) -> list[list[str]]:
    return [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row) for row in re.findall(r"<tr>(.*?)</tr>", markup)]


def test_names_are_escaped_and_stay_out_of_attributes() -> None:
    markup = table_html(Table.of(["source", PAYLOAD], [[PAYLOAD, 3]]))
    assert "<img" not in markup and "onerror=alert(1)>" not in markup
    assert markup.count("&lt;img src=x onerror=alert(1)&gt;&quot;&#x27;&amp;") == 2, "header and cell"
    for attribute in re.findall(r'\w+="([^"]*)"', markup):
        assert "img" not in attribute and "alert" not in attribute


def test_every_row_and_cell_in_order_with_blanks_blank() -> None:
    table = Table.of(
        ["generator", "summaries", "% faithful", "note"],
        [
            ["gpt-4", 21, 33.3, None],
            ["Claude-2 (raw: claude, val)", 1_148, 85.0, "score only"],
            ["Overall", None, 9.1, ""],
        ],
    )
    rows = _cells(table_html(table))
    assert rows == [
        ["generator", "summaries", "% faithful", "note"],
        ["gpt-4", "21", "33.3", ""],
        ["Claude-2 (raw: claude, val)", "1,148", "85.0", "score only"],
        ["Overall", "", "9.1", ""],
    ]
    assert list(csv.reader(io.StringIO(table.to_csv())))[2] == [
        "Claude-2 (raw: claude, val)",
        "1148",
        "85.0",
        "score only",
    ]


def test_fractions_show_at_most_four_decimals_and_numbers_align_right() -> None:
    markup = table_html(Table.of(["source", "q1", "max"], [["unieval", 0.7701911007876197, 1.0]]))
    assert _cells(markup)[1] == ["unieval", "0.7702", "1.0"]
    assert re.findall(r'<th class="fl-num">(\w+)</th>', markup) == ["q1", "max"]
    assert '<td class="fl-num">0.7702</td>' in markup
