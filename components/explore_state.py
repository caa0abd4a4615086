"""The Explore page's state in the URL: read it at the start of a run, write it back at the end.

Every selection (filters, label source, summary, sentence, alignment display) lives in
`st.query_params`, so a copied link reopens the same view in a new session. Widgets are seeded
from the URL the first time they appear in a session and are the source of truth after that;
the page writes their values back to the URL at the end of each run.

Choosing a unit: `sentence=N` (1-based) picks a sentence; `unit=<unit id>` (as Compare's
drill-down links name units) picks a sentence or a claim of the opened summary. The canonical
form the page writes back is `sentence=N` for a sentence and `unit=<claim id>` for a claim
(a sentence and a claim can be chosen together). A link naming a sentence by `unit` is rewritten
to `sentence=N`; when `unit` and `sentence` disagree, `unit` wins (it names the unit exactly).
A unit of another summary, or a sentence number the summary does not have, is dropped with a
warning, like other bad link values (`faithlens.explore_detail.resolve_selection`).
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from components.shell import DATASET_PARAM
from faithlens.explore import DetailState, Filters

_LAST_DATASET = "explore._dataset"
_KEPT_ON_CLEAR = ("source", "summary", "sentence", "unit")


def widget_key(dataset: str, name: str) -> str:
    """Session-state key of an Explore widget; per dataset, so a switch never shows stale choices."""
    return f"explore.{dataset}.{name}"


def url_params() -> dict[str, list[str]]:
    """The current query string with every key's values (repeated keys kept)."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def read(dataset: str) -> tuple[Filters, DetailState]:
    """Filters and detail state from the URL.

    After the user switches dataset in this session, the old dataset's filters and summary do not
    apply to the new one, so the view starts clean.
    """
    params = url_params()
    previous = st.session_state.get(_LAST_DATASET)
    st.session_state[_LAST_DATASET] = dataset
    if previous is not None and previous != dataset:
        params = {}
    return Filters.from_query_params(params), DetailState.from_query_params(params)


def write(dataset: str, filters: Filters, detail: DetailState) -> None:
    """Make the URL say exactly what is on screen (no rerun is triggered)."""
    wanted: dict[str, str | list[str]] = {DATASET_PARAM: dataset, **filters.to_query_params()}
    wanted.update(detail.to_query_params())
    normalised = {key: value if isinstance(value, list) else [value] for key, value in wanted.items()}
    if url_params() != normalised:
        st.query_params.from_dict(wanted)


def open_summary(summary_id: str) -> None:
    """Callback for buttons that move to another summary: the sentence and claim choice belong to the old one."""
    st.query_params.pop("sentence", None)
    st.query_params.pop("unit", None)
    st.query_params["summary"] = summary_id


def seed(key: str, value: object, allowed: Iterable[object] | None = None) -> None:
    """Give a widget its URL value the first time it is drawn in this session (or when its stored
    value is no longer an option), without also passing a default (Streamlit warns about both)."""
    if key not in st.session_state or (allowed is not None and st.session_state[key] not in list(allowed)):
        st.session_state[key] = value


def clear_filters(dataset: str) -> None:
    """Callback of 'Clear filters': forget the filter widgets' values; keep dataset, label source and summary."""
    prefix = widget_key(dataset, "")
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix + "f.")]:
        del st.session_state[key]
    kept = {key: st.query_params.get_all(key) for key in (DATASET_PARAM, *_KEPT_ON_CLEAR) if key in st.query_params}
    st.query_params.from_dict(kept)
