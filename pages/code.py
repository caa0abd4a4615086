"""Code (served at /code): one coder codes the units of a coding session, one at a time, in context.

The coder is the signed-in person (`ctx.actor`; in local mode the one local user): there is no coder
picker, and a `coder=` in a link naming someone else is refused with a note. The URL says the session
and the unit when the coder moved away from where they resume (`faithlens.views.states.CodeState`). The
coding itself is `faithlens.coding` (sessions, modes, events), which checks every write and read against
`faithlens.access`; the panel is `components/coding/code.py`. A blind session shows no gold label, no
other coder's code and no LLM label anywhere on this page, whatever the URL asks.
"""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.coding import code as coding_code
from components.coding import data as coding_data
from components.coding import join as coding_join
from components.markdown import md_escape
from faithlens import querystate
from faithlens.coding import modes
from faithlens.unit_filter import level_noun
from faithlens.views.states import CodeState

ctx = shell.page_setup(urlstate.CODE)


def _header(found) -> None:
    book = coding_data.book_of(ctx.db_path, found)
    mode = modes.MODES[found.mode].title if found.mode in modes.MODES else found.mode
    facts = [mode, book.title, f"{len(found.units):,} {level_noun(found.level, len(found.units))}"]
    facts.append("blind" if found.blind else "not blind: the reference is below the unit")
    st.caption(md_escape(" · ".join(facts)))


def main() -> None:
    if ctx.dataset is None:
        st.stop()
    st.title(f"Code: {md_escape(ctx.dataset)}")
    if ctx.actor.mode == "demo":
        st.info(
            "This is a public demo server: nobody codes here, and a blind session that is still open shows "
            "nobody's codes.",
            icon=":material/visibility:",
        )
    state, notes = urlstate.read(urlstate.CODE, ctx.dataset)
    warnings = st.container()
    top_left, top_right = st.columns(2)
    with top_left:
        found = coding_join.pick_session(ctx, state, notes)
    coder = unit = ranker = None
    if found is not None:
        with top_right:
            coder = coding_join.coder(ctx, found, state, notes)
        _header(found)
    if found is not None and coder is not None:
        same = state.session == found.name
        if same and state.unit is not None and state.unit not in found.units:
            notes.append(querystate.ignored("unit", state.unit, f"not a unit of session {found.name}"))
        unit, ranker = coding_code.show(ctx, found, coder, state.unit if same else None, state.ranker)
    for note in notes:
        warnings.warning(md_escape(note), icon=":material/link_off:")
    urlstate.write(CodeState(ctx.dataset, found.name if found else None, None, unit, ranker))


with shell.guard():
    main()
