"""Cached reads for the Code and Sessions pages, keyed on small scalars (db path, data version, names) like
every page's, so a rerun that writes nothing costs no query: a session and its codebook, a coder's order
and codes, a unit in context, progress, agreement, disagreements and their discussion, and the form's
options. Every read of codes, labels, agreement or comments takes the acting person and goes through the
core's check (`faithlens.coding.visible`, `comments.threads`), which refuses what a blind session hides;
the actor is part of each cache key, so nobody is handed a read cached for someone else."""

from __future__ import annotations

import streamlit as st

from components import shell
from faithlens import access
from faithlens.coding import comments, events, library, modes, report, sessions, visible
from faithlens.coding.codebook import Codebook
from faithlens.errors import FaithLensError
from faithlens.views import coding, coding_unit


@st.cache_data(show_spinner=False, max_entries=16)
def listed(db_path: str, version: str, dataset: str) -> list[sessions.Session]:
    """The dataset's sessions, newest first."""
    with shell.root_connection(db_path).cursor() as cur:
        return sessions.listed(cur, dataset)


def session(db_path: str, version: str, dataset: str, name: str | None) -> sessions.Session | None:
    """The dataset's session of that name, or None."""
    if not name:
        return None
    return next((s for s in listed(db_path, version, dataset) if s.name == name), None)


@st.cache_data(show_spinner=False, max_entries=32)
def codebook(db_path: str, name: str, version: str) -> Codebook:
    """A codebook at the version a session recorded (a version never changes, so no data version)."""
    with shell.root_connection(db_path).cursor() as cur:
        return library.get(cur, name, version)


def book_of(db_path: str, found: sessions.Session) -> Codebook:
    return codebook(db_path, found.codebook, found.codebook_version)


@st.cache_data(show_spinner=False, max_entries=8)
def codebooks(db_path: str, version: str) -> dict[str, Codebook]:
    """Every codebook a new session can use: built-in ones first, then the lab's newest versions."""
    with shell.root_connection(db_path).cursor() as cur:
        return library.available(cur)


@st.cache_data(show_spinner=False, max_entries=64)
def coders(db_path: str, version: str, name: str) -> tuple[str, ...]:
    """Invited coders, then those who joined or coded."""
    root = shell.root_connection(db_path)
    with root.cursor() as cur:
        return sessions.coders(cur, stored(db_path, version, name))


@st.cache_data(show_spinner=False, max_entries=64)
def stored(db_path: str, version: str, name: str) -> sessions.Session:
    """A session by name as stored (read once per data version; every read below starts from it)."""
    return sessions.get(shell.root_connection(db_path), name)


@st.cache_data(show_spinner=False, max_entries=64)
def order(db_path: str, version: str, name: str, coder: str) -> tuple[str, ...]:
    """The session's units in the order this coder gets them."""
    return stored(db_path, version, name).order_for(coder)


@st.cache_data(show_spinner=False, max_entries=64)
def coded(db_path: str, version: str, name: str, actor: access.Actor) -> frozenset[str]:
    """The units the actor has coded."""
    root = shell.root_connection(db_path)
    return visible.coded_units(root, actor, stored(db_path, version, name), actor.id)


@st.cache_data(show_spinner=False, max_entries=256)
def code_on(db_path: str, version: str, name: str, actor: access.Actor, unit_id: str) -> events.Current | None:
    """The actor's current code on one unit (what its inputs are seeded with)."""
    root = shell.root_connection(db_path)
    return visible.latest(root, actor, stored(db_path, version, name), actor.id, unit_id)


@st.cache_data(show_spinner=False, max_entries=64)
def everyone(db_path: str, version: str, name: str, actor: access.Actor) -> dict[tuple[str, str], events.Current]:
    """Every coder's current codes, (coder, unit) -> Current, where the actor may see them."""
    root = shell.root_connection(db_path)
    return visible.everyone(root, actor, stored(db_path, version, name))


@st.cache_data(show_spinner=False, max_entries=64)
def last_saved(db_path: str, version: str, name: str, actor: access.Actor) -> str | None:
    """The unit of the actor's own newest code (what Undo takes back), else None."""
    root = shell.root_connection(db_path)
    found = stored(db_path, version, name)
    with root.cursor() as cur:
        return coding.last_saved(cur, found, actor.id)


