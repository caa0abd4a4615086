"""The confusion-matrix markup of the Compare page (`components.charts.matrix_html`): source names
from user imports are escaped, counts and row shares are in reading order, and no dataset string
lands in an attribute."""

from __future__ import annotations

import re

from components.charts import matrix_grid_html, matrix_html

PAYLOAD = "<img src=x onerror=alert(1)>\"'&"


def test_names_are_escaped_and_stay_out_of_attributes() -> None:
    markup = matrix_grid_html(
        [matrix_html(((1, 2), (3, 4)), ("faithful", "unfaithful"), "gold says", f"{PAYLOAD} says", PAYLOAD, PAYLOAD)],
        columns=3,
    )
    assert "<img" not in markup and "onerror=alert(1)>" not in markup
    assert markup.count("&lt;img src=x onerror=alert(1)&gt;&quot;&#x27;&amp;") == 3, "column title, title, note"
    for attribute in re.findall(r'\w+="([^"]*)"', markup):
        assert "img" not in attribute and "alert" not in attribute


def test_counts_and_row_shares_in_reading_order() -> None:
    markup = matrix_html(((5, 3), (9, 16)), ("faithful", "unfaithful"), "gold says", "judge says", "judge · all units")
    assert re.findall(r'class="fl-cm-count">([\d,]+)<', markup) == ["5", "3", "9", "16"]
    assert re.findall(r"(\d+)% of row", markup) == ["62", "38", "36", "64"]
    assert markup.index(">faithful</th><td") < markup.index(">unfaithful</th><td"), "reference rows, faithful first"


def test_an_empty_row_shows_zero_shares() -> None:
    markup = matrix_html(((0, 0), (1, 1_234)), ("faithful", "unfaithful"), "r", "c", "t")
    assert re.findall(r"(\d+)% of row", markup) == ["0", "0", "0", "100"]
    assert ">1,234<" in markup
