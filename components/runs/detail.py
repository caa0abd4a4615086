"""The Runs page's list of runs and the chosen run: its progress (`runs_live`), Resume and Retry failed,
its failures, self-agreement across repeats, links to Compare and Explore, and its settings."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import exports, row_picker, shell, urlstate
from components.markdown import md_escape
from components.runs import data as runs_data
from components.runs import failures as runs_failures
from components.runs import live as runs_live
from faithlens import access
from faithlens.errors import FaithLensError
from faithlens.filters import Filters
from faithlens.llm.runs import log, stability
from faithlens.views import arm_tables, runs
from faithlens.views.states import CompareState, ExploreState

MAX_LISTED = 200


def _key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.RUNS, dataset, *parts)


def table(ctx: shell.PageContext, found: list[log.RunSummary], alive: frozenset[int]) -> int | None:
    """The runs of the dataset, newest first; returns the run the user just chose (else None)."""
    st.subheader("Runs")
    if not found:
        st.info("No run of this dataset yet: make one with the form.", icon=":material/info:")
        return None
    registry = runs_data.jobs()
    rows = [
        runs.list_row(
            run, registry.snapshot(run.run_id) if run.run_id in alive else None, runs_data.elsewhere(ctx, run)
        )
        for run in found[:MAX_LISTED]
    ]
    if len(found) > MAX_LISTED:
        st.caption(f"The newest {MAX_LISTED} of {len(found):,} runs.")
    units = {"units": st.column_config.TextColumn(width="medium")}
    return row_picker.chosen_row(rows, _key(ctx.dataset, "table"), "run", units)


def _go_on(
    db_path: str, dataset: str, actor: access.Actor, run_id: int, retry_failed: bool, budget_key: str | None = None
) -> None:
    """Resume's and Retry failed's callback: work on the run again in the background as `actor`, who pays
    (with the new budget typed beside Resume, for a run that stopped at its budget)."""
    root = shell.root_connection(db_path)
    budget = st.session_state.get(budget_key) if budget_key else None
    try:
        runs_data.jobs().start(root, run_id, actor, retry_failed=retry_failed, budget=budget)
    except FaithLensError as exc:
        st.session_state[_key(dataset, "error")] = exc


def _actions(ctx: shell.PageContext, run: log.RunSummary, state: str, unanswered: int) -> None:
    """Resume (or Start) where the run can go on, with a new budget after a budget stop; beside it Retry
    failed. A finished run whose calls failed offers Resume too: it asks only for those."""
    error = st.session_state.pop(_key(ctx.dataset, "error"), None)
    if error is not None:
        shell.show_error(error)
    if not access.allowed(ctx.actor, "start_run"):
        if runs.offers_resume(state, unanswered) or run.failed or run.points_failed:
            st.caption("Resuming or retrying a run is a paid call, open to runners and admins.")
        return
    budget_key = None
    if state == "budget" and run.settings.budget is not None:
        budget_key = _key(ctx.dataset, "budget", run.run_id)
        st.number_input(
            "New budget (USD) for Resume",
            min_value=0.01,
            value=max(round(run.settings.budget * 2, 2), 0.01),
            step=1.0,
            key=budget_key,
            help=f"The run stopped before passing its budget of ${run.settings.budget:g}; Resume goes on with this one.",
        )
    left, right = st.columns(2)
    if runs.offers_resume(state, unanswered):
        left.button(
            _resume_label(state, unanswered),
            key=_key(ctx.dataset, "resume", run.run_id),
            icon=":material/play_arrow:",
            type="primary",
            on_click=_go_on,
            args=(ctx.db_path, ctx.dataset, ctx.actor, run.run_id, False, budget_key),
            help="Asks only for the items not done yet, and for those whose call failed (nothing was stored "
            "for them); stored answers, refusals and unparseable ones included, are never bought twice.",
        )
    if run.failed or run.points_failed:
        right.button(
            f"Retry failed ({run.failed + run.points_failed:,})",
            key=_key(ctx.dataset, "retry", run.run_id),
            icon=":material/replay:",
            on_click=_go_on,
            args=(ctx.db_path, ctx.dataset, ctx.actor, run.run_id, True),
            help="Asks the failed items again, with a new sample for answers that came back unusable; for a "
            "rewrite whose explanation points failed, only the points.",
        )


def _resume_label(state: str, unanswered: int) -> str:
    if state == runs.CREATED:
        return "Start"
    if state == runs.FINISHED:
        return f"Resume ({unanswered:,} missing)"
    return "Resume"


def _links(ctx: shell.PageContext, run: log.RunSummary) -> None:
    if not shell.links_resolve():
        return
    compare = CompareState(dataset=ctx.dataset, level=run.level, sources=(run.source,))
    explore = ExploreState(dataset=ctx.dataset, filters=Filters(source=run.source))
    left, right = st.columns(2)
    left.page_link(**urlstate.link(urlstate.COMPARE, compare), label="Compare with gold", icon=urlstate.COMPARE.icon)
    right.page_link(
        **urlstate.link(urlstate.EXPLORE, explore), label="Explore coloured by this source", icon=urlstate.EXPLORE.icon
    )


def _agreement(ctx: shell.PageContext, run: log.RunSummary) -> None:
    """Self-agreement across repeats (TofuEval Table 4), for a run with repeats >= 2."""
    found = runs_data.agreement(ctx.db_path, ctx.version, run.run_id)
    if found is None:
        return
    st.markdown("**Self-agreement across repeats**")
    kappa = "undefined" if found.kappa is None else f"{found.kappa:.3f}"
    flips = "–" if found.flip_pct is None else f"{found.flip_pct:.1f}%"
    cells = (
        ("Mean Cohen's κ", kappa),
        ("Units whose verdict flips", flips),
        ("Flipping units", f"{len(found.flipping):,}"),
        ("Units counted", f"{found.units:,}"),
    )
    for column, (label, value) in zip(st.columns(len(cells)), cells, strict=True):
        column.metric(label, value)
    st.dataframe(
        [{"repeats": f"{p.first + 1} and {p.second + 1}", "Cohen's κ": p.kappa} for p in found.pairs],
        hide_index=True,
        column_config={"Cohen's κ": st.column_config.NumberColumn(format="%.3f")},
    )
    st.caption(_agreement_caption(found))
    if found.flipping and shell.links_resolve():
        flipping = ExploreState(dataset=ctx.dataset, filters=Filters(source=run.source, flips=run.source))
        st.page_link(
            **urlstate.link(urlstate.EXPLORE, flipping),
            label="Explore the summaries whose verdict flips",
            icon=":material/swap_horiz:",
        )


def _agreement_caption(found: stability.Stability) -> str:
    return md_escape(
        f"As TofuEval's Table 4 measures it: the same prompt asked {found.repeats} times at the method's "
        f"temperature (its prompt file's), Cohen's kappa between the verdicts of each pair of repeats, and "
        f"their mean; over the {found.units:,} units with a verdict in every repeat. A unit flips when its "
        "verdicts are not all the same. Kappa is undefined for a pair that uses one label throughout."
    )


def _arm(ctx: shell.PageContext, run: log.RunSummary) -> None:
    """ARM Table 3's last two columns for a rewrite run: # rewrites and the average edit distance of the
    rewrites, on the paper's 0-1 scale beside the word count."""
    found = runs_data.arm_figures(ctx.db_path, ctx.version, run.run_id)
    if found is None:
        return
    st.markdown("**ARM rewrites** (as Table 3 reports them)")
    cells = (
        ("# Rewrites (r ≠ s)", f"{found.rewrites:,} of {found.claims:,}"),
        ("Avg. edit distance", "–" if found.avg_edit_distance is None else f"{found.avg_edit_distance:.2f}"),
        ("Avg. word edits", "–" if found.avg_word_edits is None else f"{found.avg_word_edits:.2f}"),
    )
    for column, (label, value) in zip(st.columns(len(cells)), cells, strict=True):
        column.metric(label, value)
    st.caption(md_escape(arm_tables.paper_beside(found)))