@st.cache_data(show_spinner=False, max_entries=256)
def unit(
    db_path: str, version: str, name: str, unit_id: str, ranker: str
) -> tuple[coding_unit.UnitInContext, modes.Context]:
    """A unit in context, its passages by `ranker`, and what the session's mode shows beside it."""
    root = shell.root_connection(db_path)
    found = stored(db_path, version, name)
    with root.cursor() as cur:
        return coding_unit.in_session(cur, found, unit_id, ranker)


@st.cache_data(show_spinner=False, max_entries=64)
def gold(db_path: str, version: str, name: str, actor: access.Actor, unit_id: str) -> list[tuple[str, str, str | None]]:
    """The dataset's own labels of the unit, where the actor may see them."""
    root = shell.root_connection(db_path)
    found = stored(db_path, version, name)
    with root.cursor() as cur:
        return coding_unit.gold_labels(cur, actor, found, unit_id)


@st.cache_data(show_spinner=False, max_entries=32)
def progress(db_path: str, version: str, name: str) -> list[report.Progress]:
    root = shell.root_connection(db_path)
    return report.progress(root, stored(db_path, version, name))


@st.cache_data(show_spinner=False, max_entries=16)
def agreement(db_path: str, version: str, name: str, actor: access.Actor) -> report.SessionAgreement:
    root = shell.root_connection(db_path)
    return visible.agreement(root, actor, stored(db_path, version, name))


@st.cache_data(show_spinner=False, max_entries=16)
def by_unit(db_path: str, version: str, name: str, actor: access.Actor) -> dict[str, dict[str, str]]:
    """unit -> coder -> code value (the confusion matrices' input)."""
    root = shell.root_connection(db_path)
    return visible.by_unit(root, actor, stored(db_path, version, name))


@st.cache_data(show_spinner=False, max_entries=16)
def sentence_codes(db_path: str, version: str, name: str, actor: access.Actor) -> dict[str, dict[str, str]]:
    """Line-by-line: sentence -> coder -> code (the sentence-level confusion matrices' input)."""
    root = shell.root_connection(db_path)
    return visible.sentence_codes(root, actor, stored(db_path, version, name))


@st.cache_data(show_spinner=False, max_entries=16)
def disagreements(db_path: str, version: str, name: str, actor: access.Actor) -> list[report.Disagreement]:
    root = shell.root_connection(db_path)
    return visible.disagreements(root, actor, stored(db_path, version, name))


@st.cache_data(show_spinner=False, max_entries=16)
def texts(db_path: str, version: str, name: str, units: tuple[str, ...]) -> dict[str, str]:
    root = shell.root_connection(db_path)
    found = stored(db_path, version, name)
    with root.cursor() as cur:
        return coding.unit_texts(cur, found.dataset, found.level, units)


@st.cache_data(show_spinner=False, max_entries=16)
def suggestion_sources(db_path: str, version: str, dataset: str, kind: str) -> tuple[str, ...]:
    """Sources a mode can show: 'inconsistencies' (hybrid) or 'rewrites' (ARM)."""
    with shell.root_connection(db_path).cursor() as cur:
        if kind == "inconsistencies":
            return coding.suggestion_sources(cur, dataset)
        return coding.rewrite_sources(cur, dataset)


@st.cache_data(show_spinner=False, max_entries=64)
def planned(db_path: str, version: str, spec: sessions.SessionSpec) -> tuple[int, str] | str:
    """How many units a new session would hold and the set in words, or why it would hold none."""
    with shell.root_connection(db_path).cursor() as cur:
        try:
            units, words = sessions.plan_units(cur, spec)
        except FaithLensError as exc:
            return exc.message
    return len(units), words


@st.cache_data(show_spinner=False, max_entries=64)
def threads(
    db_path: str, version: str, name: str, units: tuple[str, ...], reader: access.Actor
) -> dict[str, list[comments.Comment]]:
    """The comments on these units that `reader` may read."""
    return comments.threads(shell.root_connection(db_path), stored(db_path, version, name), units, reader)
