"""Explore's "Ask a model" block: every method of the papers that applies to the chosen claim or sentence,
or to the whole summary when none is chosen (verify, rewrite, classify, or extract StorySumm's suggested
inconsistencies and FABLES' claims), with the papers' prompts (`components/llm_panel.py`).

An answer that stores a label changes the data version, so the page runs again at once: the colours,
the claim and sentence labels and "Every label source on this summary" then include it, without a reload."""

from __future__ import annotations

import streamlit as st

from components import llm_panel, shell
from components.markdown import md_escape
from faithlens import store
from faithlens.llm import targets
from faithlens.views.detail import Detail, claim_unit
from faithlens.views.states import DetailState

ASK_TOGGLE = "explore.asking"
PREVIEW_CHARS = 80


def _target(detail: Detail, state: DetailState) -> tuple[str, str, str | None]:
    """The unit the reader chose (claim, then sentence), else the summary: its id, its name as the page
    shows it (C2, S3), and its text."""
    claim = claim_unit(detail, state.claim)
    if claim is not None:
        return claim.unit_id, f"claim C{state.claim}", claim.text
    if state.sentence:
        sentence = detail.sentences[state.sentence - 1]
        return sentence.unit_id, f"sentence S{state.sentence}", sentence.text
    return detail.summary.summary_id, "the whole summary", None


def hint(name: str, text: str | None, state: DetailState) -> str:
    """What the block asks about and how to change it, in the words of the toggle above it."""
    if text is None:
        about = "Asking about the whole summary: choose a sentence or claim above to ask about it instead."
    else:
        shown = text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"
        about = f"Asking about {name}: “{shown}”"
        if state.claim is not None and state.sentence:
            about += f" (the claim is asked rather than sentence S{state.sentence}, chosen too)"
        about += ". Choose another sentence or claim above, or none for the whole summary."
    return (
        f"{about} Every answer is stored with its prompt version, tokens and cost; a verdict becomes a label "
        "source (llm/…) you can colour by here and compare on Compare, suggested inconsistencies feed a hybrid "
        "coding session, and extracted claims become a claim set of the summary."
    )


def section(ctx: shell.PageContext, detail: Detail, state: DetailState) -> None:
    """The block under the summary; answers become label sources that colour this page and Compare."""
    target_id, name, text = _target(detail, state)
    # A toggle rather than an expander: a collapsed expander still sends its widgets on every run,
    # which slows every visit to Explore for readers who never ask.
    if not st.toggle(md_escape(f"Ask a model about {name}"), key=ASK_TOGGLE):
        return
    with st.container(border=True):
        st.caption(md_escape(hint(name, text, state)))
        with ctx.root.cursor() as cur:
            target = targets.resolve(cur, ctx.dataset, target_id)
        answered = llm_panel.panel(ctx.root, target, key="explore", actor=ctx.actor)
    if answered is not None:
        with ctx.root.cursor() as cur:
            if store.data_version(cur) != ctx.version:
                st.rerun()
