"""Errors (served at /errors): a tag family's values (error types, difficulty, ambiguity types, a
coder's codes, or one source's verdicts) over generators, topic types, corpora or splits, which
values share a unit, and which sources recall which value; every count opens its units in Explore.

Every choice lives in the URL (`faithlens.views.states.ErrorsState`). The numbers come from
`faithlens.views.errors`, the same core as `python -m faithlens errors`; controls are in
`components/errors/controls.py`, sections in `components/errors/sections.py`.
"""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.errors import controls as errors_controls
from components.errors import data as errors_data
from components.errors import sections as errors_sections

ctx = shell.page_setup(urlstate.ERRORS)


def main() -> None:
    st.title("Errors")
    st.caption(
        "Which kinds of errors occur where, and which sources catch them: the error types of TofuEval "
        "(Figures 2 and 4), StorySumm's easy and hard errors (Tables 2 and 8), ARM's ambiguity types "
        "(Figures 4 and 7), FABLES' verdicts per summarizer, and any coder's codes."
    )
    if ctx.dataset is None:
        st.stop()
    with shell.link_state(urlstate.ERRORS, ctx.dataset) as (wanted, notes):
        _sections(wanted, notes)


def _sections(wanted, notes: list[str]) -> None:
    families = errors_data.families(ctx.db_path, ctx.version, ctx.dataset)
    if not families:
        st.info("This dataset has no tags and no labels yet: import some, code some, or run a method.")
        st.stop()
    chosen = errors_controls.distribution_choices(ctx, wanted, families, notes)
    shown = errors_data.distribution(
        ctx.db_path, ctx.version, ctx.dataset, chosen.family, chosen.by, chosen.of, chosen.tagged_by
    )
    errors_sections.distribution(ctx, shown)
    errors_sections.together(ctx, chosen.family, chosen.tagged_by)
    st.subheader("Which sources catch which value")
    asked = errors_controls.recall_choices(ctx, chosen, notes)
    if asked.result is not None:
        errors_sections.recall(ctx, asked.result, asked.splits, chosen.tagged_by)
    urlstate.write(asked.url)


with shell.guard():
    main()
