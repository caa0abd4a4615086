"""Every page's state in the URL: read once at the start of a run, bound to the widgets, written once
at the end, and every cross-page link built in one place.

- `start(page)` (called by the shell) notes whether the URL changed since this session last read or
  wrote it: a link, the browser's Back or Forward, another page, or a first visit.
- `read(page, dataset)` decodes the page's typed state (`faithlens.querystate`). When the dataset
  is not the one the URL names (the user just switched it), the URL's other choices belonged to the
  old dataset and the state starts clean.
- `bind(key, value, options, reseed)` is the one way a widget meets the URL: the widget shows
  `value` (what the URL says) when it is drawn for the first time, when the URL changed from
  outside, when what it holds is no longer an option, or when a choice it depends on just changed
  (`reseed`); otherwise it keeps what the user chose, and the page writes that back.
- A page writes only what the user chose: a value the page picks by itself (the first level, the
  first match) stays out of the URL, so arriving on a page adds no history entry of its own.
- `write(state)` makes the URL say what is on screen, in one update, so one user action is one
  browser history entry.
- `link(page, state)` is the keyword arguments of `st.page_link` that open `page` showing `state`.

This module and the shell are the only places that touch `st.query_params`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

import streamlit as st

from faithlens import querystate
from faithlens.views.states import (
    CodeState,
    CompareState,
    ErrorsState,
    ExploreState,
    OverviewState,
    PeopleState,
    ReproducedState,
    RewriteState,
    RunsState,
    SessionsState,
)

State = TypeVar("State")
DATASET = "dataset"
_SEEN = "urlstate.seen"
_FRESH = "urlstate.fresh"
_DEFAULT_DATASET = "urlstate.default_dataset"
_PAGE = "urlstate.page"


@dataclass(frozen=True)
class Page:
    """One page of the app: its script (folder routing), its title, icon and URL state type."""

    name: str
    script: str
    title: str
    icon: str
    state: type
    needs: str | None = None
    """The action (`faithlens.access.ACTIONS`) a person must be allowed for the sidebar to offer the page."""
    blindfolded: bool = False
    """Whether the page shows labels of any unit of its dataset (figures, unit lists, a sentence's stored
    rewrites), so that a person coding part of it blind may not open it (`faithlens.coding.blindfold`)."""


OVERVIEW = Page("overview", "app.py", "Overview", ":material/insights:", OverviewState)
REPRODUCED = Page("reproduced", "pages/reproduced.py", "Reproduced figures", ":material/fact_check:", ReproducedState)
EXPLORE = Page("explore", "pages/explore.py", "Explore", ":material/menu_book:", ExploreState)
COMPARE = Page("compare", "pages/compare.py", "Compare", ":material/compare_arrows:", CompareState, blindfolded=True)
REWRITE = Page("rewrite", "pages/rewrite.py", "Rewrite", ":material/edit_note:", RewriteState, blindfolded=True)
CODE = Page("code", "pages/code.py", "Code", ":material/sell:", CodeState)
SESSIONS = Page("sessions", "pages/sessions.py", "Sessions", ":material/groups:", SessionsState)
RUNS = Page("runs", "pages/runs.py", "Runs", ":material/play_circle:", RunsState)
ERRORS = Page("errors", "pages/errors.py", "Errors", ":material/bug_report:", ErrorsState, blindfolded=True)
PEOPLE = Page("people", "pages/people.py", "People", ":material/manage_accounts:", PeopleState, needs="manage_people")
PAGES: tuple[Page, ...] = (OVERVIEW, REPRODUCED, EXPLORE, COMPARE, ERRORS, CODE, SESSIONS, REWRITE, RUNS, PEOPLE)
"""In navigation order."""


def params() -> dict[str, list[str]]:
    """The current query string with every key's values (repeated keys kept)."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def start(page: Page) -> dict[str, list[str]]:
    """Begin a run of `page`: note whether the URL changed since this session last saw it (another
    page counts as a change: its widgets are new, even when the query string is the same); return it."""
    current = params()
    st.session_state[_FRESH] = current != st.session_state.get(_SEEN) or page.name != st.session_state.get(_PAGE)
    st.session_state[_SEEN] = current
    st.session_state[_PAGE] = page.name
    return current