def _settings(run: log.RunSummary) -> None:
    with st.expander("Settings"):
        st.dataframe(
            pd.DataFrame(runs.settings_rows(run), columns=["setting", "value"]),
            hide_index=True,
            width="stretch",
            height="auto",
        )


def show(ctx: shell.PageContext, run: log.RunSummary, alive: bool) -> None:
    """The chosen run: progress (live while it works), actions, failures, self-agreement, links, settings."""
    st.subheader(md_escape(f"Run {run.run_id}: {run.source}"))
    st.caption(md_escape(f"{run.level} level · {run.selection}"))
    if alive:
        runs_live.live(run, ctx.db_path)
    else:
        state = runs.shown_state(run.state, alive=False, elsewhere=runs_data.elsewhere(ctx, run))
        runs_live.stored(run, state)
        report = runs_data.failures(ctx.db_path, ctx.version, run.run_id)
        _actions(ctx, run, state, report.breakdown.unanswered if report else 0)
        if report is not None:
            runs_failures.section(report.breakdown, report.rows, report.failed, run.settings, runs_data.FAILURES_SHOWN)
        if run.points_failed:
            failed = runs_data.points_failures(ctx.db_path, ctx.version, run.run_id)
            runs_live.points(runs.Progress.of_summary(run), failed)
        _agreement(ctx, run)
        _arm(ctx, run)
    _links(ctx, run)
    exports.source_downloads(ctx, ctx.dataset, run.source, _key(ctx.dataset, "labels", run.run_id), check=True)
    _settings(run)
