"""Runs (served at /runs): one method over many units in the background, with its estimate before it
starts, live progress, failures, Resume and Retry, and self-agreement across repeats.

The URL says the dataset, the run shown and an Explore filter carried over by Explore's "Run a method on
the filtered set" (`faithlens.views.states.RunsState`). Runs work on threads of this server process
(`components/runs/data.jobs`), so they survive page switches; the work is `faithlens.llm.runs`.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from components import exports, shell, unit_sets, urlstate
from components.markdown import md_escape
from components.runs import data as runs_data
from components.runs import detail as runs_detail
from components.runs import form as runs_form
from faithlens import querystate
from faithlens.filters import Filters
from faithlens.views.states import RunsState

ctx = shell.page_setup(urlstate.RUNS)


def main() -> None:
    if ctx.dataset is None:
        st.stop()
    st.title(f"Runs: {md_escape(ctx.dataset)}")
    st.caption(
        "Run one method over many units in the background: the estimate first, then live progress that "
        "survives switching pages. Every answer is stored before it counts, so Resume and Retry never buy "
        "an answer twice; the run's label source colours Explore and is compared on Compare."
    )
    state, notes = urlstate.read(urlstate.RUNS, ctx.dataset)
    warnings = st.container()
    explore_filter = unit_sets.carried(ctx, state.filters, notes)
    version, found, alive = runs_data.settled(ctx)
    now = replace(ctx, version=version)
    form, listing = st.columns([5, 7], gap="large")
    with form:
        runs_form.section(ctx, explore_filter)
        exports.pack_panel(ctx)
    with listing:
        picked = runs_detail.table(now, found, alive)
        chosen = runs_form.started(ctx.dataset) or picked or state.run
        by_id = {run.run_id: run for run in found}
        if chosen is not None and chosen not in by_id:
            notes.append(querystate.ignored("run", chosen, "no run of this dataset has that number"))
            chosen = None
        shown = by_id[chosen] if chosen is not None else (found[0] if found else None)
        if shown is not None:
            st.divider()
            runs_detail.show(now, shown, shown.run_id in alive)
    for note in notes:
        warnings.warning(md_escape(note), icon=":material/link_off:")
    urlstate.write(RunsState(ctx.dataset, chosen, explore_filter or Filters()))


with shell.guard():
    main()
