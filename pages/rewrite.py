"""Rewrite (served at /rewrite): ARM rewrites live, for demos. Pick a summary sentence (or paste a
story and a summary of your own), one or two models and a prompt variant, and watch the rewrites
stream side by side with the word diff, edit distance, explanation points and the r != s verdict.
A demo prepared beforehand replays from the cache with no network; on a demo server
(FAITHLENS_MODE=demo) the page lists the stored rewrites and replays them, asking no model. Someone who
may not buy answers replays stored ones only. The Costs tab adds up every stored answer by day, model
and method.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import exports, llm_panel, shell, urlstate
from components.markdown import md_escape
from faithlens import querystate
from faithlens.llm import ask, costs, methods, targets, usage
from faithlens.views import arm_tables, rewrite
from faithlens.views.states import RewriteState

ctx = shell.page_setup(urlstate.REWRITE)
ARM = methods.METHODS["arm-rewrite"]


def _models(key: str) -> list[tuple[str, str, str | None]]:
    """One or two (provider, model, base URL) rows."""
    first = llm_panel.provider_controls(f"{key}.a")
    if st.toggle("Compare with a second model", key=f"{key}.two"):
        return [first, llm_panel.provider_controls(f"{key}.b")]
    return [first]


def _rewrite_side_by_side(target: targets.Target, key: str) -> None:
    """The controls, then one column per model; Rewrite asks every model at once, each streaming into
    its own column (`llm_panel.ask_together`), so a demo waits for the slower model, not for the sum."""
    variant = st.selectbox("Prompt variant", ARM.variants, key=f"{key}.variant")
    st.caption(llm_panel.template_caption(ARM, variant, target.level))
    models = _models(key)
    buying = llm_panel.may_buy(ctx.actor)
    fresh = buying and st.checkbox("Fresh sample (ask again even if cached)", key=f"{key}.fresh")
    if not buying:
        llm_panel.replay_only(ctx.root, target, ctx.actor)
    label = "Rewrite" if buying else "Show stored rewrites"
    clicked = st.button(label, type="primary", key=f"{key}.go", disabled=not all(m[1] for m in models))
    shown, jobs = [], []
    for column, (provider, model, base_url) in zip(st.columns(len(models)), models, strict=True):
        column.markdown(f"**{md_escape(model)}** · {md_escape(provider)}")
        answer_key = f"{key}:{target.dataset}:{target.target_id}:{target.text}:{provider}:{model}:{variant}"
        what = ask.Ask(ARM.name, provider, model, variant, base_url=base_url, fresh=fresh) if clicked else None
        what = what or llm_panel.points_again(answer_key)
        if what is not None:
            jobs.append(llm_panel.Job(what, answer_key, column.container()))
        shown.append((column, answer_key))
    llm_panel.ask_together(ctx.root, target, jobs, ctx.actor)
    for column, answer_key in shown:
        answer = llm_panel.last_answer(answer_key)
        if answer is not None:
            with column:
                llm_panel.show_answer(answer, answer_key, buying)


def _demos() -> None:
    """A demo server's Rewrite: the stored rewrites to pick from, replayed from the cache (no model asked)."""
    with ctx.root.cursor() as cur:
        demos = rewrite.stored_demos(cur, ctx.dataset)
    if not demos:
        st.info("No stored rewrite of this dataset to replay on this demo server.")
        return
    st.caption(
        "This public demo replays rewrites stored beforehand, with their word diff and points: no model is asked."
    )
    chosen = st.selectbox("Stored demos", range(len(demos)), format_func=lambda i: str(demos[i]), key="rewrite.demo")
    demo = demos[chosen]
    with ctx.root.cursor() as cur:
        target = targets.resolve(cur, ctx.dataset, demo.unit_id)
    st.caption("The sentence (s)")
    st.text(demo.text)
    answer_key = (
        f"rewrite.demo:{ctx.dataset}:{demo.unit_id}:{demo.provider}:{demo.base_url}:{demo.model}:{demo.variant}"
    )
    if st.button("Replay", type="primary", key="rewrite.demo.go", icon=":material/replay:"):
        what = ask.Ask(ARM.name, demo.provider, demo.model, demo.variant, base_url=demo.base_url)
        llm_panel.ask_together(ctx.root, target, [llm_panel.Job(what, answer_key, st.container())], ctx.actor)
    answer = llm_panel.last_answer(answer_key)
    if answer is not None:
        llm_panel.show_answer(answer, answer_key)
    _earlier(demo.unit_id, demo.text)


