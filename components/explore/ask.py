"""Explore's "Ask a model" block: every method of the papers that applies to the chosen claim or sentence,
or to the whole summary when none is chosen (verify, rewrite, classify, or extract StorySumm's suggested
inconsistencies and FABLES' claims), with the papers' prompts (`components/llm_panel.py`)."""

from __future__ import annotations

import streamlit as st

from components import llm_panel, shell
from components.markdown import md_escape
from faithlens.llm import targets
from faithlens.views.detail import Detail
from faithlens.views.states import DetailState

ASK_TOGGLE = "explore.asking"


def _target_id(detail: Detail, state: DetailState) -> tuple[str, str]:
    """The unit the reader chose (claim, then sentence), else the summary; with how to name it."""
    if state.unit is not None:
        claim = next(c for c in detail.claims if c.unit_id == state.unit)
        return claim.unit_id, f"claim C{claim.position + 1}"
    if state.sentence:
        return detail.sentences[state.sentence - 1].unit_id, f"sentence S{state.sentence}"
    return detail.summary.summary_id, "the whole summary"


def section(ctx: shell.PageContext, detail: Detail, state: DetailState) -> None:
    """The block under the summary; answers become label sources that colour this page and Compare."""
    target_id, name = _target_id(detail, state)
    # A toggle rather than an expander: a collapsed expander still sends its widgets on every run,
    # which slows every visit to Explore for readers who never ask.
    if not st.toggle(md_escape(f"Ask a model about {name}"), key=ASK_TOGGLE):
        return
    with st.container(border=True):
        st.caption(
            "Choose a sentence or claim above to ask about it, or none for the whole summary. Every answer is "
            "stored with its prompt version, tokens and cost; a verdict becomes a label source (llm/…) you can "
            "colour by here and compare on Compare, suggested inconsistencies feed a hybrid coding session, and "
            "extracted claims become a claim set of the summary."
        )
        with ctx.root.cursor() as cur:
            target = targets.resolve(cur, ctx.dataset, target_id)
        llm_panel.panel(ctx.root, target, key="explore")
