"""Compare (served at /compare): confusion matrices and agreement metrics between a reference and
other label sources.

Every choice lives in the URL (level, reference, sources, mapping, topics, view, thresholds, pair,
dsplit, cell). The numbers come from `faithlens.compare`, the same core as
`python -m faithlens metrics`; each compared source is computed (and cached) on its own, so moving
one score source's threshold slider recomputes only that source. Cached reads live in
`components/compare_data.py`, URL state in `compare_state.py`, controls in `compare_controls.py`
and the sections below them in `compare_sections.py`.
"""

from __future__ import annotations

import streamlit as st

from components import compare_controls, compare_data, compare_sections, compare_state, shell
from faithlens.compare import ALL

ctx = shell.page_setup("Compare", icon=":material/compare_arrows:")


def main() -> None:
    st.title("Compare")
    st.caption(
        "How far do two label sources agree? The reference is on the rows, each compared source on the columns. "
        "The numbers follow the StorySumm paper's definitions and match `python -m faithlens metrics`."
    )
    if ctx.dataset is None:
        st.stop()
    dataset = ctx.dataset
    choices, has_topics = compare_data.choices(ctx.db_path, ctx.version, dataset)
    if not choices:
        st.info("This dataset has no labels yet.")
        st.stop()
    selection = compare_controls.pick(ctx, dataset, choices, has_topics)
    if selection.nothing_to_compare:
        st.info(selection.nothing_to_compare)
        compare_state.write_url(selection.url)
        st.stop()
    results, tuned, thresholds = compare_controls.compute(ctx, selection)
    compare_sections.agreement(selection.reference, results, scored=bool(tuned))
    compare_controls.threshold_sliders(tuned, selection.threshold_context)
    view = compare_sections.matrices(dataset, results)
    detail = compare_sections.pair_detail(ctx, selection, results, view)
    compare_sections.how_computed()
    compare_state.write_url(
        {**selection.url, "thresholds": thresholds, "view": None if view == ALL else view, **detail}
    )


with shell.guard():
    main()