@st.cache_data(show_spinner=False, max_entries=8)
def _summary_choices(db_path: str, version: str, dataset: str) -> list[rewrite.SummaryChoice]:
    """The summaries to pick from, read once per data version."""
    with shell.root_connection(db_path).cursor() as cur:
        return rewrite.summary_choices(cur, dataset)


def _linked_summary(state: RewriteState, by_id: dict, notes: list[str]) -> RewriteState:
    """`state` without a summary the dataset lacks (and the sentence that went with it), each with its note."""
    if state.summary is None or state.summary in by_id:
        return state
    notes.append(
        querystate.ignored("summary", state.summary, f"no summary of {ctx.dataset} has that id; the first is open")
    )
    if state.sentence is not None:
        notes.append(querystate.ignored("sentence", str(state.sentence), "it named a sentence of that summary"))
    return RewriteState(state.dataset)


def _from_dataset(state: RewriteState, notes: list[str]) -> RewriteState:
    """The summary and sentence pickers (seeded from the link, whose unusable values get a note), the
    rewrite, and the sentence's earlier rewrites; returns what the URL should say: the dataset, summary
    and sentence together once any is chosen, so a copied link opens the same sentence."""
    choices = _summary_choices(ctx.db_path, ctx.version, ctx.dataset)
    if not choices:
        st.info("This dataset has no summary sentences to rewrite.")
        notes += [querystate.ignored(n, str(v), "this dataset has no summary sentences") for n, v in _named(state)]
        return RewriteState(ctx.dataset)
    by_id = {c.summary_id: c for c in choices}
    state = _linked_summary(state, by_id, notes)
    linked = state.summary or choices[0].summary_id
    picker = urlstate.key(urlstate.REWRITE, ctx.dataset, "summary")
    summary_id = st.selectbox(
        "Summary", list(by_id), key=urlstate.bind(picker, linked, by_id), format_func=lambda s: str(by_id[s])
    )
    with ctx.root.cursor() as cur:
        sentences = rewrite.sentences(cur, ctx.dataset, summary_id)
    positions = [s.position + 1 for s in sentences]
    wanted = state.sentence if summary_id == linked and state.sentence in positions else positions[0]
    if summary_id == linked and state.sentence is not None and state.sentence not in positions:
        why = f"summary {summary_id} has {len(positions)} sentences; S1 is open"
        notes.append(querystate.ignored("sentence", str(state.sentence), why))
    picker = urlstate.key(urlstate.REWRITE, ctx.dataset, "sentence", summary_id)
    number = st.selectbox(
        "Sentence",
        positions,
        key=urlstate.bind(picker, wanted, positions),
        format_func=lambda n: f"S{n}: {sentences[n - 1].text[:90]}",
    )
    chosen = sentences[number - 1]
    with ctx.root.cursor() as cur:
        target = targets.resolve(cur, ctx.dataset, chosen.unit_id)
    st.caption("The sentence (s)")
    st.text(chosen.text)
    _rewrite_side_by_side(target, "rewrite.dataset")
    if _earlier(chosen.unit_id, chosen.text):
        exports.pack_download(
            ctx.db_path, ctx.dataset, [summary_id], f"rewrite.pack.{summary_id}", "Download this summary's demo pack"
        )
    named = state.summary is not None or wanted != positions[0] or (summary_id, number) != (linked, positions[0])
    return RewriteState(ctx.dataset, summary_id, number) if named else RewriteState(ctx.dataset)


def _named(state: RewriteState) -> list[tuple[str, object]]:
    return [(name, value) for name, value in (("summary", state.summary), ("sentence", state.sentence)) if value]


