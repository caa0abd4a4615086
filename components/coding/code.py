"""The Code page's coding panel for the acting person (`ctx.actor`, who codes as themself): progress,
Back / Skip / Undo, the unit in context, the mode's inputs and Save.

The coder resumes at their first uncoded unit (in `Session.order_for(coder)`). Save (Enter) stores the
code with `events.save`, which commits before it returns; only then does the page say "Saved" and go on
to the next uncoded unit. A save the core refuses (`CodingError`: an unknown code, a missing
explanation) shows as one error box and the unit stays, with everything the coder typed. Undo takes
back the coder's last save (`events.undo`). Each write and read takes the actor; the core checks it. Every action is a callback, so the run after it already
reads the new data version. Under the inputs, the unit's discussion (`coding_discussion`)."""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.coding import controls as coding_controls
from components.coding import data as coding_data
from components.coding import discussion as coding_discussion
from components.coding import view as coding_view
from components.markdown import md_escape
from faithlens import access
from faithlens.build.rankers import DEFAULT, ON_PAGES, page_label
from faithlens.coding import events, modes, sessions, visible
from faithlens.coding.codebook import Codebook
from faithlens.errors import FaithLensError
from faithlens.unit_filter import level_noun
from faithlens.views import coding


def key(dataset: str, session: str, coder: str, *parts: object) -> str:
    return urlstate.key(urlstate.CODE, dataset, session, coder, *parts)


def unit_key(dataset: str, session: str, coder: str, unit: str) -> str:
    """The prefix of one unit's inputs."""
    return key(dataset, session, coder, "unit", unit)


def _open(open_key: str, unit: str | None) -> None:
    """Back's and Skip's callback: show that unit on the next run."""
    if unit is not None:
        st.session_state[open_key] = unit


def _save(db_path: str, version: str, dataset: str, name: str, actor: access.Actor, unit: str) -> None:
    """Save's callback: store the code (committed when save returns), then go on to the next uncoded unit."""
    coder = actor.id
    root = shell.root_connection(db_path)
    found = sessions.get(root, name)
    base = unit_key(dataset, name, coder, unit)
    try:
        with root.cursor() as cur:
            context = modes.context(cur, found, unit)
        sub = coding_controls.submission(found, unit, base, context)
        events.save(root, actor, found, sub)
    except FaithLensError as exc:
        st.session_state[key(dataset, name, coder, "error")] = exc
        return
    book = coding_data.book_of(db_path, found)
    now = visible.latest(root, actor, found, coder, unit)
    # The codes as of the run that drew the page, plus this one: the next uncoded unit without reading
    # every code again (the page reads them under the new data version anyway).
    coded = coding_data.coded(db_path, version, name, actor) | {unit}
    order = found.order_for(coder)
    position = order.index(unit) + 1
    words = coding.coder_words(found, book, now.codes, context) if now else "saved"
    st.session_state[key(dataset, name, coder, "flash")] = f"Saved unit {position}: {words}."
    caution = coding_controls.caution(found, book, sub)
    if caution:
        st.session_state[key(dataset, name, coder, "caution")] = f"Unit {position}: {caution}"
    coding_controls.clear(base)
    st.session_state[key(dataset, name, coder, "open")] = coding.next_uncoded(order, coded, unit) or unit


def _undo(db_path: str, dataset: str, name: str, actor: access.Actor, unit: str) -> None:
    """Undo's callback: take back the actor's last save and show that unit as it is now."""
    coder = actor.id
    root = shell.root_connection(db_path)
    found = sessions.get(root, name)
    try:
        now = events.undo(root, actor, found, unit)
    except FaithLensError as exc:
        st.session_state[key(dataset, name, coder, "error")] = exc
        return
    coding_controls.seed(unit_key(dataset, name, coder, unit), now, force=True)
    book = coding_data.book_of(db_path, found)
    position = found.order_for(coder).index(unit) + 1
    with root.cursor() as cur:
        context = modes.context(cur, found, unit)
    words = f"back to {coding.coder_words(found, book, now.codes, context)}" if now else "uncoded again"
    st.session_state[key(dataset, name, coder, "flash")] = f"Undone: unit {position} is {words}."
    st.session_state[key(dataset, name, coder, "open")] = unit


def _navigation(
    ctx: shell.PageContext, found: sessions.Session, coder: str, order: tuple[str, ...], shown: str
) -> None:
    """Back and Skip through the coder's order, and Undo of their last save."""
    dataset, name = ctx.dataset, found.name
    at = order.index(shown)
    open_key = key(dataset, name, coder, "open")
    back, skip, undo = st.columns(3)
    back.button(
        "Back",
        key=key(dataset, name, coder, "back"),
        icon=":material/arrow_back:",
        shortcut="Left",
        disabled=at == 0,
        on_click=_open,
        args=(open_key, order[at - 1] if at else None),
        width="stretch",
    )
    skip.button(
        "Skip",
        key=key(dataset, name, coder, "skip"),
        icon=":material/arrow_forward:",
        shortcut="Right",
        disabled=at == len(order) - 1,
        on_click=_open,
        args=(open_key, order[at + 1] if at + 1 < len(order) else None),
        width="stretch",
    )
    last = coding_data.last_saved(ctx.db_path, ctx.version, name, ctx.actor)
    undo.button(
        "Undo last save" + (f" (unit {order.index(last) + 1})" if last in order else ""),
        key=key(dataset, name, coder, "undo"),
        icon=":material/undo:",
        shortcut="U",
        disabled=last is None,
        on_click=_undo,
        args=(ctx.db_path, dataset, name, ctx.actor, last),
        width="stretch",
    )


