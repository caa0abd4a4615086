"""A run's progress on the Runs page: live from its runner's snapshot (memory, no database read) in a
fragment that polls about once a second while the run works, or as stored when it does not.

When the fragment sees the run end it reruns the whole page once, which then reads the stored outcome
and draws no polling fragment: polling stops with the run.
"""

from __future__ import annotations

import streamlit as st

from components.markdown import md_escape, md_with_code
from components.runs import data as runs_data
from components.runs import failures as runs_failures
from faithlens.llm.runs import engine, log
from faithlens.views import run_failures, runs
from faithlens.views.runs import Progress

POLL_S = 1.0
FAILURES_SHOWN = runs_data.FAILURES_SHOWN


def figures(progress: Progress) -> None:
    """The bar, the counts and what was spent."""
    finished = progress.done + progress.failed
    st.progress(progress.fraction, text=f"{finished:,} of {progress.total:,} items")
    values = progress.figures()
    for row in (values[:4], values[4:]):
        for column, (label, value) in zip(st.columns(len(row)), row, strict=True):
            column.metric(label, value)


def failures_table(failures: list[log.Failure] | tuple[log.Failure, ...], failed: int, title: str = "Failures") -> None:
    """Failed items (unit, repeat, reason), at most FAILURES_SHOWN of them."""
    if not failures:
        return
    st.markdown(f"**{title}**")
    if failed > FAILURES_SHOWN:
        st.caption(f"The first {FAILURES_SHOWN:,} of {failed:,} items.")
    st.dataframe(
        [{"unit": f.target_id, "repeat": f.repeat, "reason": f.reason} for f in failures[:FAILURES_SHOWN]],
        hide_index=True,
        width="stretch",
        height="auto" if len(failures) <= 8 else 300,
        column_config={"reason": st.column_config.TextColumn(width="large")},
    )


def _cancel(run_id: int) -> None:
    """Cancel's callback: the runner stops taking items; the ones in flight are stored."""
    runs_data.jobs().cancel(run_id)


@st.fragment(run_every=POLL_S)
def live(run: log.RunSummary, db_path: str) -> None:
    """The working run, redrawn from memory every POLL_S seconds; Cancel stops it cleanly."""
    run_id = run.run_id
    registry = runs_data.jobs()
    now = registry.snapshot(run_id)
    if now is None or not registry.alive(run_id):
        st.rerun()
    _live_state(registry.cancelling(run_id))
    figures(Progress.of_snapshot(now))
    if now.eta_s is not None:
        st.caption(f"About {runs.duration(now.eta_s).removeprefix('about ')} left at the current rate.")
    if now.cost_before:
        st.caption("Calls and tokens count this session of the run; the cost adds what it paid before the resume.")
    if now.batch:
        st.caption(md_escape(f"Batch: {now.batch}"))
    st.button(
        "Cancel",
        key=f"runs.cancel.{run_id}",
        icon=":material/stop_circle:",
        on_click=_cancel,
        args=(run_id,),
        help="Stops asking; answers in flight are stored, and Resume asks only for the rest.",
    )
    _live_failures(run, db_path, now)
    points(Progress.of_snapshot(now), now.points_failures)


def _live_failures(run: log.RunSummary, db_path: str, now: engine.Snapshot) -> None:
    """What failed so far, by cause and in context, as the stored run shows it."""
    if not now.failures:
        return
    rows = runs_data.live_failures(db_path, run.dataset, run.level, run.source, now.failures)
    breakdown = run_failures.breakdown(now.failures)
    runs_failures.section(breakdown, rows, now.failed, run.settings, FAILURES_SHOWN)


def points(progress: Progress, failures: list[log.Failure] | tuple[log.Failure, ...]) -> None:
    """The done items whose ARM explanation points failed: how many, what it means, and which."""
    line = runs.points_line(progress)
    if line is None:
        return
    st.warning(md_escape(line), icon=":material/format_list_bulleted:")
    failures_table(failures, progress.points_failed, "Explanation points failed")


def _live_state(cancelling: bool) -> None:
    """Cancelling is the worker's own flag, so every tab sees it and a resume (a new worker) clears it."""
    st.markdown("**State:** running" + (" (cancelling: storing the answers in flight)" if cancelling else ""))


def stored(run: log.RunSummary, state: str) -> None:
    """A run no worker of this process is working on: its stored counts, state and reason."""
    reason = run.reason
    if state == log.INTERRUPTED:
        reason = "the server stopped while it worked (a restart or kill); Resume asks only for what is missing"
    elif state == runs.CREATED:
        reason = "made but never started"
    st.markdown(f"**State:** {md_escape(state)}" + (f": {md_with_code(reason)}" if reason else ""))
    figures(Progress.of_summary(run))
