"""The Explore filters as widgets above the list: seeded from the URL, read back into a `Filters`."""

from __future__ import annotations

import streamlit as st

from components import explore_state, shell
from faithlens import explore
from faithlens.explore import MATCH_MODES, NO_LABEL, FilterOptions, Filters
from faithlens.vocab import VERDICTS


@st.cache_data(show_spinner=False, max_entries=32)
def load_options(db_path: str, version: str, dataset: str) -> FilterOptions:
    """The values each filter can take in `dataset`, cached per data version."""
    with shell.root_connection(db_path).cursor() as cur:
        return explore.filter_options(cur, dataset)


ANY = ""
"""The 'no filter' option (a selectbox shows its placeholder, not our label, for None)."""


def _any(value: str) -> str:
    return "(any)" if value == ANY else value


def _select(dataset: str, name: str, label: str, values: tuple[str, ...], initial: str | None, **kwargs) -> str | None:
    """A selectbox with '(any)' first; hidden (returns None) when the dataset has no such values."""
    values = tuple(v for v in values if v != ANY)
    if not values:
        return None
    key = explore_state.widget_key(dataset, "f." + name)
    options = [ANY, *values]
    explore_state.seed(key, initial if initial in values else ANY, options)
    chosen = st.selectbox(label, options, key=key, format_func=kwargs.pop("format_func", _any), **kwargs)
    return None if chosen == ANY else chosen


def label_source(dataset: str, options: FilterOptions, initial: str) -> str:
    """Whose labels colour the sentences and fill the list's label columns."""
    key = explore_state.widget_key(dataset, "source")
    choices = list(options.sources) or [initial]
    explore_state.seed(key, initial if initial in choices else choices[0], choices)
    return st.selectbox(
        "Label source",
        choices,
        key=key,
        help="Colours the summary's sentences, fills the list's label columns, and is the source the "
        "label and disagreement filters speak about. 'gold' is the dataset's own human labels.",
    )


class _Grid:
    """Columns handed out left to right, `per_row` to a row, so filters a dataset lacks leave no gaps."""

    def __init__(self, per_row: int) -> None:
        self.per_row = per_row
        self.free: list = []

    def cell(self):
        if not self.free:
            self.free = list(st.columns(self.per_row))
        return self.free.pop(0)


def panel(dataset: str, options: FilterOptions, initial: Filters) -> Filters:
    """Draw the label source and the filters above the list; return what they say now."""
    grid = _Grid(per_row=5)
    with grid.cell():
        source = label_source(dataset, options, initial.source)
    singles = {}
    for name, label, values in (
        ("split", "Split", options.splits),
        ("generator", "Generator", options.generators),
        ("topic_type", "Topic type", options.topic_types),
        ("topic", "Topic", options.topics),
        ("difficulty", "Difficulty", options.difficulties),
    ):
        singles[name] = None
        if values:
            with grid.cell():
                singles[name] = _select(dataset, name, label, values, getattr(initial, name))
    label = disagree = None
    if source in options.summary_sources:
        with grid.cell():
            label = _select(
                dataset,
                "label",
                "Summary label",
                (*VERDICTS, NO_LABEL),
                initial.label,
                format_func=lambda v: "(any)" if v == ANY else ("no label" if v == NO_LABEL else v),
                help=f"The summary-level label that {source} gives.",
            )
        others = tuple(s for s in options.summary_sources if s != source)
        if others:
            with grid.cell():
                disagree = _select(
                    dataset,
                    "disagree_with",
                    "Disagrees with",
                    others,
                    initial.disagree_with,
                    format_func=lambda v: "(no comparison)" if v == ANY else v,
                    help=f"Only summaries where this source's summary label differs from {source}'s.",
                )
    if options.error_types:
        types_column, match_column, search_column, clear_column = st.columns(
            [3, 1.2, 4, 1.3], vertical_alignment="bottom"
        )
        error_types, match = _error_types(dataset, options, initial, types_column, match_column)
    else:
        search_column, clear_column = st.columns([4, 1], vertical_alignment="bottom")
        error_types, match = [], "any"
    search_key = explore_state.widget_key(dataset, "f.search")
    explore_state.seed(search_key, initial.search or "")
    search = search_column.text_input(
        "Search text",
        key=search_key,
        placeholder="words in the summary, a sentence, a claim or an explanation",
        help="Case-insensitive, in the summary, its sentences and claims, and every explanation, "
        "reasoning, evidence quote and reason.",
    )
    clear_column.button(
        "Clear filters",
        on_click=explore_state.clear_filters,
        args=(dataset,),
        icon=":material/filter_alt_off:",
        key=explore_state.widget_key(dataset, "clear"),
        width="stretch",
    )
    return Filters(
        source=source,
        **singles,
        label=label,
        error_types=tuple(error_types),
        error_match=match,
        disagree_with=disagree,
        search=search.strip() or None,
    )


def _error_types(
    dataset: str, options: FilterOptions, initial: Filters, types_column, match_column
) -> tuple[list[str], str]:
    key = explore_state.widget_key(dataset, "f.error_types")
    wanted = [t for t in initial.error_types if t in options.error_types]
    if key not in st.session_state or not set(st.session_state[key]) <= set(options.error_types):
        st.session_state[key] = wanted
    chosen = types_column.multiselect(
        "Error types",
        options.error_types,
        key=key,
        placeholder="(any)",
        help="Tags on the summary's sentences or claims (any tag source).",
    )
    match_key = explore_state.widget_key(dataset, "f.error_match")
    explore_state.seed(match_key, initial.error_match, MATCH_MODES)
    match = match_column.radio(
        "Summaries with",
        MATCH_MODES,
        key=match_key,
        format_func=lambda v: "any of them" if v == "any" else "all of them",
        disabled=len(chosen) < 2,
    )
    return chosen, match