def url_changed() -> bool:
    """True when this run's URL came from outside (a link, Back/Forward, a first visit)."""
    return bool(st.session_state.get(_FRESH, True))


def set_default_dataset(name: str | None) -> None:
    """The dataset a URL without `dataset=` means (the shell sets it from what is loaded)."""
    st.session_state[_DEFAULT_DATASET] = name


def url_dataset() -> str | None:
    """The dataset the URL names, else the default one."""
    values = st.query_params.get_all(DATASET)
    return values[-1] if values else st.session_state.get(_DEFAULT_DATASET)


def _unnamed_default(state: Any) -> Any:
    """`state` without its dataset when the URL does not name one, the state's is the default and it
    names nothing else: a first visit to / stays at / (no history entry of its own). A URL naming a
    summary, a sentence or a filter names its dataset too, so a copied link opens the same thing on a
    server whose default dataset is another. Links always name the dataset."""
    default = st.session_state.get(_DEFAULT_DATASET)
    if DATASET not in st.query_params and getattr(state, DATASET, None) == default:
        bare = replace(state, dataset=None)
        return bare if not querystate.encode(bare) else state
    return state


def read(page: Page, dataset: str) -> tuple[Any, list[str]]:
    """The page's state from the URL, for `dataset`, and a note per URL value that was ignored.
    A URL naming another dataset gives a clean state: the user just switched (no note), or a link named
    a dataset that is not loaded (the shell notes it), whose other values are then noted here too."""
    wanted = url_dataset()
    if wanted == dataset:
        return querystate.decode(page.state, {**params(), DATASET: [dataset]})
    state, notes = querystate.decode(page.state, {DATASET: [dataset]})
    if url_changed():
        linked, _ = querystate.decode(page.state, params())
        why = f"it belonged to dataset {wanted!r}, which is not loaded"
        dropped = {name: value for name, value in querystate.encode(linked).items() if name != DATASET}
        notes += [querystate.ignored(name, _last(value), why) for name, value in dropped.items()]
    return state, notes


def _last(value: str | list[str]) -> str:
    return value[-1] if isinstance(value, list) else value


def key(page: Page, dataset: str, *parts: object) -> str:
    """The session-state key of one of a page's widgets: per dataset, so a switch never shows the
    other dataset's choices; `parts` name the widget and whatever else it depends on."""
    return ".".join([page.name, dataset, *(str(part) for part in parts)])


def _holds_option(current: object, options: Collection[object] | None) -> bool:
    if options is None:
        return True
    if isinstance(current, list):
        return all(item in options for item in current)
    return current in options


def bind(widget_key: str, value: object, options: Collection[object] | None = None, reseed: bool = False) -> str:
    """Seed widget `widget_key` with `value` when the widget is new, the URL changed from outside,
    its value is no longer one of `options` (a list value: when an item is not), or `reseed` says
    a choice it depends on just changed. Returns the key, to pass as the widget's `key` (and no
    default value)."""
    held = st.session_state.get(widget_key)
    if reseed or widget_key not in st.session_state or url_changed() or not _holds_option(held, options):
        st.session_state[widget_key] = value
    return widget_key


def write(state: object) -> None:
    """Make the URL say exactly `state` in one update (none when it already does)."""
    wanted = querystate.encode(_unnamed_default(state))
    normalised = {name: value if isinstance(value, list) else [value] for name, value in wanted.items()}
    if params() != normalised:
        st.query_params.from_dict(wanted)
    st.session_state[_SEEN] = normalised


def href(page: Page, state: object) -> str:
    """A relative URL opening `page` showing `state`, for an `<a href>` in `st.html` markup (escape it
    there like any text). It always starts with the page's own path, so it can carry no scheme."""
    if not isinstance(state, page.state):
        raise TypeError(f"{page.title} links take a {page.state.__name__}, not {type(state).__name__}")
    path = "/" if page.script == "app.py" else "/" + Path(page.script).stem
    return path + "?" + urlencode(querystate.encode(state), doseq=True)


def link(page: Page, state: object) -> dict[str, Any]:
    """`st.page_link(**link(page, state), label=...)` opens `page` showing `state`."""
    if not isinstance(state, page.state):
        raise TypeError(f"{page.title} links take a {page.state.__name__}, not {type(state).__name__}")
    return {"page": page.script, "query_params": querystate.encode(state)}
