"""Reproduced figures (served at /reproduced): every published figure FaithLens reproduces, the
app's number beside the paper's, whether it matches to the printed precision, why it differs when it
does, and a link to the view that computes it. The page a reviewer opens first.

The figures come from `faithlens.views.reproduced` (one reproducer per paper; the printed numbers in
`faithlens/analysis/published/*.toml`), the same as `python -m faithlens reproduced`. They do not
depend on the sidebar's dataset: every paper whose bundled dataset is loaded is listed.
"""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.markdown import md_escape
from components.reproduced import sections as reproduced_sections

ctx = shell.page_setup(urlstate.REPRODUCED)


def main() -> None:
    st.title("Reproduced figures")
    st.caption(
        "Each published table FaithLens reproduces, cell by cell: the paper's figure as printed, ours under it, "
        "green when ours rounds to the printed figure, amber when it differs (Δ = ours − paper, with the cause), "
        "grey when we have none (with the cause: what the release lacks, or what to create) or the paper draws a "
        "chart and prints no number. Each row links to the page that computes it, or to the one to create it on."
    )
    if ctx.dataset is None:
        st.stop()
    with shell.link_state(urlstate.REPRODUCED, ctx.dataset) as (wanted, notes):
        with st.spinner("Recomputing every published figure from the data ..."):
            report = reproduced_sections.report(ctx.db_path, ctx.version)
        st.markdown(f"**{md_escape(report.summary().line())}**")
        for title in report.absent:
            st.info(md_escape(f"{title}: its bundled dataset is not loaded, so its figures are not listed."))
        figures, state = reproduced_sections.filters(ctx.dataset, report.figures, wanted, notes)
        reproduced_sections.download(figures, state)
        if not figures:
            st.info("No figure matches these filters.")
        reproduced_sections.tables(figures)
        urlstate.write(state)


with shell.guard():
    main()
