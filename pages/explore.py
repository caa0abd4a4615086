"""Explore (served at /explore): the filtered list of summaries and one summary beside its source.

Every choice lives in the URL (`?dataset=&summary=&source=&sentence=&claim=` plus the filters; an
older link's `unit=`, a stored id, opens the same unit), so a shared link reopens the same view
(`faithlens.views.states.ExploreState`, bound by `components/urlstate.py`). The queries live in
`faithlens.views`; rendering in `components/explore/`.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from components import shell, unit_sets, urlstate
from components.explore import detail as explore_detail
from components.explore import filters as explore_filters
from components.explore import list as explore_list
from components.markdown import md_escape
from faithlens import filter_options, querystate
from faithlens.views import explore
from faithlens.views.states import ExploreState

ctx = shell.page_setup(urlstate.EXPLORE)


def main() -> None:
    if ctx.dataset is None:
        st.stop()
    st.title(f"Explore: {md_escape(ctx.dataset)}")
    state, notes = urlstate.read(urlstate.EXPLORE, ctx.dataset)
    notes[:0] = [ctx.dataset_note] if ctx.dataset_note else []
    options = unit_sets.load_options(ctx.db_path, ctx.version, ctx.dataset)
    from_url, filter_notes = filter_options.check_against(state.filters, options)
    notes += filter_notes
    warnings = st.container()
    chosen = explore_filters.panel(ctx.dataset, options, from_url)
    listing, picked = explore_list.show(ctx, chosen)
    picked = picked or explore_list.opened(ctx.dataset)
    opened = explore.summary_to_open(state.detail, listing.ids, picked, filters_changed=chosen != from_url)
    loaded = explore_detail.load(ctx, opened.detail.summary, chosen.source)
    if opened.detail.summary is not None and loaded is None:
        why = "no summary of this dataset has that id; the first match is open"
        notes.append(querystate.ignored("summary", opened.detail.summary, why))
        given = {"sentence": opened.detail.sentence, "claim": opened.detail.claim, "unit": opened.detail.unit}
        notes += [querystate.ignored(name, str(v), "it named a part of that summary") for name, v in given.items() if v]
        opened = explore.summary_to_open(replace(state.detail, summary=None), listing.ids, None, False)
        loaded = explore_detail.load(ctx, opened.detail.summary, chosen.source)
    for note in notes:
        warnings.warning(md_escape(note), icon=":material/link_off:")
    detail = opened.detail
    if loaded is not None:
        st.divider()
        explore_list.navigation(ctx, listing, loaded.summary.summary_id)
        explore_list.matched_here(ctx, chosen, loaded.summary.summary_id)
        detail = explore_detail.show(ctx, loaded, detail, chosen)
    named = opened.named or detail.sentence is not None or detail.claim is not None
    urlstate.write(ExploreState(ctx.dataset, chosen, detail if named else replace(detail, summary=None)))


with shell.guard():
    main()
