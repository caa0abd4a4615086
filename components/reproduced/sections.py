"""The Reproduced figures page's parts: the cached report, the filters (paper, table, status) bound
to the URL, one escaped table per paper table, and the CSV of the figures shown."""

from __future__ import annotations

import streamlit as st

from components import paper_html, shell, urlstate
from components.markdown import md_escape
from faithlens.querystate import ignored
from faithlens.views import reproduced
from faithlens.views.reproduced import STATUSES, Figure, Report
from faithlens.views.states import ReproducedState

ANY = "(all)"
PAGES_BY_NAME = {page.name: page for page in urlstate.PAGES}


@st.cache_data(show_spinner=False, max_entries=8)
def report(db_path: str, version: str) -> Report:
    """Every reproducer's figures, recomputed only when the data version changes."""
    with shell.root_connection(db_path).cursor() as cur:
        return reproduced.reproduce(cur)


def key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.REPRODUCED, dataset, *parts)


def _choice(label: str, widget: str, options: dict[str, str], wanted: str | None, notes: list[str], name: str) -> str:
    """A select box over `options` (value -> shown name; ANY first) bound to the URL's value; a value
    not among them adds a note."""
    if wanted is not None and wanted not in options:
        notes.append(ignored(name, wanted, f"expected one of {', '.join(list(options)[1:])}"))
        wanted = None
    values = list(options)
    return st.selectbox(label, values, key=urlstate.bind(widget, wanted or ANY, values), format_func=options.get)


def filters(
    dataset: str, figures: tuple[Figure, ...], wanted: ReproducedState, notes: list[str]
) -> tuple[list[Figure], ReproducedState]:
    """The figures the filters keep, and the URL state saying the filters."""
    row = st.container(horizontal=True)
    with row:
        papers = {ANY: ANY, **{f.paper: f.table.citation for f in figures}}
        paper = _choice("Paper", key(dataset, "paper"), papers, wanted.paper, notes, "paper")
        kept = [f for f in figures if paper in (ANY, f.paper)]
        tables = {ANY: ANY, **{f.table.key: f.table.name for f in kept}}
        table = _choice("Table", key(dataset, "table", paper), tables, wanted.table, notes, "table")
        kept = [f for f in kept if table in (ANY, f.table.key)]
        statuses = {ANY: ANY, **{status: status for status in STATUSES}}
        status = _choice("Status", key(dataset, "status"), statuses, wanted.status, notes, "status")
        kept = [f for f in kept if status in (ANY, f.status)]
    state = ReproducedState(
        dataset=dataset,
        paper=None if paper == ANY else paper,
        table=None if table == ANY else table,
        status=None if status == ANY else status,
    )
    return kept, state


def href(figure: Figure) -> str | None:
    link = figure.link
    return None if link is None else urlstate.href(PAGES_BY_NAME[link.page], link.state)


def tables(figures: list[Figure]) -> None:
    """One section per paper table: its name and title, where it is, its note, its counts, the table."""
    groups: dict[tuple[str, str], list[Figure]] = {}
    for figure in figures:
        groups.setdefault((figure.paper, figure.table.key), []).append(figure)
    for shown in groups.values():
        table = shown[0].table
        st.subheader(md_escape(f"{table.reference}: {table.title}"))
        counts = reproduced.summarize(shown)
        st.caption(md_escape(f"{table.where}. {counts.line()} {table.note}".strip()))
        st.html(paper_html.reproduced_html(shown, [href(f) for f in shown]))


def download(figures: list[Figure], state: ReproducedState) -> None:
    table = reproduced.as_table(figures, [href(f) for f in figures])
    st.download_button(
        "Download CSV",
        data=lambda: table.to_csv().encode("utf-8"),
        file_name="reproduced_figures.csv",
        mime="text/csv",
        key=key(state.dataset or "", "csv"),
        on_click="ignore",
        icon=":material/download:",
    )
