"""The top of the Code page: which session, and who codes. A coder's join link names both; anyone else
picks the session and their name from those who joined, or types a new name and joins
(`sessions.join`, in a callback, so the next run already counts them)."""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.coding import data as coding_data
from components.markdown import md_escape
from faithlens import querystate
from faithlens.coding import sessions
from faithlens.errors import FaithLensError
from faithlens.views.states import CodeState


def key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.CODE, dataset, *parts)


def pick_session(ctx: shell.PageContext, state: CodeState, notes: list[str]) -> sessions.Session | None:
    """The session the URL names (else the one picked here), or None while none is chosen."""
    found = coding_data.listed(ctx.db_path, ctx.version, ctx.dataset)
    names = [s.name for s in found]
    wanted = state.session
    if wanted is not None and wanted not in names:
        notes.append(querystate.ignored("session", wanted, f"no coding session of {ctx.dataset} has that name"))
        wanted = None
    if not names:
        st.info("No coding session of this dataset yet: make one on the Sessions page.", icon=":material/info:")
        _sessions_link(ctx.dataset, None)
        return None
    chosen = st.selectbox(
        "Session",
        names,
        index=None,
        key=urlstate.bind(key(ctx.dataset, "session"), wanted, names),
        placeholder="Choose a coding session",
    )
    return coding_data.session(ctx.db_path, ctx.version, ctx.dataset, chosen)


def _sessions_link(dataset: str, session: str | None) -> None:
    if shell.links_resolve():
        from faithlens.views.states import SessionsState

        st.page_link(
            **urlstate.link(urlstate.SESSIONS, SessionsState(dataset=dataset, session=session)),
            label="Open the Sessions page" if session is None else "This session on the Sessions page",
            icon=urlstate.SESSIONS.icon,
        )


def _join(db_path: str, dataset: str, name: str, typed_key: str | None, coder: str | None) -> None:
    """Join's callback: add the coder to the session and make them the one coding."""
    root = shell.root_connection(db_path)
    wanted = coder if coder is not None else st.session_state.get(typed_key or "", "")
    try:
        stored = sessions.join(root, sessions.get(root, name), wanted or "")
    except FaithLensError as exc:
        st.session_state[key(dataset, name, "join_error")] = exc
        return
    st.session_state[key(dataset, name, "coder")] = stored
    st.session_state[key(dataset, name, "joined")] = stored


def pick_coder(ctx: shell.PageContext, found: sessions.Session, state: CodeState) -> tuple[str | None, str | None]:
    """The coder who codes now (None while nobody is chosen or the URL's coder has not joined yet), and
    the coder for the URL: the URL's own until they join, so a join link survives the Join click."""
    known = list(coding_data.coders(ctx.db_path, ctx.version, found.name))
    joined = st.session_state.pop(key(ctx.dataset, found.name, "joined"), None)
    wanted = state.coder if state.session == found.name else None
    error = st.session_state.pop(key(ctx.dataset, found.name, "join_error"), None)
    if error is not None:
        shell.show_error(error)
    if wanted is not None and wanted not in known and joined is None:
        st.info(md_escape(f"{wanted} has not joined session {found.name} yet."), icon=":material/person_add:")
        st.button(
            f"Join as {wanted}",
            key=key(ctx.dataset, found.name, "join_named"),
            type="primary",
            on_click=_join,
            args=(ctx.db_path, ctx.dataset, found.name, None, wanted),
        )
        return None, wanted
    coder_key = urlstate.bind(key(ctx.dataset, found.name, "coder"), joined or wanted, known)
    chosen = st.selectbox("Coder", known, index=None, key=coder_key, placeholder="Pick your name, or join below")
    if chosen is None:
        _join_form(ctx, found)
    return chosen, chosen


def _join_form(ctx: shell.PageContext, found: sessions.Session) -> None:
    typed_key = key(ctx.dataset, found.name, "new_coder")
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.text_input("New coder: your name", key=typed_key, placeholder="e.g. ana")
    right.button(
        "Join",
        key=key(ctx.dataset, found.name, "join"),
        icon=":material/person_add:",
        on_click=_join,
        args=(ctx.db_path, ctx.dataset, found.name, typed_key, None),
        width="stretch",
    )
