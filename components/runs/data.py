"""The Runs page's process-wide job registry and its cached reads.

`jobs()` is the one `Jobs` of this server process (`cache_resource`): a run works on its own thread and
survives reruns, page switches and closed tabs; every session sees its progress. Reads are cached
per data version like every page's (keyed on small scalars); a live run's progress is read from its
runner's snapshot in memory, never from here.
"""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from components import shell
from faithlens import store
from faithlens.llm.runs import log, spec, stability
from faithlens.llm.runs.jobs import Jobs
from faithlens.llm.targets import Target
from faithlens.views import arm_tables, run_failures, runs

FAILURES_SHOWN = 200
RELEASE_WAIT_S = 10.0


def _release(jobs: Jobs) -> None:
    """When the registry is dropped (the cache cleared, tests tearing down): stop its runs cleanly."""
    working = jobs.working()
    for run_id in working:
        jobs.cancel(run_id)
    for run_id in working:
        jobs.join(run_id, RELEASE_WAIT_S)


@st.cache_resource(show_spinner=False, on_release=_release)
def jobs() -> Jobs:
    """The runs working in this server process."""
    return Jobs()


@st.cache_data(show_spinner=False, max_entries=16)
def summaries(db_path: str, version: str, dataset: str) -> list[log.RunSummary]:
    """Every run of the dataset, newest first, with counts over its items' latest events."""
    with shell.root_connection(db_path).cursor() as cur:
        return log.summaries(cur, dataset=dataset)


def settled(ctx: shell.PageContext) -> tuple[str, list[log.RunSummary], frozenset[int]]:
    """The data version to read runs at, the dataset's runs, and which of them work now.

    Liveness is taken once and the rest of the page keeps to it (a run that ends meanwhile is redrawn
    by its fragment's rerun). A run this process worked on that ended after the page read the version
    still says 'running' there, and would show as interrupted: then the version is read again; the
    runner stores its final state before its thread ends, so the new version has it."""
    registry = jobs()
    found = summaries(ctx.db_path, ctx.version, ctx.dataset)
    alive = frozenset(r.run_id for r in found if registry.alive(r.run_id))
    stale = [r for r in found if r.state == "running" and r.run_id not in alive and registry.snapshot(r.run_id)]
    if not stale:
        return ctx.version, found, alive
    with ctx.root.cursor() as cur:
        version = store.data_version(cur)
    return version, summaries(ctx.db_path, version, ctx.dataset), alive


def elsewhere(ctx: shell.PageContext, run: log.RunSummary) -> bool:
    """Whether another server of the team works on `run` (never without a team store)."""
    return runs.working_elsewhere(run, store.is_replica(ctx.root), datetime.now())


@st.cache_data(show_spinner=False, max_entries=32)
def failures(db_path: str, version: str, run_id: int) -> run_failures.Report | None:
    """A stored run's failures counted by cause, and the first FAILURES_SHOWN of them in context."""
    with shell.root_connection(db_path).cursor() as cur:
        run = log.summary(cur, run_id)
        return None if run is None else run_failures.report(cur, run, FAILURES_SHOWN)


@st.cache_data(show_spinner=False, max_entries=8)
def live_failures(
    db_path: str, dataset: str, level: str, source: str, found: tuple[log.Failure, ...]
) -> list[run_failures.InContext]:
    """A working run's failures (from its snapshot, in memory) with their units: unit texts do not
    change while it works, so this is keyed on the failures themselves, not the data version."""
    with shell.root_connection(db_path).cursor() as cur:
        return run_failures.in_context(cur, dataset, level, source, list(found))


@st.cache_data(show_spinner=False, max_entries=32)
def points_failures(db_path: str, version: str, run_id: int) -> list[log.Failure]:
    """The first FAILURES_SHOWN done items of a run whose ARM explanation points failed."""
    with shell.root_connection(db_path).cursor() as cur:
        return log.points_failures(cur, run_id, FAILURES_SHOWN)


@st.cache_data(show_spinner=False, max_entries=32)
def agreement(db_path: str, version: str, run_id: int) -> stability.Stability | None:
    """Self-agreement across a run's repeats (None for one repeat)."""
    with shell.root_connection(db_path).cursor() as cur:
        return stability.of_run(cur, run_id)


@st.cache_data(show_spinner=False, max_entries=32)
def arm_figures(db_path: str, version: str, run_id: int) -> arm_tables.RewriteFigures | None:
    """ARM Table 3's figures of an arm-rewrite run (None for another method)."""
    with shell.root_connection(db_path).cursor() as cur:
        return arm_tables.run_figures(cur, run_id)


@st.cache_data(show_spinner=False, max_entries=16)
def sample_target(db_path: str, version: str, dataset: str, level: str) -> Target | None:
    """A unit that stands for the dataset's units of `level` when offering methods."""
    with shell.root_connection(db_path).cursor() as cur:
        return runs.sample_target(cur, dataset, level)


@st.cache_data(show_spinner=False, max_entries=64)
def units_in_words(db_path: str, version: str, dataset: str, level: str, selection: spec.Selection) -> tuple[int, str]:
    """How many units a selection holds, and the set in words."""
    with shell.root_connection(db_path).cursor() as cur:
        return runs.units_in_words(cur, dataset, level, selection)
