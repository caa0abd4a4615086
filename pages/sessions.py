"""Sessions (served at /sessions): coding sessions of a dataset: the list with each coder's progress, the
link that opens the session on the Code page, agreement, adjudication, exports and links to Compare and
Explore, and Close for an admin; the New session form (admins); and the codebooks (view; edit and load
from a file, admins). What each person sees or may do is the core's decision (`faithlens.access`).

The URL says the section, the open session, the codebook shown, the coder pair of the confusion matrix
and an Explore filter carried over by Explore's "Code the filtered set" link, offered as the new session's
unit set (`faithlens.views.states.SessionsState`). The work is `faithlens.coding`; rendering is
`components/coding/`.
"""

from __future__ import annotations

import streamlit as st

from components import shell, unit_sets, urlstate
from components.coding import codebooks as coding_codebooks
from components.coding import data as coding_data
from components.coding import new as coding_new
from components.coding import sessions as coding_sessions
from components.markdown import md_escape
from faithlens import querystate
from faithlens.filters import Filters
from faithlens.views.states import SESSIONS_VIEWS, SessionsState

ctx = shell.page_setup(urlstate.SESSIONS)
VIEW_TITLES = {"sessions": "Sessions", "new": "New session", "codebooks": "Codebooks"}


def _sessions(state: SessionsState, notes: list[str]) -> tuple[str | None, str | None]:
    """The list and the open session; returns the session and the coder pair for the URL."""
    found = coding_data.listed(ctx.db_path, ctx.version, ctx.dataset)
    if not found:
        st.info("No coding session of this dataset yet: make one in New session.", icon=":material/info:")
        return None, None
    picked = coding_sessions.table(ctx, found)
    chosen = coding_new.created(ctx.dataset) or picked or state.session
    if chosen is not None and coding_data.session(ctx.db_path, ctx.version, ctx.dataset, chosen) is None:
        notes.append(querystate.ignored("session", chosen, f"no coding session of {ctx.dataset} has that name"))
        chosen = None
    shown = coding_data.session(ctx.db_path, ctx.version, ctx.dataset, chosen) or found[0]
    st.divider()
    pair = coding_sessions.show(ctx, shown, state, notes)
    return chosen, pair


def main() -> None:
    if ctx.dataset is None:
        st.stop()
    st.title(f"Sessions: {md_escape(ctx.dataset)}")
    st.caption(
        "Human coding of summaries: sessions following the papers' annotation protocols, each coder's progress, "
        "agreement between coders, adjudication, and the codebooks they code with. Coders code on the Code page."
    )
    if ctx.actor.mode == "demo":
        st.info(
            "This is a public demo server: the sessions are shown as they stand; nobody codes, adjudicates, "
            "or makes sessions or codebooks here.",
            icon=":material/visibility:",
        )
    state, notes = urlstate.read(urlstate.SESSIONS, ctx.dataset)
    warnings = st.container()
    explore_filter = unit_sets.carried(ctx, state.filters, notes)
    view_key = urlstate.key(urlstate.SESSIONS, ctx.dataset, "view")
    view = st.radio(
        "Section",
        SESSIONS_VIEWS,
        key=urlstate.bind(view_key, state.view, SESSIONS_VIEWS),
        horizontal=True,
        format_func=VIEW_TITLES.get,
        label_visibility="collapsed",
    )
    session, pair, codebook = state.session, state.pair, state.codebook
    if view == "sessions":
        session, pair = _sessions(state, notes)
    elif view == "new":
        coding_new.section(ctx, explore_filter, view_key)
    else:
        codebook = coding_codebooks.section(ctx, state.codebook, notes)
    for note in notes:
        warnings.warning(md_escape(note), icon=":material/link_off:")
    urlstate.write(SessionsState(ctx.dataset, view, session, codebook, pair, explore_filter or Filters()))


with shell.guard():
    main()
