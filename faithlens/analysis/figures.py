"""Figures as plain data: what a chart shows, the same numbers as a table, and how they were
computed. Components draw them; the core never imports a plotting library."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

BAR_COLUMNS = ["group", "series", "percent", "n", "total"]


@dataclass(frozen=True)
class BarFigure:
    """Percentages per group (a generator, a label source): drawn as bars, listed as a table."""

    key: str
    """Stable id: widget keys and the CSV file name."""
    title: str
    caption: str
    """One line: which label source, which level, which denominator."""
    bars: pd.DataFrame
    """Long form, one bar segment a row: group, series, percent, n, total."""
    table: pd.DataFrame
    """The same figures laid out like the paper's table; this is what the CSV holds."""
    stacked: bool
    """True: series are shares stacking to 100% per group. False: side-by-side rates."""
    axis: str
    """Value axis title."""


@dataclass(frozen=True)
class ScoreFigure:
    """Score-only label sources (a score, no verdict): their score distribution per level."""

    key: str
    title: str
    caption: str
    table: pd.DataFrame
    """One row per (source, level): n, min, q1, median, q3, max, mean."""
