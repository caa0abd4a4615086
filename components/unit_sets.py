"""The unit-set picker that Runs and a new coding session share: all units, a split or the Explore filter
carried by a link, and for claims the claim set (the dataset's own claims or a set a model extracted)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components import runs_data, shell, urlstate
from faithlens.filters import Filters
from faithlens.llm.runs.spec import Selection
from faithlens.views import runs


def pick(
    ctx: shell.PageContext, level: str, explore_filter: Filters | None, key: Callable[[str, str], str]
) -> Selection:
    """The chosen unit set; `key(dataset, name)` names each widget's state as the calling page keys it."""
    sets = runs.unit_sets(runs_data.splits(ctx.db_path, ctx.version, ctx.dataset), explore_filter)
    by_key = {s.key: s for s in sets}
    chosen = st.selectbox(
        "Units",
        list(by_key),
        key=urlstate.bind(key(ctx.dataset, "units"), sets[0].key, list(by_key)),
        format_func=lambda k: by_key[k].title,
    )
    selection = by_key[chosen].selection
    if level != "claim":
        return selection
    found = runs_data.claim_sets(ctx.db_path, ctx.version, ctx.dataset)
    names = [name or "" for name, _ in found] or [""]
    counts = {name or "": count for name, count in found}
    picked = st.selectbox(
        "Claim set",
        names,
        key=urlstate.bind(key(ctx.dataset, "claim_set"), names[0], names),
        format_func=lambda n: f"{n or 'the dataset’s own claims'} ({counts.get(n, 0):,})",
    )
    return Selection(selection.split, selection.filters, picked or None)
