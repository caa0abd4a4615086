"""The top of the Code page: which session, and whether the signed-in person codes in it. There is no
coder picker: the coder is always the acting person (`ctx.actor`); a link naming someone else as
`coder=` is refused with a note and the person's own work is shown. Someone who codes and has not
joined the session yet joins it with one click (`sessions.join`, in a callback, so the next run already
counts them); the core decides who may (`faithlens.access`), the page only offers what they may do."""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.coding import data as coding_data
from components.markdown import md_escape
from faithlens import access, querystate
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


def _join(db_path: str, dataset: str, name: str, actor: access.Actor) -> None:
    """Join's callback: the acting person joins the session."""
    root = shell.root_connection(db_path)
    try:
        sessions.join(root, actor, sessions.get(root, name))
    except FaithLensError as exc:
        st.session_state[key(dataset, name, "join_error")] = exc


def refuse_other_coder(actor: access.Actor, found: sessions.Session, state: CodeState, notes: list[str]) -> None:
    """A link's `coder=` naming someone else: noted, and ignored (the actor codes as themself)."""
    if state.session == found.name and state.coder is not None and state.coder != actor.id:
        why = f"you code as yourself ({actor.id}); nobody can code or read as someone else through a link"
        notes.append(querystate.ignored("coder", state.coder, why))


def coder(ctx: shell.PageContext, found: sessions.Session, state: CodeState, notes: list[str]) -> str | None:
    """The acting person when they code in this session now, else None with a line saying why (and a
    Join button for someone who codes but has not joined yet)."""
    actor = ctx.actor
    if actor is None:
        return None
    refuse_other_coder(actor, found, state, notes)
    error = st.session_state.pop(key(ctx.dataset, found.name, "join_error"), None)
    if error is not None:
        shell.show_error(error)
    if found.closed:
        st.info(
            md_escape(f"Session {found.name} was closed by {found.closed_by}: its codes are final."),
            icon=":material/lock:",
        )
        _sessions_link(ctx.dataset, found.name)
        return None
    if actor.id in coding_data.coders(ctx.db_path, ctx.version, found.name):
        st.caption(md_escape(f"Coding as {actor.person.name} ({actor.id})"))
        return actor.id
    if actor.mode == "demo":  # the page says it is a demo server, where nobody codes
        return None
    if not access.allowed(actor, "join", closed=found.closed):
        st.info(
            md_escape(
                f"You are a {actor.role} (who {access.ROLE_HELP[actor.role]}): coding needs the coder role; "
                "ask an admin for it on the People page."
            ),
            icon=":material/visibility:",
        )
        return None
    st.info(md_escape(f"You have not joined session {found.name} yet."), icon=":material/person_add:")
    st.button(
        f"Join as {actor.id}",
        key=key(ctx.dataset, found.name, "join"),
        type="primary",
        icon=":material/person_add:",
        on_click=_join,
        args=(ctx.db_path, ctx.dataset, found.name, actor),
    )
    return None
