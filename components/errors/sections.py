"""The Errors page's three sections under its controls: the distribution heatmap, the values that
share a unit, and recall per value. Each says how it was computed and offers its table as CSV; every
count links to Explore on exactly those units (`faithlens.views.error_links`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import charts, shell, urlstate
from components.errors import data as errors_data
from components.errors.tables import Cell, heatmap_html
from components.markdown import md_escape
from faithlens.analysis.figures import Table
from faithlens.analysis.tag_stats import Family
from faithlens.unit_filter import level_noun
from faithlens.views import error_links, errors
from faithlens.views.errors import ALL_GROUPS, Distribution, Recall


def _href(state) -> str | None:
    return None if state is None else urlstate.href(urlstate.EXPLORE, state)


def distribution(ctx: shell.PageContext, shown: Distribution) -> None:
    """Heatmap of the values (rows) over the groups (columns), each cell linked to Explore."""
    family = shown.family
    st.subheader("Where the values occur")
    if not shown.values:
        st.info(
            f"No {family.level} carries a value of {family.name}{' from ' + shown.tagged_by if shown.tagged_by else ''}."
        )
        return
    cells = {(row.value, row.group): row for row in shown.rows}

    def cell(value: str, group: str) -> Cell:
        row = cells[(value, group)]
        return Cell(row.units, row.pct, _href(error_links.spread_cell(ctx.dataset, shown, value, group)))

    totals = shown.totals

    def column_name(group: str) -> str:
        name = "(none recorded)" if group == "" else group
        tagged, units = totals[group]
        return f"{name} ({tagged:,} of {units:,})"

    units = level_noun(family.level)
    note = (
        f"Each column heading: the group, then how many of its {units} carry any value of {family.name}, of all "
        f"its {units}. {shown.how()} Each count opens those {units} in Explore."
    )
    st.html(heatmap_html(shown.values, shown.groups, cell, family.name, note, column_name=column_name))
    for line in shown.notes():
        st.caption(md_escape(line))
    counted = {"tagged_by": shown.sources_counted}
    table = Table.from_records(
        ("family", "value", "group", "units", "pct", "tagged_by"), ({**r.as_json(), **counted} for r in shown.rows)
    )
    name = f"{ctx.dataset}_{family.name}_by_{shown.by or 'all'}{family.file_suffix(shown.tagged_by)}.csv"
    charts.csv_download(table, name, "errors_spread_csv")


def together(ctx: shell.PageContext, family: Family, tagged_by: str | None) -> None:
    """Values that share a unit: the units carrying both (the diagonal: the units carrying one)."""
    if family.verdicts_of is not None:
        return
    st.subheader("Values on the same unit")
    matrix: pd.DataFrame = errors_data.together(ctx.db_path, ctx.version, ctx.dataset, family, tagged_by)
    values = list(matrix.index)
    shared = int(matrix.to_numpy().sum() - matrix.to_numpy().trace()) // 2
    if not shared:
        st.caption(md_escape(f"No {family.level} carries two values of {family.name}."))
        return
    st.caption(
        md_escape(
            f"Each cell: the {level_noun(family.level)} carrying both values (tagged by "
            f"{family.sources_counted(tagged_by)}); the diagonal, those carrying the value. "
            f"Two values share a unit {shared:,} times (a unit with three values counts three pairs)."
        )
    )

    def cell(first: str, second: str) -> Cell | None:
        count = int(matrix.loc[first, second])
        share = 100.0 * count / int(matrix.loc[first, first]) if matrix.loc[first, first] else None
        href = _href(error_links.pair_cell(ctx.dataset, family, tagged_by, first, second)) if count else None
        return Cell(count, share, href)

    st.html(heatmap_html(values, values, cell, family.name, "% of the row's units.", pct_words=" of row"))
    rows = ((a, b, int(matrix.loc[a, b])) for a in values for b in values)
    charts.csv_download(
        Table.of(
            ("first", "second", "units", "tagged_by"), (row + (family.sources_counted(tagged_by),) for row in rows)
        ),
        f"{ctx.dataset}_{family.name}_pairs{family.file_suffix(tagged_by)}.csv",
        "errors_pairs_csv",
    )


def recall(ctx: shell.PageContext, result: Recall, splits: tuple[str, ...], tagged_by: str | None) -> None:
    """Recall per value and source: chart, then the table whose counts open the flagged and missed units."""
    figure = errors.recall_figure(result)
    charts.plot(figure, (ctx.db_path, ctx.version, ctx.dataset))
    st.caption(md_escape(figure.caption))
    for note in result.notes:
        st.caption(md_escape(note))
    sources = [c.name for c in result.sources]
    rows = {(row.value, row.source): row for row in result.rows}

    def cell(value: str, source: str) -> Cell | None:
        row = rows.get((value, source))
        if row is None or row.total == 0:
            return None
        href = _href(error_links.recall_cell(ctx.dataset, result, row, True, splits, tagged_by))
        return Cell(row.flagged, None if row.recall is None else 100.0 * row.recall, href)

    def column_name(source: str) -> str:
        units = next((r.units for r in result.rows if r.source == source), ALL_GROUPS)
        return source if units == ALL_GROUPS else f"{source} ({units})"

    note = "Each cell: the units the source flags (linked), and the recall, of the units counted in its column."
    st.html(heatmap_html(result.family.values, sources, cell, result.family.name, note, " recall", column_name))
    suffix = result.family.file_suffix(tagged_by)
    charts.csv_download(figure.table, f"{ctx.dataset}_{result.family.name}_recall{suffix}.csv", "errors_recall_csv")
    _missed_links(ctx, result, splits, tagged_by)


def _missed_links(ctx: shell.PageContext, result: Recall, splits: tuple[str, ...], tagged_by: str | None) -> None:
    """The units each source misses, per value, as links (where a source misses any)."""
    missed = [row for row in result.rows if row.total > row.flagged]
    if not missed:
        return
    with st.expander(f"Missed units ({sum(r.total - r.flagged for r in missed):,})"):
        lines = []
        for row in missed:
            href = _href(error_links.recall_cell(ctx.dataset, result, row, False, splits, tagged_by))
            words = f"{row.source} misses {row.total - row.flagged:,} of {row.total:,} {row.value}"
            lines.append(f"[{md_escape(words)}]({href})" if href else md_escape(words))
        st.markdown("\n".join(f"- {line}" for line in lines))
