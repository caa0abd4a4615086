"""The Runs page's "New run" form: level, method, variant and evidence (the Ask panel's controls,
`components/llm_panel.py`), provider, model and base URL, the unit set, the run's settings; then the
estimate, and Start.

The estimate renders every unit's prompt, so it is made when asked for (Estimate), kept for these exact
settings, and Start appears below it: a rerun while a run works stays cheap, and nothing is started
without its cost on screen. Start is a callback (it runs before the next script run, so that run already
reads the new run): `engine.create_run`, then the process's `Jobs` starts it, both as `ctx.actor`, who
pays. The form is offered to those allowed `start_run` (runners and admins); on a demo server it is not.
"""

from __future__ import annotations

import streamlit as st

from components import llm_panel, shell, unit_sets, urlstate
from components.markdown import md_escape
from components.runs import data as runs_data
from faithlens import access
from faithlens.errors import FaithLensError
from faithlens.filters import Filters
from faithlens.llm import methods
from faithlens.llm.runs import engine
from faithlens.llm.runs.spec import BATCH_METHODS_EXCLUDED, MAX_CONCURRENCY, RunSpec, Selection
from faithlens.views import runs
from faithlens.views.runs import LEVEL_NOUNS

MAX_REPEATS = 20


def key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.RUNS, dataset, "new", *parts)


def started(dataset: str) -> int | None:
    """The run Start made just before this script run, if it did."""
    return st.session_state.pop(key(dataset, "started"), None)


def _start(db_path: str, dataset: str, actor: access.Actor, wanted: RunSpec, selection: Selection) -> None:
    """Start's callback: make the run and start it in the background; an error shows in the form."""
    root = shell.root_connection(db_path)
    try:
        run_id = engine.create_run(root, wanted, selection, actor)
        runs_data.jobs().start(root, run_id, actor)
    except FaithLensError as exc:
        st.session_state[key(dataset, "error")] = exc
        return
    st.session_state[key(dataset, "started")] = run_id
    st.session_state.pop(key(dataset, "plan"), None)


def _level(ctx: shell.PageContext) -> str:
    info = next(d for d in ctx.datasets if d.name == ctx.dataset)
    counts = {"summary": info.summaries, "sentence": info.sentences, "claim": info.claims + info.extracted_claims}
    levels = [level for level, count in counts.items() if count]
    return st.selectbox(
        "Level",
        levels,
        key=urlstate.bind(key(ctx.dataset, "level"), levels[0], levels),
        format_func=lambda level: f"{LEVEL_NOUNS[level]} ({counts[level]:,})",
    )


def _unit_set(ctx: shell.PageContext, level: str, explore_filter: Filters | None) -> Selection:
    """The unit set (all, a split, the Explore filter) and for claims the claim set; says it in words."""
    selection = unit_sets.pick(ctx, level, explore_filter, key)
    _, words = runs_data.units_in_words(ctx.db_path, ctx.version, ctx.dataset, level, selection)
    st.caption(md_escape(f"The run asks about {words}."))
    return selection


def _settings(dataset: str, method: methods.Method, default_source: str) -> dict[str, object]:
    """Concurrency, repeats, budget, source name and the batch toggle."""
    left, middle, right = st.columns(3)
    concurrency = left.number_input(
        "Concurrency", 1, MAX_CONCURRENCY, 8, key=key(dataset, "concurrency"), help="Calls in flight at once."
    )
    repeats = middle.number_input(
        "Repeats",
        1,
        MAX_REPEATS,
        1,
        key=key(dataset, "repeats"),
        help="Ask each unit K times (K ≥ 2 measures self-agreement, as TofuEval's Table 4 does).",
    )
    budget = right.number_input(
        "Budget (USD, optional)",
        min_value=0.0,
        value=None,
        step=1.0,
        key=key(dataset, "budget"),
        placeholder="no budget",
        help="The run stops before it would pass this amount (and before passing what is left of your own).",
    )
    source = st.text_input(
        "Label source name (optional)",
        key=key(dataset, "source"),
        placeholder=default_source,
        help="The label source the run's answers feed (colours Explore, compared on Compare).",
    ).strip()
    excluded = BATCH_METHODS_EXCLUDED.get(method.name)
    batch = st.toggle(
        "Batch API (batch prices, results within 24 h)",
        key=key(dataset, "batch", method.name),
        disabled=excluded is not None,
    )
    if excluded is not None:
        st.caption(md_escape(f"Batch API not offered for {method.title}: {excluded}."))
    return {
        "concurrency": int(concurrency),
        "repeats": int(repeats),
        "budget": float(budget) if budget else None,
        "source": source or None,
        "batch": bool(batch) and excluded is None,
    }


