"""ARM preference's points block on the Code page: when the coder prefers the version that was rewritten,
each point of its explanation (ARM A.3) is marked IMPORTANT, NEUTRAL or WRONG; when there are no points,
the block says why (never asked, the split failed to parse, r = s, no explanation) and, where asking again
could give them, offers it: a paid call through `faithlens.llm.points.ask_again`, the core's one way to
ask for points. The words name the version by its letter only (A or B), never as original or rewrite."""

from __future__ import annotations

import streamlit as st

from components import shell
from components.markdown import md_escape
from faithlens import access, config
from faithlens.coding import modes
from faithlens.coding.sessions import Session
from faithlens.errors import FaithLensError
from faithlens.llm import points as llm_points


def _ask_again(base: str, actor: access.Actor, dataset: str, level: str, source: str, unit: str) -> None:
    """The button's callback: ask for the points anew; the next run reads them under the new data version."""
    try:
        root = shell.root_connection(str(config.db_path()))
        found = llm_points.ask_again(root, dataset, level, source, unit, actor)
    except FaithLensError as exc:
        st.session_state[base + ".points.error"] = exc
        return
    st.session_state[base + ".points.asked"] = found.reason


def block(session: Session, base: str, context: modes.Context, tag: str, actor: access.Actor) -> None:
    """The preferred version's explanation points to mark, or why there are none (and Ask again)."""
    error = st.session_state.pop(base + ".points.error", None)
    if error is not None:
        shell.show_error(error)
    if context.points:
        st.markdown(md_escape(f"The explanation of {tag}: mark each point."))
        for number, point in enumerate(context.points):
            st.text(f"{number + 1}. {point}")
            st.radio(
                f"Point {number + 1}",
                modes.POINT_MARKS,
                key=f"{base}.p.{number}",
                index=None,
                horizontal=True,
                label_visibility="collapsed",
            )
        return
    asked = base + ".points.asked" in st.session_state
    st.session_state.pop(base + ".points.asked", None)
    reason = context.points_reason or llm_points.NOT_ASKED
    again = " (asked again just now)" if asked else ""
    st.info(md_escape(f"No explanation points to mark for {tag}{again}: {reason}."), icon=":material/info:")
    paid = access.allowed(actor, "ask_model", cached=False)
    if context.points_askable and context.points_unit is not None and session.suggestions and paid:
        st.button(
            f"Ask for the points of {tag} again",
            key=base + ".points.ask",
            icon=":material/replay:",
            on_click=_ask_again,
            args=(base, actor, session.dataset, session.level, session.suggestions, context.points_unit),
            help="A paid call: the same model splits the same explanation into points (ARM A.3). "
            "Your choice and note stay as they are.",
        )
