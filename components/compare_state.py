"""The Compare page's state in the URL: widgets start from it, and it follows the widgets.

A widget takes its URL value (or its default, when the URL has none or an invalid one) the first
time it is drawn in a session; after that the widget is the source of truth, and the page writes
every choice back with `write_url` at the end of the run. Parameters: level, reference, sources,
mapping, topics, thresholds, view, pair, dsplit, cell.
"""

from __future__ import annotations

import streamlit as st

from faithlens import mapping
from faithlens.errors import FaithLensError

UrlState = dict[str, str | None]
"""Query parameter -> value; None (or "") removes the parameter."""


def seed(key: str, value: object) -> None:
    """A widget's first appearance: start it from the URL (or the default)."""
    if key not in st.session_state:
        st.session_state[key] = value


def from_url(name: str, options: list[str], default: str | None) -> str | None:
    """The URL's value of `name` when it is one of `options`, else `default`."""
    value = st.query_params.get(name)
    return value if value in options else default


def url_sources(options: list[str]) -> list[str]:
    """`sources=a,b`: the named sources that are options, in the URL's order."""
    return [name for name in (st.query_params.get("sources") or "").split(",") if name in options]


def url_by_topic() -> bool:
    """Rows per topic type are on unless the URL says `topics=0`."""
    return st.query_params.get("topics") != "0"


def url_mapping() -> mapping.Mapping:
    """`mapping=partial=exclude,...`; the default mapping when the URL's does not parse."""
    try:
        return mapping.parse(st.query_params.get("mapping"))
    except FaithLensError:
        return mapping.DEFAULT


def url_thresholds() -> dict[str, float]:
    """`thresholds=unieval=0.5,alignscore-roberta-large=0.7` -> {source: value}; bad items are ignored."""
    out = {}
    for item in (st.query_params.get("thresholds") or "").split(","):
        source, _, value = item.rpartition("=")
        try:
            out[source] = float(value)
        except ValueError:
            continue
    return out


def write_url(state: UrlState) -> None:
    """Make the URL say what `state` says, touching only the parameters that change."""
    for name, value in state.items():
        if value in (None, ""):
            if name in st.query_params:
                del st.query_params[name]
        elif st.query_params.get(name) != value:
            st.query_params[name] = value