def section(ctx: shell.PageContext, explore_filter: Filters | None) -> None:
    """The whole form: controls, Estimate, the estimate, Start (or why no run can start here)."""
    st.subheader("New run")
    if ctx.actor.mode == "demo":
        st.info("This is a public demo server: no run can start here. The runs listed were made elsewhere.")
        return
    if not access.allowed(ctx.actor, "start_run"):
        st.info(
            md_escape(f"Runs are paid calls, open to runners and admins; you are a {ctx.actor.role}. ")
            + "Every run and its answers are yours to read.",
            icon=":material/lock:",
        )
        return
    level = _level(ctx)
    target = runs_data.sample_target(ctx.db_path, ctx.version, ctx.dataset, level)
    if target is None:
        st.info(f"This dataset has no {LEVEL_NOUNS[level]}.")
        return
    chosen = llm_panel.method_controls(target, methods.ACTIONS, key=key(ctx.dataset))
    if chosen is None:
        return
    method, variant, evidence = chosen
    provider, model, base_url = llm_panel.provider_controls(key(ctx.dataset))
    selection = _unit_set(ctx, level, explore_filter)
    default_source = methods.source_name(method.name, variant, evidence, model or "MODEL")
    wanted = RunSpec(
        dataset=ctx.dataset,
        level=level,
        method=method.name,
        provider=provider,
        model=model,
        variant=variant,
        evidence=evidence,
        base_url=base_url,
        **_settings(ctx.dataset, method, default_source),
    )
    _estimate_and_start(ctx, wanted, selection)


def _estimate_and_start(ctx: shell.PageContext, wanted: RunSpec, selection: Selection) -> None:
    error = st.session_state.pop(key(ctx.dataset, "error"), None)
    if error is not None:
        shell.show_error(error)
    plan_key = key(ctx.dataset, "plan")
    if st.button("Estimate", key=key(ctx.dataset, "estimate"), icon=":material/calculate:", disabled=not wanted.model):
        try:
            with st.spinner("Rendering every prompt to count its tokens…"):
                st.session_state[plan_key] = ((wanted, selection), runs.plan(ctx.root, wanted, selection, ctx.actor))
        except FaithLensError as exc:
            st.session_state.pop(plan_key, None)
            shell.show_error(exc)
    stored = st.session_state.get(plan_key)
    if stored is None or stored[0] != (wanted, selection):
        st.caption("Estimate shows the calls, tokens, cost and time of these settings; Start appears below it.")
        return
    plan: runs.Plan = stored[1]
    _show_estimate(plan)
    st.button(
        "Start run",
        key=key(ctx.dataset, "start"),
        type="primary",
        icon=":material/play_arrow:",
        on_click=_start,
        args=(ctx.db_path, ctx.dataset, ctx.actor, wanted, selection),
    )


def _show_estimate(plan: runs.Plan) -> None:
    st.markdown(md_escape(f"Estimate for {plan.spec.source} over {plan.words}"))
    cost, seconds, counts = runs.estimate_lines(plan.estimate)
    left, middle, right = st.columns(3)
    left.metric("Cost", cost)
    middle.metric("Time", seconds)
    right.metric("Your budget left", runs.budget_left(plan.estimate), help=plan.estimate.spending.describe_left())
    st.markdown("  \n".join(md_escape(line) for line in counts))
    if plan.estimate.notes:
        st.caption("\n".join(f"- {md_escape(note)}" for note in plan.estimate.notes))
