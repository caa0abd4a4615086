"""The Explore filters as widgets above the list: bound to the URL, read back into a `Filters`."""

from __future__ import annotations

import streamlit as st

from components import urlstate
from components.markdown import md_escape
from faithlens.analysis.generator_names import slot_note
from faithlens.filter_options import FilterOptions
from faithlens.filters import MATCH_MODES, NO_LABEL, Filters
from faithlens.unit_filter import UnitFilter

ANY = ""
"""The 'no filter' option (a selectbox shows its placeholder, not our label, for None)."""
SINGLES = (
    ("split", "Split", "splits"),
    ("generator", "Generator", "generators"),
    ("topic_type", "Topic type", "topic_types"),
    ("topic", "Topic", "topics"),
    ("corpus", "Corpus", "corpora"),
    ("difficulty", "Difficulty", "difficulties"),
)
"""Single-choice filters, in the order they are drawn: (Filters field, label, FilterOptions field)."""
CLEARED = {
    **{name: ANY for name, _, _ in SINGLES},
    "label": ANY,
    "disagree_with": ANY,
    "flips": ANY,
    "search": "",
    "error_types": [],
    "error_match": "any",
    "tags": [],
    "tag_match": "any",
    "unit": False,
}
"""Each filter widget's 'no filter' value."""
FILTER_PX = 170
"""Width of one filter: the filters share rows, as many to a row as fit (five beside a sidebar on a
laptop screen), so those a dataset lacks leave no gaps."""
HELP = {
    "error_types": "Tags on the summary's sentences or claims (any tag source).",
    "tags": "Tags coders or models put on the summary, a sentence or a claim (ambiguity type, claim type, "
    "a custom codebook's codes): summaries carrying any (or all) of those chosen.",
}
"""The help of the any-of / all-of multiselects."""


def _key(dataset: str, name: str) -> str:
    return urlstate.key(urlstate.EXPLORE, dataset, "f", name)


def _any(value: str) -> str:
    return "(any)" if value == ANY else value


def _select(dataset: str, name: str, label: str, values: tuple[str, ...], initial: str | None, **kwargs) -> str | None:
    """A selectbox with '(any)' first; hidden (returns None) when the dataset has no such values."""
    values = tuple(v for v in values if v != ANY)
    if not values:
        return None
    options = [ANY, *values]
    key = urlstate.bind(_key(dataset, name), initial if initial in values else ANY, options)
    format_func = kwargs.pop("format_func", _any)
    chosen = st.selectbox(label, options, key=key, format_func=format_func, width=FILTER_PX, **kwargs)
    return None if chosen == ANY else chosen


def label_source(dataset: str, options: FilterOptions, initial: str) -> str:
    """Whose labels colour the sentences and fill the list's label columns."""
    choices = list(options.sources) or [initial]
    key = urlstate.bind(
        urlstate.key(urlstate.EXPLORE, dataset, "source"), initial if initial in choices else choices[0], choices
    )
    return st.selectbox(
        "Label source",
        choices,
        key=key,
        help="Colours the summary's sentences, fills the list's label columns, and is the source the "
        "label and disagreement filters speak about. 'gold' is the dataset's own human labels.",
        width=FILTER_PX,
    )


def _label_filters(dataset: str, options: FilterOptions, initial: Filters, source: str) -> dict:
    """The summary label of `source` and a second source it disagrees with (when `source` has
    summary labels)."""
    if source not in options.summary_sources:
        return {"label": None, "disagree_with": None}
    label = _select(
        dataset,
        "label",
        "Summary label",
        options.labels_of(source),
        initial.label,
        format_func=lambda v: "(any)" if v == ANY else ("no label" if v == NO_LABEL else v),
        help=f"The summary-level label that {source} gives.",
    )
    others = tuple(s for s in options.summary_sources if s != source)
    disagree = _select(
        dataset,
        "disagree_with",
        "Disagrees with",
        others,
        initial.disagree_with,
        format_func=lambda v: "(no comparison)" if v == ANY else v,
        help=f"Only summaries where this source's summary label differs from {source}'s.",
    )
    return {"label": label, "disagree_with": disagree}


