"""The charts are built from plain dicts that Plotly does not check (`components.charts._unchecked`,
for a cold first page's sake): every chart the Overview draws, for every bundled dataset, is what
Plotly's checked build makes of it, so a misspelt property, a wrong nesting or a stray `None` fails
here rather than in the browser; and the chart still says what its figure says."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import pytest

from components import charts
from faithlens import store
from faithlens.analysis.figures import BarFigure, ScoreFigure, Table
from faithlens.datasets import VENDORED
from faithlens.views import overview


def _figures(db: Path) -> list[BarFigure | ScoreFigure]:
    found = []
    conn = store.connect(db, create=False)
    try:
        with conn.cursor() as cur:
            for bundle in VENDORED:
                built = overview.build(cur, bundle.name)
                found += [*built.headline.generators, built.figures.labels, built.figures.scores]
    finally:
        store.close(conn)
    return [figure for figure in found if figure is not None]


def _chart(figure: BarFigure | ScoreFigure) -> go.Figure:
    return charts.bar_chart(figure) if isinstance(figure, BarFigure) else charts.score_chart(figure)


def _pruned(value: object) -> object:
    """`value` without empty objects, which Plotly's checked build leaves out (a legend's `title: {}`)."""
    if isinstance(value, dict):
        return {key: _pruned(item) for key, item in value.items() if item != {}}
    if isinstance(value, list):
        return [_pruned(item) for item in value]
    return value


def test_every_overview_chart_is_what_plotly_checked_build_makes_of_it(built_db: Path) -> None:
    figures = _figures(built_db)
    assert {type(figure) for figure in figures} == {BarFigure, ScoreFigure}
    assert {figure.stacked for figure in figures if isinstance(figure, BarFigure)} == {True, False}
    for figure in figures:
        spec = _chart(figure).to_dict()
        assert go.Figure(spec).to_dict() == _pruned(spec), figure.key


@pytest.mark.parametrize("stacked", [True, False])
def test_a_bar_chart_draws_each_share_with_its_counts(stacked: bool) -> None:
    bars = Table.of(
        ["group", "series", "percent", "n", "total"],
        [("model <b>", "faithful", 75.04, 3, 4), ("model <b>", "unfaithful", 24.96, 1, 4)],
    )
    figure = BarFigure(key="k", title="t", caption="c", bars=bars, table=bars, stacked=stacked, axis="%")
    spec = _chart(figure).to_dict()
    value, category = ("x", "y") if stacked else ("y", "x")
    assert [trace["name"] for trace in spec["data"]] == ["faithful", "unfaithful"]
    assert [trace[value] for trace in spec["data"]] == [[75.0], [25.0]]
    assert [trace[category] for trace in spec["data"]] == [["model &lt;b&gt;"]] * 2
    assert [trace["customdata"] for trace in spec["data"]] == [[[3, 4]], [[1, 4]]]
    assert spec["layout"]["barmode"] == ("stack" if stacked else "group")
