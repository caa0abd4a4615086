"""The Sessions page's list of sessions and the open session: its settings (and, for an admin, Close),
each coder's progress and the link that opens the session on the Code page (where the signed-in person
codes as themself), then agreement (`coding_report`), adjudication (`coding_adjudicate`), the exports
and the links to Compare and Explore. What a blind session hides is the core's decision
(`faithlens.coding.visible`); this page offers only what the actor may see or do."""

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
from faithlens import access, querystate
from faithlens.coding import closing, exchange, modes, sessions, visible
from faithlens.coding.codebook import Codebook
from faithlens.errors import FaithLensError
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
    """Each coder's progress, and the link that opens the session on the Code page."""
    shown = coding_data.progress(ctx.db_path, ctx.version, found.name)
    if not shown:
        st.info("No coder yet: share the link below; a coder opens it, signed in, and joins the session.")
    for item in shown:
        fraction = item.coded / item.total if item.total else 0.0
        st.progress(fraction, text=f"{item.coder}: {item.coded:,} of {item.total:,} coded")
    if found.closed:
        return
    st.markdown("**Open this session**: whoever opens this link codes as themself, once they joined.")
    _open_link(ctx.dataset, found.name)


def _open_link(dataset: str, name: str) -> None:
    state = CodeState(dataset=dataset, session=name)
    if shell.links_resolve():
        label = "Open this session on the Code page"
        st.page_link(**urlstate.link(urlstate.CODE, state), label=label, icon=urlstate.CODE.icon)
    st.code("/code?" + urlencode(querystate.encode(state), doseq=True), language=None)


def _close(db_path: str, actor: access.Actor, dataset: str, name: str) -> None:
    """Close's callback: close the session once and for all."""
    root = shell.root_connection(db_path)
    try:
        closing.close(root, actor, sessions.get(root, name))
    except FaithLensError as exc:
        st.session_state[key(dataset, name, "close_error")] = exc


def _closing(ctx: shell.PageContext, found: sessions.Session) -> None:
    """Who closed the session, or (for an admin) the Close control."""
    error = st.session_state.pop(key(ctx.dataset, found.name, "close_error"), None)
    if error is not None:
        shell.show_error(error)
    if found.closed:
        st.caption(md_escape(f"Closed by {found.closed_by}: the codes are final."))
        return
    if ctx.actor is None or not access.allowed(ctx.actor, "close_session"):
        return
    with st.popover("Close session", icon=":material/lock:"):
        st.markdown(
            "Closing is final: no more codes, undos, decisions or comments. The coders then see the agreement, "
            "the adjudication"
            + (
                " and each other's codes, and the codes join the label sources of Explore and Compare "
                "(the session is blind until then)."
                if found.blind
                else "."
            )
        )
        st.button(
            f"Close {found.name} now",
            key=key(ctx.dataset, found.name, "close"),
            type="primary",
            on_click=_close,
            args=(ctx.db_path, ctx.actor, ctx.dataset, found.name),
        )


def _export_bytes(db_path: str, actor: access.Actor, name: str, fmt: str, what: str) -> bytes:
    """The session's codes or comments as a file (`exchange.export` into a temporary folder), on the
    download's thread."""
    root = shell.root_connection(db_path)
    found = sessions.get(root, name)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"{what}.{fmt}"
        exchange.export(root, actor, found, fmt, out, what)
        return out.read_bytes()


EXPORT_TITLES = {
    "codes": "**Export the codes** (one row per coder and unit, the adjudicated label included)",
    "comments": "**Export the discussion** (one row per comment: every coder's and the adjudicator's)",
}


def _exports(ctx: shell.PageContext, found: sessions.Session) -> None:
    if ctx.actor is None or not visible.sees_others(ctx.actor, found):
        st.info(
            "The exports hold every coder's codes: in a blind session they are for adjudicators and admins until "
            "an admin closes it.",
            icon=":material/lock:",
        )
        return
    for what in exchange.EXPORTS:
        st.markdown(EXPORT_TITLES[what])
        columns = st.columns(len(exchange.FORMATS))
        for column, fmt in zip(columns, exchange.FORMATS, strict=True):
            column.download_button(
                f"Download {what} {fmt.upper()}",
                data=lambda fmt=fmt, what=what: _export_bytes(ctx.db_path, ctx.actor, found.name, fmt, what),
                file_name=f"{found.name}.{fmt}" if what == "codes" else f"{found.name}.{what}.{fmt}",
                mime=MIME[fmt],
                key=key(ctx.dataset, found.name, "export", fmt) + ("" if what == "codes" else f".{what}"),
                icon=":material/download:",
                on_click="ignore",
                width="stretch",
            )


def _links(ctx: shell.PageContext, found: sessions.Session, book: Codebook) -> None:
    """Compare the coders' label sources; Explore coloured by one coder's."""
    if not shell.links_resolve() or ctx.actor is None or not visible.sees_others(ctx.actor, found):
        return
    everyone = coding_data.everyone(ctx.db_path, ctx.version, found.name, ctx.actor)
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
    _closing(ctx, found)
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
