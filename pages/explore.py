"""Explore (served at /explore): the filtered list of summaries and one summary beside its source.

Every choice lives in the URL (`?dataset=&summary=&source=&sentence=&unit=` plus the filters), so
a shared link reopens the same view; `components/explore_state.py` says which form is canonical.
The queries live in `faithlens.explore`; rendering in `components/explore_*.py`.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from components import explore_detail, explore_filters, explore_list, explore_state, shell
from components.markdown import md_escape
from faithlens import explore

ctx = shell.page_setup("Explore", icon=":material/menu_book:")
with shell.guard():
    if ctx.dataset is None:
        st.stop()
    st.title(f"Explore: {md_escape(ctx.dataset)}")
    from_url, state = explore_state.read(ctx.dataset)
    options = explore_filters.load_options(ctx.db_path, ctx.version, ctx.dataset)
    from_url, notes = explore.check_against(from_url, options)
    for note in notes:
        st.warning(md_escape(note), icon=":material/link_off:")
    filters = explore_filters.panel(ctx.dataset, options, from_url)
    listing, picked = explore_list.show(ctx, filters)
    if picked is not None:
        state = replace(state, summary=picked, sentence=None, unit=None)
    elif state.summary is None and listing.ids:
        state = replace(state, summary=listing.ids[0], sentence=None, unit=None)
    if state.summary is not None:
        st.divider()
        explore_list.navigation(ctx, listing, state.summary)
        state = explore_detail.show(ctx, state, filters.source)
    explore_state.write(ctx.dataset, filters, state)
