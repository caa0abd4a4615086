"""The Sessions page's "New session" form: name, mode (one line per protocol from the papers), codebook
(those the mode takes), level (the mode's), the unit set (all, a split, the Explore filter a link
carried, optionally a seeded random sample of N), ordering, blind, the suggestions source of the hybrid
and ARM modes, and the invited coders; the units it would hold in words; then Create, a callback that
calls `sessions.create` (which checks everything again) so the next run lists the new session."""

from __future__ import annotations

import streamlit as st

from components import shell, unit_sets, urlstate
from components.coding import data as coding_data
from components.markdown import md_escape
from faithlens import access
from faithlens.coding import modes, sessions
from faithlens.coding.codebook import Codebook
from faithlens.errors import FaithLensError
from faithlens.filters import Filters
from faithlens.llm.runs.spec import Selection
from faithlens.unit_filter import level_noun
from faithlens.views import coding
from faithlens.views.runs import LEVEL_NOUNS

MAX_SEED = 2**31 - 1
WHERE_SOURCES = {
    "inconsistencies": "Run the StorySumm inconsistencies method on the Runs page (or Explore's Ask) first.",
    "rewrites": "Run the ARM rewrite method on the Runs page first: its rewrites are what the coders judge.",
}


def key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.SESSIONS, dataset, "new", *parts)


def created(dataset: str) -> str | None:
    """The session Create made just before this run, if it did."""
    return st.session_state.pop(key(dataset, "created"), None)


def _create(db_path: str, actor: access.Actor, dataset: str, spec: sessions.SessionSpec, view_key: str) -> None:
    try:
        made = sessions.create(shell.root_connection(db_path), actor, spec)
    except FaithLensError as exc:
        st.session_state[key(dataset, "error")] = exc
        return
    st.session_state[key(dataset, "created")] = made.name
    st.session_state[view_key] = "sessions"


def fits(mode: modes.Mode, book: Codebook) -> bool:
    """Whether the mode takes the codebook (`Mode.check` says why not when it does not)."""
    if mode.codebooks:
        return book.name in mode.codebooks
    return book.verdicts or not mode.verdicts_only


def _mode_and_book(ctx: shell.PageContext) -> tuple[modes.Mode, str | None]:
    names = list(modes.MODES)
    chosen = st.selectbox(
        "Mode (protocol)",
        names,
        key=urlstate.bind(key(ctx.dataset, "mode"), names[0], names),
        format_func=lambda name: modes.MODES[name].title,
    )
    mode = modes.MODES[chosen]
    st.caption(md_escape(coding.MODE_LINES.get(chosen, "")))
    books = coding_data.codebooks(ctx.db_path, ctx.version)
    fitting = [name for name, book in books.items() if fits(mode, book)]
    if not fitting:
        st.warning("No codebook fits this mode: make one in Codebooks.", icon=":material/warning:")
        return mode, None
    starting = mode.starting_codebook(ctx.dataset, fitting)
    book = st.selectbox(
        "Codebook",
        fitting,
        key=urlstate.bind(key(ctx.dataset, "codebook", chosen), starting, fitting),
        format_func=lambda name: f"{books[name].title} ({books[name].label})",
    )
    return mode, book


def _level(ctx: shell.PageContext, mode: modes.Mode) -> str | None:
    info = next(d for d in ctx.datasets if d.name == ctx.dataset)
    counts = {"summary": info.summaries, "sentence": info.sentences, "claim": info.claims + info.extracted_claims}
    levels = [level for level in mode.levels if counts.get(level)]
    if not levels:
        nouns = " or ".join(level_noun(level) for level in mode.levels)
        st.warning(md_escape(f"{mode.title} codes {nouns}; this dataset has none."))
        return None
    return st.selectbox(
        "Level",
        levels,
        key=urlstate.bind(key(ctx.dataset, "level", mode.name), levels[0], levels),
        format_func=lambda level: f"{LEVEL_NOUNS[level]} ({counts[level]:,})",
    )


def _unit_set(ctx: shell.PageContext, level: str, explore_filter: Filters | None) -> Selection:
    return unit_sets.pick(ctx, level, explore_filter, key)


