"""Adjudication on the Sessions page: the units two or more coders coded differently, each with its
text and every coder's code and note, and a decision (codes and a note) that `report.adjudicate` stores
as the session's `coding/<session>/adjudicated` label, and the unit's discussion, where the coders'
comments are read (all of them: the adjudicator sees every code) and the adjudicator answers. The
adjudicator is the acting person: adjudicators and admins see this view and decide; coders see it,
read-only, once an admin closes the session (the core refuses anything else)."""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.coding import data as coding_data
from components.coding import discussion as coding_discussion
from components.markdown import md_escape
from faithlens import access
from faithlens.coding import modes, report, sessions, visible
from faithlens.coding.codebook import Codebook
from faithlens.coding.comments import Comment
from faithlens.errors import FaithLensError
from faithlens.unit_filter import level_noun
from faithlens.views import coding

SHOWN = 50


def key(dataset: str, name: str, *parts: object) -> str:
    return urlstate.key(urlstate.SESSIONS, dataset, name, "adjudicate", *parts)


def _decide(db_path: str, actor: access.Actor, dataset: str, name: str, unit: str) -> None:
    """Decide's callback: store the actor's decision, or keep the error beside the unit."""
    state = st.session_state
    chosen = state.get(key(dataset, name, unit, "codes"))
    codes = tuple(chosen) if isinstance(chosen, list | tuple) else ((chosen,) if chosen else ())
    try:
        root = shell.root_connection(db_path)
        note = state.get(key(dataset, name, unit, "note"))
        report.adjudicate(root, actor, sessions.get(root, name), unit, codes, note)
    except FaithLensError as exc:
        state[key(dataset, name, unit, "error")] = exc
        return
    state[key(dataset, name, "flash")] = f"Decided: {unit}."


def _codes_input(found: sessions.Session, book: Codebook, widget: str) -> None:
    """The codes a decision can give (no N/A for a whole summary in line-by-line and hybrid)."""
    names = {code.key: code.name for code in book.codes}
    offered = list(modes.offered_codes(found.mode, book))
    if book.choice == "multi":
        st.multiselect("Decision: codes", offered, key=widget, format_func=names.get)
    else:
        st.selectbox("Decision: code", offered, index=None, key=widget, format_func=names.get)


def _unit(
    ctx: shell.PageContext,
    found: sessions.Session,
    book: Codebook,
    item: report.Disagreement,
    text: str,
    said: list[Comment],
) -> None:
    position = found.units.index(item.unit) + 1 if item.unit in found.units else "?"
    with st.container(border=True):
        st.markdown(md_escape(f"Unit {position} · {item.unit}"))
        st.text(text)
        for coder, code in item.codes.items():
            st.markdown(f"- {md_escape(coder)}: **{md_escape(coding.code_words(book, code.codes))}**")
            if code.note:
                st.text(f"{coder}'s note: {code.note}")
        if item.adjudicated is not None:
            words = coding.code_words(book, item.adjudicated.codes)
            st.success(md_escape(f"Decided: {words} (by {item.adjudicated.made_by})"), icon=":material/gavel:")
        error = st.session_state.pop(key(ctx.dataset, found.name, item.unit, "error"), None)
        if error is not None:
            shell.show_error(error)
        deciding = access.allowed(ctx.actor, "adjudicate", closed=found.closed)
        if deciding:
            _decision(ctx, found, book, item)
        with st.expander(f"Discussion ({len(said)})", expanded=bool(said), icon=":material/forum:"):
            coding_discussion.thread(
                ctx.db_path,
                ctx.actor,
                found,
                item.unit,
                said,
                key(ctx.dataset, found.name, item.unit, "talk"),
                "adjudicator",
                can_post=deciding,
            )


def _decision(ctx: shell.PageContext, found: sessions.Session, book: Codebook, item: report.Disagreement) -> None:
    """A decision's codes, note and Decide."""
    left, right, button = st.columns([2, 3, 1], vertical_alignment="bottom")
    with left:
        _codes_input(found, book, key(ctx.dataset, found.name, item.unit, "codes"))
    right.text_input("Decision: note", key=key(ctx.dataset, found.name, item.unit, "note"))
    button.button(
        "Decide",
        key=key(ctx.dataset, found.name, item.unit, "decide"),
        icon=":material/gavel:",
        on_click=_decide,
        args=(ctx.db_path, ctx.actor, ctx.dataset, found.name, item.unit),
        width="stretch",
    )


def show(ctx: shell.PageContext, found: sessions.Session, book: Codebook) -> None:
    if ctx.actor is None or not visible.sees_agreement(ctx.actor, found):
        st.info(
            "Adjudication is shown to adjudicators and admins; coders see it once an admin closes the session.",
            icon=":material/lock:",
        )
        return
    items = coding_data.disagreements(ctx.db_path, ctx.version, found.name, ctx.actor)
    if not items:
        st.info("No disagreement: no unit has two coders with different codes.", icon=":material/info:")
        return
    flash = st.session_state.pop(key(ctx.dataset, found.name, "flash"), None)
    if flash is not None:
        st.success(md_escape(flash), icon=":material/check_circle:")
    if access.allowed(ctx.actor, "adjudicate", closed=found.closed):
        st.caption(md_escape(f"Deciding as {ctx.actor.person.name} ({ctx.actor.id})."))
    open_only = st.toggle("Only undecided units", value=True, key=key(ctx.dataset, found.name, "undecided"))
    shown = [item for item in items if item.adjudicated is None] if open_only else items
    decided = len(items) - sum(item.adjudicated is None for item in items)
    st.caption(f"{len(items):,} {level_noun('unit', len(items))} with disagreements, {decided:,} decided.")
    if len(shown) > SHOWN:
        st.caption(f"Showing the first {SHOWN} of {len(shown):,}.")
    units = tuple(item.unit for item in shown[:SHOWN])
    texts = coding_data.texts(ctx.db_path, ctx.version, found.name, units)
    said = coding_data.threads(ctx.db_path, ctx.version, found.name, units, ctx.actor)
    for item in shown[:SHOWN]:
        _unit(ctx, found, book, item, texts.get(item.unit, ""), said.get(item.unit, []))
