"""Compare (served at /compare): confusion matrices and agreement metrics between a reference and
other label sources.

Every choice lives in the URL (`faithlens.views.states.CompareState`: level, reference, sources,
mapping, topics, tuning, thresholds, paper, view, pair, dsplit, cell). For StorySumm the page says
which table it reproduces and, on request, puts the paper's figures beside ours (`compare_paper`). The numbers come from
`faithlens.views.compare`, the same core as `python -m faithlens metrics`; each compared source is
computed (and cached) on its own, so moving one score source's threshold slider recomputes only that
source. Cached reads live in `components/compare/data.py`, controls in `controls.py` and the
sections below them in `sections.py`.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from components import shell, urlstate
from components.compare import controls as compare_controls
from components.compare import data as compare_data
from components.compare import paper as compare_paper
from components.compare import sections as compare_sections
from faithlens.views.compare import ALL
from faithlens.views.states import CompareState

ctx = shell.page_setup(urlstate.COMPARE)


def main() -> None:
    st.title("Compare")
    st.caption(
        "How far do two label sources agree? The reference is on the rows, each compared source on the columns. "
        "The numbers follow the StorySumm paper's definitions and match `python -m faithlens metrics`."
    )
    if ctx.dataset is None:
        st.stop()
    with shell.link_state(urlstate.COMPARE, ctx.dataset) as (wanted, notes):
        _sections(wanted, notes)


def _sections(wanted: CompareState, notes: list[str]) -> None:
    """Controls, then the tables they ask for; every link value the page could not use adds to `notes`."""
    choices, has_topics = compare_data.choices(ctx.db_path, ctx.version, ctx.dataset)
    if not choices:
        st.info("This dataset has no labels yet.")
        st.stop()
    selection = compare_controls.pick(ctx, wanted, choices, has_topics, notes)
    if selection.nothing_to_compare:
        st.info(selection.nothing_to_compare)
        urlstate.write(selection.url)
        st.stop()
    agreement = st.container()
    results, thresholds = compare_controls.compute(ctx, selection, wanted.thresholds, notes)
    with agreement:
        compare_sections.agreement(selection, results, scored=_scored(results))
        compare_sections.label_downloads(ctx, selection)
        paper = compare_paper.section(ctx, selection, results, wanted.paper, notes)
    view = compare_sections.matrices(selection, results, wanted.view, notes)
    drill = compare_sections.pair_detail(ctx, selection, results, view, wanted, notes)
    compare_sections.how_computed(selection.dataset)
    state = replace(selection.url, thresholds=thresholds, paper=paper, view=None if view == ALL else view, **drill)
    urlstate.write(state)


def _scored(results: dict) -> bool:
    """Whether a score source is among the compared ones."""
    return any(result.pairs[0].threshold is not None for result in results.values())


with shell.guard():
    main()
