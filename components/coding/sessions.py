"""The Sessions page's list of sessions and the open session: its settings, each coder's progress and
join link, then agreement (`coding_report`), adjudication (`coding_adjudicate`), the exports and the
links to Compare and Explore."""

from __future__ import annotations

import tempfile
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from components import row_picker, shell, urlstate
from components.coding import adjudicate as coding_adjudicate
from components.coding import data as coding_data
from components.coding import report as coding_report
from components.markdown import md_escape
from faithlens import querystate
from faithlens.coding import exchange, modes, sessions
from faithlens.coding.codebook import Codebook
from faithlens.filters import Filters
from faithlens.views import coding
from faithlens.views.states import CodeState, CompareState, ExploreState, SessionsState

MIME = {"csv": "text/csv", "jsonl": "application/jsonl", "parquet": "application/vnd.apache.parquet"}


def key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.SESSIONS, dataset, *parts)


def table(ctx: shell.PageContext, found: list[sessions.Session]) -> str | None:
    """The dataset's sessions, newest first; returns the session the user just chose (else None)."""
    rows = [coding.session_row(item, coding_data.progress(ctx.db_path, ctx.version, item.name)) for item in found]
    columns = {
        "coded": st.column_config.ProgressColumn("coded", min_value=0.0, max_value=1.0, format="percent"),
        "coders": st.column_config.TextColumn(width="medium"),
    }
    return row_picker.chosen_row(rows, key(ctx.dataset, "table"), "session", columns)


def _facts(found: sessions.Session, book: Codebook) -> None:
    mode = modes.MODES[found.mode].title if found.mode in modes.MODES else found.mode
    facts = [
        f"mode: {mode}",
        f"codebook: {book.title} ({book.label})",
        f"level: {found.level}",
        f"units: {found.selection}",
        "ordering: " + ("shuffled per coder (seeded)" if found.ordering == "seeded" else "fixed, the same for all"),
        "blind" if found.blind else "not blind",
    ]
    if found.suggestions:
        facts.append(f"suggestions from: {found.suggestions}")
    st.caption(md_escape(" · ".join(facts)))


def _progress(ctx: shell.PageContext, found: sessions.Session) -> None:
    """Each coder's progress with their join link; how anyone else joins."""
    shown = coding_data.progress(ctx.db_path, ctx.version, found.name)
    if not shown:
        st.info("No coder yet: share the Code page link below; coders join by typing their name.")
    for item in shown:
        fraction = item.coded / item.total if item.total else 0.0
        left, right = st.columns([3, 2], vertical_alignment="center")
        left.progress(fraction, text=f"{item.coder}: {item.coded:,} of {item.total:,} coded")
        with right:
            _join_link(ctx.dataset, found.name, item.coder)
    st.markdown("**Anyone can join**: open the Code page with this link and type their name.")
    _join_link(ctx.dataset, found.name, None)


def _join_link(dataset: str, name: str, coder: str | None) -> None:
    state = CodeState(dataset=dataset, session=name, coder=coder)
    if shell.links_resolve():
        label = f"Code as {coder}" if coder else "Open the session on the Code page"
        st.page_link(**urlstate.link(urlstate.CODE, state), label=md_escape(label), icon=urlstate.CODE.icon)
    st.code("/code?" + urlencode(querystate.encode(state), doseq=True), language=None)


def _export_bytes(db_path: str, name: str, fmt: str, what: str) -> bytes:
    """The session's codes or comments as a file (`exchange.export` into a temporary folder), on the
    download's thread."""
    root = shell.root_connection(db_path)
    found = sessions.get(root, name)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"{what}.{fmt}"
        exchange.export(root, found, fmt, out, what)
        return out.read_bytes()


EXPORT_TITLES = {
    "codes": "**Export the codes** (one row per coder and unit, the adjudicated label included)",
    "comments": "**Export the discussion** (one row per comment: every coder's and the adjudicator's)",
}


def _exports(ctx: shell.PageContext, found: sessions.Session) -> None:
    for what in exchange.EXPORTS:
        st.markdown(EXPORT_TITLES[what])
        columns = st.columns(len(exchange.FORMATS))
        for column, fmt in zip(columns, exchange.FORMATS, strict=True):
            column.download_button(
                f"Download {what} {fmt.upper()}",
                data=lambda fmt=fmt, what=what: _export_bytes(ctx.db_path, found.name, fmt, what),
                file_name=f"{found.name}.{fmt}" if what == "codes" else f"{found.name}.{what}.{fmt}",
                mime=MIME[fmt],
                key=key(ctx.dataset, found.name, "export", fmt) + ("" if what == "codes" else f".{what}"),
                icon=":material/download:",
                on_click="ignore",
                width="stretch",
            )


def _links(ctx: shell.PageContext, found: sessions.Session, book: Codebook) -> None:
    """Compare the coders' label sources; Explore coloured by one coder's."""
    if not shell.links_resolve():
        return
    everyone = coding_data.everyone(ctx.db_path, ctx.version, found.name)
    with_codes = sorted({coder for coder, _ in everyone})
    if not with_codes:
        st.caption("Links to Compare and Explore appear once a coder has saved a code.")
        return
    if not book.verdicts:
        family = book.family or ""
        st.caption(md_escape(f"This codebook's codes are tags ({family}): Explore filters by them (the Tags filter)."))
        return
    sources = [found.source(coder) for coder in with_codes]
    st.page_link(
        **urlstate.link(
            urlstate.COMPARE,
            CompareState(dataset=ctx.dataset, level=found.level, reference=sources[0], sources=tuple(sources[1:])),
        ),
        label=md_escape(f"Compare the coders ({', '.join(with_codes)})"),
        icon=urlstate.COMPARE.icon,
    )
    for coder, source in zip(with_codes, sources, strict=True):
        st.page_link(
            **urlstate.link(urlstate.EXPLORE, ExploreState(dataset=ctx.dataset, filters=Filters(source=source))),
            label=md_escape(f"Explore coloured by {coder}"),
            icon=urlstate.EXPLORE.icon,
        )


def show(ctx: shell.PageContext, found: sessions.Session, state: SessionsState, notes: list[str]) -> str | None:
    """The open session; returns the coder pair whose confusion matrix is drawn (for the URL)."""
    book = coding_data.book_of(ctx.db_path, found)
    st.subheader(md_escape(found.name))
    _facts(found, book)
    progress, agreement, adjudication, export = st.tabs(["Coders", "Agreement", "Adjudication", "Export and links"])
    with progress:
        _progress(ctx, found)
    with agreement:
        pair = coding_report.show(ctx, found, book, state.pair if state.session == found.name else None, notes)
    with adjudication:
        coding_adjudicate.show(ctx, found, book)
    with export:
        _exports(ctx, found)
        _links(ctx, found, book)
    return pair