def _shown(
    found: sessions.Session, order: tuple[str, ...], codes: frozenset[str], opened: str | None, url_unit: str | None
):
    """The unit to show and whether the page chose it itself (the resume point, kept out of the URL)."""
    resume = coding.resume_at(order, codes)
    wanted = opened if opened in found.units else url_unit if url_unit in found.units else None
    shown = wanted or resume or order[0]
    return shown, shown == resume or wanted is None


def _ranker(ctx: shell.PageContext, found: sessions.Session, coder: str, ranker: str | None) -> str:
    """Which ranker's passages the source shows (the link's, else the default)."""
    chosen = st.selectbox(
        "Passages by",
        ON_PAGES,
        key=urlstate.bind(key(ctx.dataset, found.name, coder, "ranker"), ranker or DEFAULT, ON_PAGES),
        format_func=page_label,
        help="Which ranker's stored alignment highlights the source. Others are computed on Explore.",
        width=260,
    )
    return chosen


def show(
    ctx: shell.PageContext, found: sessions.Session, coder: str, url_unit: str | None, ranker: str | None = None
) -> tuple[str | None, str | None]:
    """The panel; returns the unit for the URL (None when it is where the coder resumes) and the ranker
    whose passages it shows (None: the default)."""
    dataset, name = ctx.dataset, found.name
    order = coding_data.order(ctx.db_path, ctx.version, name, coder)
    codes = coding_data.coded(ctx.db_path, ctx.version, name, ctx.actor)
    opened = st.session_state.pop(key(dataset, name, coder, "open"), None)
    shown, chosen_by_page = _shown(found, order, codes, opened, url_unit)
    done = sum(1 for unit in order if unit in codes)
    units = level_noun("unit", len(order))
    st.progress(done / len(order) if order else 1.0, text=f"{done:,} of {len(order):,} {units} coded by {coder}")
    flash = st.session_state.pop(key(dataset, name, coder, "flash"), None)
    if flash is not None:
        st.success(md_escape(flash), icon=":material/check_circle:")
    caution = st.session_state.pop(key(dataset, name, coder, "caution"), None)
    if caution is not None:
        st.warning(md_escape(caution), icon=":material/warning:")
    if done == len(order):
        every = f"all {len(order):,} units" if len(order) > 1 else "the one unit"
        st.success(f"You have coded {every} of this session. Back and Skip go through them.")
    _navigation(ctx, found, coder, order, shown)
    book = coding_data.book_of(ctx.db_path, found)
    chosen_ranker = _ranker(ctx, found, coder, ranker)
    view, context = coding_data.unit(ctx.db_path, ctx.version, name, shown, chosen_ranker)
    status = "coded" if shown in codes else "not coded yet"
    st.markdown(md_escape(f"Unit {order.index(shown) + 1} of {len(order)} · {status}"))
    column = coding_view.show(found, view, context)
    coding_controls.seed(
        unit_key(dataset, name, coder, shown), coding_data.code_on(ctx.db_path, ctx.version, name, ctx.actor, shown)
    )
    with column:
        st.divider()
        _inputs_and_save(ctx, found, book, coder, shown, context)
        _discussion(ctx, found, coder, shown)
    if not found.blind:
        gold = coding_data.gold(ctx.db_path, ctx.version, name, ctx.actor, shown)
        others = coding_data.everyone(ctx.db_path, ctx.version, name, ctx.actor)
        coding_view.reference(found, book, coder, gold, others, shown, context)
    return None if chosen_by_page else shown, None if chosen_ranker == DEFAULT else chosen_ranker


def _discussion(ctx: shell.PageContext, found: sessions.Session, coder: str, shown: str) -> None:
    """The unit's comments this coder may read (their own only in a blind session) and a box to add one."""
    said = coding_data.threads(ctx.db_path, ctx.version, found.name, (shown,), ctx.actor).get(shown, [])
    with st.expander(f"Discussion of this unit ({len(said)})", expanded=bool(said), icon=":material/forum:"):
        base = key(ctx.dataset, found.name, coder, "talk", shown)
        coding_discussion.thread(ctx.db_path, ctx.actor, found, shown, said, base, "coder")


@st.fragment
def _inputs_and_save(
    ctx: shell.PageContext, found: sessions.Session, book: Codebook, coder: str, shown: str, context: modes.Context
) -> None:
    """The mode's inputs and Save, rerun on their own: picking a code (a digit) redraws only these, so
    a coder pays for one whole-page run per unit, the one after Save. When Save (or its error-free
    callback) has chosen the unit to show next, the whole page is drawn again."""
    if key(ctx.dataset, found.name, coder, "open") in st.session_state:
        st.rerun()
    coding_controls.inputs(found, book, unit_key(ctx.dataset, found.name, coder, shown), context, ctx.actor)
    _save_button(ctx, found, coder, shown)


def _save_button(ctx: shell.PageContext, found: sessions.Session, coder: str, shown: str) -> None:
    dataset, name = ctx.dataset, found.name
    error = st.session_state.pop(key(dataset, name, coder, "error"), None)
    if error is not None:
        shell.show_error(error)
    st.button(
        "Save and go on",
        key=key(dataset, name, coder, "save"),
        type="primary",
        icon=":material/save:",
        shortcut="Enter",
        on_click=_save,
        args=(ctx.db_path, ctx.version, dataset, name, ctx.actor, shown),
        width="stretch",
    )