def _tag_filters(dataset: str, options: FilterOptions, initial: Filters) -> dict:
    """The flips filter and the tags (any / all of them), where they apply."""
    chosen: dict[str, object] = {}
    chosen["flips"] = _select(
        dataset,
        "flips",
        "Verdict flips across repeats of",
        options.flip_sources,
        initial.flips,
        format_func=lambda v: "(no repeat filter)" if v == ANY else v,
        help="Only summaries where this source's verdict on the summary, a sentence or a claim differs "
        "between the repeats of its runs (runs with repeats ≥ 2, on the Runs page).",
    )
    chosen["tags"], chosen["tag_match"] = (), "any"
    if options.tags:
        with st.container(width=FILTER_PX):  # the tags above their any / all choice
            chosen["tags"], chosen["tag_match"] = _any_or_all(
                dataset, ("tags", "tag_match"), "Tags", options.tags, (initial.tags, initial.tag_match), (st, st)
            )
    return chosen


def _help(name: str, options: FilterOptions) -> dict[str, str]:
    """A single filter's help, where it needs one: the generator filter says what TofuEval's slots are."""
    note = slot_note(options.generators) if name == "generator" else None
    return {"help": note} if note else {}


def panel(dataset: str, options: FilterOptions, initial: Filters) -> Filters:
    """Draw the label source and the filters above the list (one row that wraps: a row of columns
    per five filters made the page slower to draw), a unit filter a link carried, then the search
    row; return what they say now."""
    with st.container(horizontal=True):
        source = label_source(dataset, options, initial.source)
        chosen: dict[str, object] = {
            name: _select(
                dataset, name, label, getattr(options, option_field), getattr(initial, name), **_help(name, options)
            )
            for name, label, option_field in SINGLES
        }
        chosen.update(_label_filters(dataset, options, initial, source))
        chosen.update(_tag_filters(dataset, options, initial))
    chosen["unit"] = _unit(dataset, initial.unit)
    row = st.container(horizontal=True, vertical_alignment="bottom")
    if options.error_types:
        chosen["error_types"], chosen["error_match"] = _any_or_all(
            dataset,
            ("error_types", "error_match"),
            "Error types",
            options.error_types,
            (initial.error_types, initial.error_match),
            (row, row),
        )
    search = row.text_input(
        "Search text",
        key=urlstate.bind(_key(dataset, "search"), initial.search or ""),
        placeholder="words in the summary, a sentence, a claim or an explanation",
        help="Case-insensitive, in the summary, its sentences and claims, and every explanation, "
        "reasoning, evidence quote and reason.",
    )
    row.button(
        "Clear filters",
        on_click=_clear,
        args=(dataset,),
        icon=":material/filter_alt_off:",
        key=urlstate.key(urlstate.EXPLORE, dataset, "clear"),
    )
    return Filters(source=source, search=search.strip() or None, **chosen)


def _clear(dataset: str) -> None:
    """Callback of 'Clear filters': every filter widget back to 'no filter' (the label source and
    the open summary stay); the page then writes the cleared filters to the URL."""
    for name, value in CLEARED.items():
        key = _key(dataset, name)
        if key in st.session_state:
            st.session_state[key] = value


def _any_or_all(
    dataset: str,
    names: tuple[str, str],
    label: str,
    values: tuple[str, ...],
    initial: tuple[tuple[str, ...], str],
    places,
) -> tuple[tuple[str, ...], str]:
    """A multiselect of `values` and an any-of / all-of choice (Filters fields `names`), drawn in
    `places` (the multiselect's container, the choice's)."""
    chosen_place, match_place = places
    wanted = [value for value in initial[0] if value in values]
    chosen = chosen_place.multiselect(
        label,
        values,
        key=urlstate.bind(_key(dataset, names[0]), wanted, values),
        placeholder="(any)",
        help=HELP[names[0]],
    )
    match = match_place.radio(
        "Summaries with",
        MATCH_MODES,
        key=urlstate.bind(_key(dataset, names[1]), initial[1], MATCH_MODES),
        format_func=lambda v: "any of them" if v == "any" else "all of them",
        disabled=len(chosen) < 2,
        horizontal=True,
    )
    return tuple(chosen), match


def _unit(dataset: str, initial: UnitFilter) -> UnitFilter:
    """A unit filter comes only from a link (an Errors page cell): shown in words, with a box to drop it."""
    if not initial.active:
        return UnitFilter()
    kept = st.checkbox(
        f"Only summaries where {md_escape(initial.caption())}",
        key=urlstate.bind(_key(dataset, "unit"), True),
        help="Set by the link that opened this page (a cell of the Errors page): the conditions hold on one and "
        "the same unit, and the caption above counts those units. Untick to drop it.",
    )
    return initial if kept else UnitFilter()
