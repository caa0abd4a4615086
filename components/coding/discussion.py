"""A unit's discussion, on the Code page (a coder explains their code) and in adjudication (the adjudicator
asks and answers): the thread, escaped (`faithlens.views.coding.comments_markup`), and a box to post to it.

What a coder reads is the core's decision (`faithlens.coding.comments`): in a blind session only their own
comments. Posting is a callback that stores the comment (committed when `comments.add` returns) before the
next run draws the thread; a refused comment shows as one error box and keeps what was typed. The author
is the acting person, writing as a coder of the session or as its adjudicator (the core checks which
they may)."""

from __future__ import annotations

import streamlit as st

from components import shell
from faithlens import access
from faithlens.coding import comments, sessions, visible
from faithlens.coding.comments import Comment
from faithlens.errors import FaithLensError
from faithlens.views import coding


def _post(db_path: str, actor: access.Actor, name: str, unit: str, base: str, role: str) -> None:
    """Post's callback: the actor's comment, as a coder or as the adjudicator."""
    state = st.session_state
    try:
        root = shell.root_connection(db_path)
        comments.add(root, actor, sessions.get(root, name), unit, state.get(base + ".text") or "", role)
    except FaithLensError as exc:
        state[base + ".error"] = exc
        return
    state[base + ".text"] = ""
    state[base + ".flash"] = "Comment posted."


def thread(
    db_path: str,
    actor: access.Actor,
    found: sessions.Session,
    unit: str,
    shown: list[Comment],
    base: str,
    role: str,
    can_post: bool = True,
) -> None:
    """The thread and (`can_post`) the box to add to it, as a coder of the session or as its adjudicator
    (`role`)."""
    if shown:
        st.html(coding.comments_markup(shown))
    else:
        st.caption("No comment on this unit yet.")
    if not visible.sees_others(actor, found):
        st.caption("Blind session: you see your own comments only; the adjudicator reads every coder's.")
    error = st.session_state.pop(base + ".error", None)
    if error is not None:
        shell.show_error(error)
    flash = st.session_state.pop(base + ".flash", None)
    if flash is not None:
        st.success(flash, icon=":material/chat:")
    if not can_post:
        return
    st.text_area(
        "Your comment" if role == "coder" else "Comment as the adjudicator",
        key=base + ".text",
        height=80,
        max_chars=comments.MAX_CHARS,
        placeholder="Explain your code, or ask about this unit",
    )
    st.button(
        "Post comment",
        key=base + ".post",
        icon=":material/send:",
        on_click=_post,
        args=(db_path, actor, found.name, unit, base, role),
    )