def _earlier(unit_id: str, original: str) -> int:
    """The sentence's stored rewrites; returns how many there are."""
    with ctx.root.cursor() as cur:
        past = usage.past_answers(cur, ctx.dataset, unit_id, ARM.name)
    st.markdown(f"**Earlier rewrites of this sentence** ({len(past)})")
    if past:
        frame = pd.DataFrame(rewrite.earlier_rows(past, original))
        distance = st.column_config.NumberColumn(format="%.2f", help=arm_tables.NORMALISATION)
        st.dataframe(
            frame, hide_index=True, width="stretch", placeholder="", column_config={"edit distance (0–1)": distance}
        )
    return len(past)


def _table3() -> None:
    """ARM Table 3's last two columns for every ARM rewrite source of the dataset, beside the paper's row."""
    if not st.toggle("ARM Table 3: every rewrite source of this dataset beside the paper", key="rewrite.table3"):
        return
    with ctx.root.cursor() as cur:
        rows = arm_tables.table3_rows(cur, ctx.dataset)
    if not rows:
        st.info("No ARM rewrite source in this dataset yet: rewrite sentences above, or start a run on the Runs page.")
        return
    frame = pd.DataFrame(arm_tables.table3_display(rows))
    st.dataframe(frame, hide_index=True, width="stretch", placeholder="")
    st.caption(md_escape(arm_tables.NORMALISATION + " " + arm_tables.TABLE3_COUNTS))


def _pasted() -> None:
    story = st.text_area("Story", key="rewrite.paste.story", height=200)
    summary = st.text_area("Summary", key="rewrite.paste.summary", height=120)
    parts = rewrite.split_pasted(summary) if summary.strip() else []
    if not (story.strip() and parts):
        st.caption(
            "Paste a story and its summary, then pick a sentence. Nothing pasted is stored as a dataset; "
            "the answers are kept in the LLM cache."
        )
        return
    sentence = st.selectbox("Sentence", parts, key="rewrite.paste.sentence")
    _rewrite_side_by_side(targets.pasted(story, summary, sentence), "rewrite.paste")


def _costs() -> None:
    with ctx.root.cursor() as cur:
        rows = usage.usage_rows(cur)
    if not rows:
        st.info("No model has been asked yet.")
        return
    total = sum(r["cost_usd"] or 0 for r in rows)
    unpriced = sum(r["calls"] - r["priced"] for r in rows)
    st.metric("Total cost", costs.describe_cost(total), help="Priced calls only; see the price table setting.")
    if unpriced:
        st.warning(f"{unpriced} calls have no price (cost unknown): add their model to the price table.")
    frame = pd.DataFrame(rows)
    frame["cost"] = [usage.cost_text(r) for r in rows]
    st.dataframe(frame.drop(columns=["cost_usd", "priced"]), hide_index=True, width="stretch", placeholder="")


def main() -> None:
    if ctx.dataset is None:
        st.stop()
    st.title("Rewrite")
    st.caption(
        "ARM (Subbiah et al.): a model rewrites a summary sentence to remove ambiguity or unfaithful detail; "
        "r ≠ s is the binary label, the edit distance (on the paper's 0–1 scale, beside the count of word edits) "
        "and the explanation points say how much changed."
    )
    state, notes = urlstate.read(urlstate.REWRITE, ctx.dataset)
    notes[:0] = [ctx.dataset_note] if ctx.dataset_note else []
    warnings = st.container()
    demo = ctx.actor.mode == "demo"
    from_dataset, paste, spend = st.tabs(["Stored demos" if demo else "From the dataset", "Your own text", "Costs"])
    with from_dataset:
        if demo:
            _demos()
            state = RewriteState(ctx.dataset)
        else:
            state = _from_dataset(state, notes)
        _table3()
    for note in notes:
        warnings.warning(md_escape(note), icon=":material/link_off:")
    with paste:
        if demo:
            st.info("Not on a demo server: a pasted text has no stored rewrite, and this server asks no model.")
        else:
            _pasted()
    with spend:
        _costs()
    urlstate.write(state)


with shell.guard():
    main()
