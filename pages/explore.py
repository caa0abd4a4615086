"""Explore (served at /explore): the filtered list of summaries and one summary beside its source.

Every choice lives in the URL (`?dataset=&summary=&source=&sentence=&unit=` plus the filters), so
a shared link reopens the same view (`faithlens.views.states.ExploreState`, bound by
`components/urlstate.py`). The queries live in `faithlens.views`; rendering in `components/explore_*.py`.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from components import explore_detail, explore_filters, explore_list, shell, urlstate
from components.markdown import md_escape
from faithlens import filters
from faithlens.views.states import ExploreState

ctx = shell.page_setup(urlstate.EXPLORE)
with shell.guard():
    if ctx.dataset is None:
        st.stop()
    st.title(f"Explore: {md_escape(ctx.dataset)}")
    state, link_notes = urlstate.read(urlstate.EXPLORE, ctx.dataset)
    options = explore_filters.load_options(ctx.db_path, ctx.version, ctx.dataset)
    from_url, notes = filters.check_against(state.filters, options)
    for note in (*link_notes, *notes):
        st.warning(md_escape(note), icon=":material/link_off:")
    chosen = explore_filters.panel(ctx.dataset, options, from_url)
    listing, picked = explore_list.show(ctx, chosen)
    detail = state.detail
    picked = picked or explore_list.opened(ctx.dataset)
    if picked is not None:
        detail = replace(detail, summary=picked, sentence=None, unit=None)
    elif detail.summary is None and listing.ids:
        detail = replace(detail, summary=listing.ids[0], sentence=None, unit=None)
    if detail.summary is not None:
        st.divider()
        explore_list.navigation(ctx, listing, detail.summary)
        detail = explore_detail.show(ctx, detail, chosen.source)
    urlstate.write(ExploreState(ctx.dataset, chosen, detail))
