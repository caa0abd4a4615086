"""A unit's discussion, on the Code page (a coder explains their code) and in adjudication (the adjudicator
asks and answers): the thread, escaped (`faithlens.views.coding.comments_markup`), and a box to post to it.

What a coder reads is the core's decision (`faithlens.coding.comments`): in a blind session only their own
comments. Posting is a callback that stores the comment (committed when `comments.add` returns) before the
next run draws the thread; a refused comment shows as one error box and keeps what was typed."""

from __future__ import annotations

import streamlit as st

from components import shell
from faithlens.coding import comments, sessions
from faithlens.coding.comments import Comment
from faithlens.errors import FaithLensError
from faithlens.views import coding


def _post(db_path: str, name: str, unit: str, base: str, author: str | None, author_key: str | None, role: str) -> None:
    """Post's callback: the author is the coder the page codes as, or the adjudicator's name field."""
    state = st.session_state
    who = author if author is not None else (state.get(author_key) or "").strip()
    try:
        if not who:
            raise FaithLensError("the adjudicator's name is required", "type your name above the disagreements")
        root = shell.root_connection(db_path)
        comments.add(root, sessions.get(root, name), unit, state.get(base + ".text") or "", who, role)
    except FaithLensError as exc:
        state[base + ".error"] = exc
        return
    state[base + ".text"] = ""
    state[base + ".flash"] = "Comment posted."


def thread(
    db_path: str,
    found: sessions.Session,
    unit: str,
    shown: list[Comment],
    base: str,
    author: str | None = None,
    author_key: str | None = None,
) -> None:
    """The thread and the box to add to it: as the coder `author`, or (`author_key`) as the adjudicator
    named in that field."""
    if shown:
        st.html(coding.comments_markup(shown))
    else:
        st.caption("No comment on this unit yet.")
    if found.blind and author is not None:
        st.caption("Blind session: you see your own comments only; the adjudicator reads every coder's.")
    error = st.session_state.pop(base + ".error", None)
    if error is not None:
        shell.show_error(error)
    flash = st.session_state.pop(base + ".flash", None)
    if flash is not None:
        st.success(flash, icon=":material/chat:")
    role = "coder" if author is not None else "adjudicator"
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
        args=(db_path, found.name, unit, base, author, author_key, role),
    )
