"""Overview (served at /): what a dataset holds, how its labels are distributed, and how faithful
each generator is, as the benchmark papers tabulate it."""

from __future__ import annotations

import streamlit as st

from components import charts, shell, urlstate
from components.markdown import md_escape
from faithlens.views import overview
from faithlens.views.catalog import DatasetInfo
from faithlens.views.states import OverviewState


@st.cache_data(show_spinner=False, max_entries=32)
def load_headline(db_path: str, version: str, dataset: str, _info: DatasetInfo) -> overview.Headline:
    """Counts and generator tables, recomputed only when the data version changes; `_info` is the
    dataset's counts the shell already read at this version (not part of the cache key)."""
    with shell.root_connection(db_path).cursor() as cur:
        return overview.build_headline(cur, dataset, _info)


@st.cache_data(show_spinner=False, max_entries=32)
def load_label_figures(db_path: str, version: str, dataset: str) -> overview.LabelFigures:
    """Label distributions: loaded after the first charts are drawn, so they appear sooner."""
    with shell.root_connection(db_path).cursor() as cur:
        return overview.build_label_figures(cur, dataset)


def show_headline(report: overview.Headline) -> None:
    st.title(f"Overview: {md_escape(report.dataset)}")
    if report.description:
        st.caption(md_escape(report.description))
    counts = report.counts
    cells = (
        ("Documents", counts.documents),
        ("with source text", counts.documents_with_text),
        ("Summaries", counts.summaries),
        ("Sentences", counts.sentences),
        ("Claims", counts.claims),
        ("Labels", counts.labels),
    )
    if counts.extracted:
        cells = (*cells[:5], ("Extracted claims", counts.extracted_claims), cells[5])
    for column, (label, value) in zip(st.columns(len(cells)), cells, strict=True):
        column.metric(label, f"{value:,}")
    if counts.extracted:
        sets = "; ".join(claim_set.counted() for claim_set in counts.extracted)
        st.caption(md_escape(f"Claims: the dataset's own. Extracted claims, a model's, counted apart: {sets}."))
    if report.missing:
        st.info("\n".join(f"- {md_escape(note)}" for note in report.missing), icon=":material/info:")


def show_generators(report: overview.Headline, cache_key: tuple[str, str, str]) -> None:
    """The generator charts, with the headline (title, counts) above them drawn after the first
    chart: the browser starts loading Plotly only when a chart arrives, so that one goes out first."""
    top = st.container()
    st.header("Faithfulness per generator", divider="gray")
    if not report.generators:
        st.info("No generator table: this dataset has no gold label with a verdict.", icon=":material/info:")
    for figure in report.generators[:1]:
        charts.show_figure(figure, report.dataset, cache_key)
    with top:
        show_headline(report)
    for figure in report.generators[1:]:
        charts.show_figure(figure, report.dataset, cache_key)


ctx = shell.page_setup(urlstate.OVERVIEW, sidebar_later=True)
try:
    with shell.guard():
        urlstate.write(OverviewState(ctx.dataset))
        if ctx.dataset is not None:
            cache_key = (ctx.db_path, ctx.version, ctx.dataset)
            (info,) = (d for d in ctx.datasets if d.name == ctx.dataset)
            report = load_headline(*cache_key, info)
            show_generators(report, cache_key)
            st.header("Labels per source and level", divider="gray")
            figures = load_label_figures(*cache_key)
            if figures.labels is None:
                st.info("No label distribution: this dataset has no labels.", icon=":material/info:")
            else:
                charts.show_figure(figures.labels, report.dataset, cache_key)
            if figures.scores is not None:
                charts.show_figure(figures.scores, report.dataset, cache_key)
finally:
    shell.draw_sidebar(ctx)  # after the charts, also when the error box stopped the run