def _suggestions(ctx: shell.PageContext, mode: modes.Mode) -> tuple[str | None, bool]:
    """The source the mode shows (None for modes without), and whether the form can go on."""
    if not mode.suggestions:
        return None, True
    found = coding_data.suggestion_sources(ctx.db_path, ctx.version, ctx.dataset, mode.suggestions)
    if not found:
        st.warning(
            md_escape(f"No source of {mode.suggestions} in {ctx.dataset}. {WHERE_SOURCES[mode.suggestions]}"),
            icon=":material/warning:",
        )
        return None, False
    label = "Suggestions from (LLM source)" if mode.suggestions == "inconsistencies" else "Rewrites from (source)"
    chosen = st.selectbox(label, found, key=urlstate.bind(key(ctx.dataset, "suggestions", mode.name), found[0], found))
    return chosen, True


def _settings(dataset: str) -> dict[str, object]:
    left, right = st.columns(2)
    sample = left.number_input(
        "Random sample of N units (optional)",
        min_value=1,
        value=None,
        step=1,
        key=key(dataset, "sample"),
        placeholder="all units of the set",
    )
    seed = right.number_input("Seed", min_value=0, max_value=MAX_SEED, value=0, step=1, key=key(dataset, "seed"))
    ordering = st.radio(
        "Order of the units",
        sessions.ORDERINGS,
        key=key(dataset, "ordering"),
        horizontal=True,
        format_func=lambda o: "shuffled per coder (seeded)" if o == "seeded" else "fixed, the same for every coder",
    )
    blind = st.toggle(
        "Blind: hide gold labels, LLM labels and the other coders' codes while coding",
        value=True,
        key=key(dataset, "blind"),
    )
    typed = st.text_input(
        "Invited coders (comma-separated, optional)", key=key(dataset, "coders"), placeholder="ana, ben"
    )
    coders = tuple(dict.fromkeys(name.strip() for name in typed.split(",") if name.strip()))
    return {
        "sample": int(sample) if sample else None,
        "seed": int(seed),
        "ordering": ordering,
        "blind": bool(blind),
        "coders": coders,
    }


def section(ctx: shell.PageContext, explore_filter: Filters | None, view_key: str) -> None:
    """The whole form, the units it would hold, and Create (admins only)."""
    st.subheader("New session")
    if ctx.actor is None or not access.allowed(ctx.actor, "manage_sessions"):
        st.info("Sessions are made by admins: ask one to make a session and invite you.", icon=":material/lock:")
        return
    name = st.text_input("Name", key=key(ctx.dataset, "name"), placeholder="e.g. pilot-1").strip()
    mode, book = _mode_and_book(ctx)
    level = _level(ctx, mode)
    if book is None or level is None:
        return
    selection = _unit_set(ctx, level, explore_filter)
    suggestions, usable = _suggestions(ctx, mode)
    settings = _settings(ctx.dataset)
    if not usable:
        return
    spec = sessions.SessionSpec(
        name, ctx.dataset, level, book, mode.name, selection, suggestions=suggestions, **settings
    )
    plan = sessions.SessionSpec(
        "",
        ctx.dataset,
        level,
        book,
        mode.name,
        selection,
        settings["sample"],
        settings["seed"],
        suggestions=suggestions,
    )
    planned = coding_data.planned(ctx.db_path, ctx.version, plan)
    if isinstance(planned, str):
        st.warning(md_escape(planned), icon=":material/warning:")
    else:
        st.caption(md_escape(f"The session holds {planned[0]:,} {level_noun('unit', planned[0])}: {planned[1]}."))
    error = st.session_state.pop(key(ctx.dataset, "error"), None)
    if error is not None:
        shell.show_error(error)
    st.button(
        "Create session",
        key=key(ctx.dataset, "create"),
        type="primary",
        icon=":material/add:",
        disabled=not name or isinstance(planned, str),
        on_click=_create,
        args=(ctx.db_path, ctx.actor, ctx.dataset, spec, view_key),
    )
