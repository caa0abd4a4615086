"""The units a page works on, shared by Explore, Runs and a new coding session: the values each filter can
take, the Explore filter a link carried, and the unit-set picker (all units, a split or the carried filter,
and for claims the claim set: the dataset's own claims or a set a model extracted)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components import shell, urlstate
from faithlens import filter_options
from faithlens.filter_options import FilterOptions
from faithlens.filters import Filters
from faithlens.llm.runs.spec import Selection
from faithlens.store.claim_sets import ClaimSet
from faithlens.store.claim_sets import claim_sets as claim_sets_in
from faithlens.views import runs


@st.cache_data(show_spinner=False, max_entries=32)
def load_options(db_path: str, version: str, dataset: str) -> FilterOptions:
    """The values each filter can take in `dataset`, cached per data version."""
    with shell.root_connection(db_path).cursor() as cur:
        return filter_options.filter_options(cur, dataset)


def carried(ctx: shell.PageContext, wanted: Filters, notes: list[str]) -> Filters | None:
    """An Explore filter a link carried to another page (Runs, Sessions), checked against the dataset;
    None when it narrows nothing. What the dataset lacks is dropped with a note."""
    if wanted == Filters():
        return None
    options = load_options(ctx.db_path, ctx.version, ctx.dataset)
    checked, dropped = filter_options.check_against(wanted, options)
    notes += dropped
    return checked if checked.clauses() else None


@st.cache_data(show_spinner=False, max_entries=16)
def splits(db_path: str, version: str, dataset: str) -> tuple[str, ...]:
    with shell.root_connection(db_path).cursor() as cur:
        return runs.splits(cur, dataset)


@st.cache_data(show_spinner=False, max_entries=16)
def claim_sets(db_path: str, version: str, dataset: str) -> list[ClaimSet]:
    """The dataset's claim sets: its own claims first, then each set a model extracted."""
    with shell.root_connection(db_path).cursor() as cur:
        return claim_sets_in(cur, dataset)


def pick(
    ctx: shell.PageContext, level: str, explore_filter: Filters | None, key: Callable[[str, str], str]
) -> Selection:
    """The chosen unit set; `key(dataset, name)` names each widget's state as the calling page keys it."""
    sets = runs.unit_sets(splits(ctx.db_path, ctx.version, ctx.dataset), explore_filter)
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
    found = {claim_set.source or "": claim_set for claim_set in claim_sets(ctx.db_path, ctx.version, ctx.dataset)}
    names = list(found) or [""]
    picked = st.selectbox(
        "Claim set",
        names,
        key=urlstate.bind(key(ctx.dataset, "claim_set"), names[0], names),
        format_func=lambda n: found[n].counted() if n in found else "no claims",
    )
    return Selection(selection.split, selection.filters, picked or None)
