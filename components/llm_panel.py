"""Ask a model about one unit from the page: the controls, the live stream, and the stored answer.

The core does the work (`faithlens.llm.ask`): it answers from the cache or calls the provider,
stores the answer and its label event, and returns what to show. Model text is shown with
`st.text` (never Markdown) or, for the rewrite's diff, as escaped markup through `st.html`.

Every ask is the page's actor's (`ctx.actor`): the core checks it. A new answer is offered only to whom
`access.allowed` lets buy one; anyone who can read replays stored answers, and is told why and what is
stored.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import highlight, shell
from components.markdown import md_escape, md_with_code
from faithlens import access, config
from faithlens.llm import ask, costs, methods, prompts, providers, usage
from faithlens.llm.answers import Answer
from faithlens.llm.targets import Target
from faithlens.views.diff import diff_html

DEFAULT_MODELS = {"openai": "gpt-4o", "anthropic": "claude-3-5-sonnet-20241022"}
_ANSWERS = "llm.answers"
_ASKED = "llm.asked"
STREAM_REFRESH_S = 0.05
"""How often the script's thread redraws the text the workers have streamed so far."""
ITEMS = {
    "storysumm-inconsistencies": "Suggested inconsistencies (StorySumm B.2): a hybrid coding session shows them "
    "from the source {source} (Sessions, New session, mode hybrid)",
    "fables-extract-claims": "Claims extracted (FABLES): stored as a claim set of this summary, named by {source}; "
    "Runs can ask a method about its claims",
}
"""What an extraction's items are and where they go next, by method."""
VARIANT_TITLES = {
    "": "as published (sent to GPT-4 and Mixtral)",
    "claude": "with the line the paper adds for Claude",
}


def provider_controls(key: str) -> tuple[str, str, str | None]:
    """Provider, model and an optional base URL (an OpenAI-compatible server); remembered per session."""
    left, middle = st.columns(2)
    provider = left.selectbox("Provider", providers.PROVIDERS, key=f"{key}.provider")
    model = middle.text_input("Model", DEFAULT_MODELS[provider], key=f"{key}.model.{provider}").strip()
    setting = config.SETTINGS[providers.BASE_URL_SETTING[provider]]
    base_url = st.text_input(
        "Base URL (optional)",
        config.get(providers.BASE_URL_SETTING[provider]),
        key=f"{key}.base_url.{provider}",
        help=f"An {provider}-compatible server, e.g. Ollama or vLLM. Default: {setting.env}.",
    ).strip()
    return provider, model, base_url or None


def _prompt_words(name: str) -> str:
    template = prompts.load(name)
    origin = "**ours**" if template.ours else f"{template.paper}, {template.where}"
    return f"`{template.name}@{template.version}` ({md_with_code(origin)})"


def template_caption(method: methods.Method, variant: str, level: str) -> str:
    """The prompt files a request with these settings really sends, each with where its wording comes from."""
    names = method.template_names(variant, level)
    sent = "; ".join(_prompt_words(name) for name in names)
    if len(names) > 1:
        sent += ", both sent and their items concatenated" if len(names) == 2 else f", all {len(names)} sent"
    if method.draws > 1:
        sent += f", sent {method.draws} times (self-consistency draws; the label is their majority)"
    after = "".join(
        f"; then {_prompt_words(name)} splits the explanation into points when r ≠ s" for name in method.follow_ups()
    )
    return ("Prompts: " if len(names) > 1 else "Prompt: ") + sent + after


def method_controls(target: Target, actions: tuple[str, ...], key: str) -> tuple[methods.Method, str, str] | None:
    """Method, variant and evidence setting for this target; unavailable evidence settings say why."""
    candidates = [m for m in methods.methods_for(target.level) if m.action in actions]
    reasons = {m.name: methods.method_reason(m, target) for m in candidates}
    available = [m for m in candidates if reasons[m.name] is None]
    for why in dict.fromkeys(why for why in reasons.values() if why):
        titles = ", ".join(methods.METHODS[name].title for name, reason in reasons.items() if reason == why)
        st.caption(md_with_code(f"Not offered: {titles}, because {why}"))
    if not available:
        st.caption(f"No method can judge this {target.level} here.")
        return None
    method = methods.method(
        st.selectbox(
            "Method",
            [m.name for m in available],
            key=f"{key}.method.{target.level}",
            format_func=lambda name: methods.METHODS[name].title,
        )
    )
    variant = method.variants[0]
    if len(method.variants) > 1:
        variant = st.selectbox(
            "Prompt variant",
            method.variants,
            key=f"{key}.variant.{method.name}",
            format_func=lambda v: VARIANT_TITLES.get(v, v),
        )
    evidence = "none"
    if method.evidence:
        reasons = {s: methods.evidence_reason(s, target) for s in methods.EVIDENCE_SETTINGS}
        usable = [s for s, why in reasons.items() if why is None]
        evidence = st.selectbox(
            "Evidence", usable, key=f"{key}.evidence", format_func=lambda s: methods.EVIDENCE_TITLES[s]
        )
        for setting, why in reasons.items():
            if why:
                st.caption(md_escape(f"Not offered: {methods.EVIDENCE_TITLES[setting]}, because {why}"))
    st.caption(template_caption(method, variant, target.level))
    return method, variant, evidence


@dataclass
class Job:
    """One question to ask now: what to send, the session key its answer is kept under, and the place
    its text streams into. The worker fills `pieces`, then `answer` or `error`."""

    what: ask.Ask
    key: str
    place: DeltaGenerator
    pieces: list[str] = field(default_factory=list)
    answer: Answer | None = None
    error: Exception | None = None


def _work(conn, target: Target, job: Job, kept: dict[str, Answer], actor: access.Actor) -> None:
    """A worker thread: the core alone (it checks the actor and stores the answer before returning), no
    Streamlit call."""
    try:
        job.answer = ask.ask(conn, target, job.what, actor, on_text=job.pieces.append)
        kept[job.key] = job.answer
    except Exception as exc:  # noqa: BLE001 - shown in the job's own place by the script's thread
        job.error = exc


def ask_together(conn, target: Target, jobs: list[Job], actor: access.Actor) -> None:
    """Ask every job at once, one thread each, each streaming into its own place, so two models take
    as long as the slower one, not the sum. Only the script's thread draws (TECH-NOTES: no `st.*` from a
    worker): it shows each job's text as it grows until every worker is done. Each answer is stored by
    the core with its own record and kept for this session as soon as it arrives, so a click that cuts
    this run short loses none; a failure of one job is shown in its place and leaves the others."""
    kept = st.session_state.setdefault(_ANSWERS, {})
    for job in jobs:
        st.session_state.setdefault(_ASKED, {})[job.key] = job.what
    boxes = [job.place.empty() for job in jobs]
    workers = [threading.Thread(target=_work, args=(conn, target, job, kept, actor), daemon=True) for job in jobs]
    for worker in workers:
        worker.start()
    shown = [0] * len(jobs)
    while any(worker.is_alive() for worker in workers):
        for index, (job, box) in enumerate(zip(jobs, boxes, strict=True)):
            if len(job.pieces) != shown[index]:
                shown[index] = len(job.pieces)
                box.text("".join(job.pieces))
        time.sleep(STREAM_REFRESH_S)
    for job, box in zip(jobs, boxes, strict=True):
        box.empty()
        if job.error is not None:
            with job.place:
                _failed(job.error)


def _failed(error: Exception) -> None:
    """A provider's failure in words (what to do included); anything else as the app's error box."""
    if isinstance(error, providers.ProviderError):
        hint = "\n\n**What to do:** " + md_with_code(error.hint) if error.hint else ""
        st.error(md_with_code(error.message) + hint)
    else:
        shell.show_error(error)


def last_answer(key: str) -> Answer | None:
    """The answer shown for this target in an earlier run of this session."""
    return st.session_state.get(_ANSWERS, {}).get(key)


def show_answer(answer: Answer, key: str, buying: bool = False) -> None:
    """The parsed label, the rewrite's diff and ARM signals, the explanation, and the provenance."""
    origin = "from cache (no call made)" if answer.cached else "new answer"
    st.caption(md_escape(f"{answer.source} · {origin}"))
    if answer.status != "ok":
        st.warning(md_escape(f"{answer.status.replace('_', ' ')}: {answer.failure}. Not stored as a label."))
    elif answer.label:
        st.markdown(f"**Label:** {md_escape(answer.label)} (answer: {md_escape(answer.raw_label)})")
    if answer.votes:
        st.caption(md_escape(f"Draws: {', '.join(answer.votes)}; the label is their majority."))
    note = methods.METHODS[answer.method].note if answer.method in methods.METHODS else ""
    if note and answer.label:
        st.caption(md_escape(note))
    if answer.rewrite is not None and answer.status == "ok":
        highlight.show(f'<div class="fl-diff">{diff_html(answer.diff)}</div>')
        _rewrite_metrics(answer)
    if answer.explanation:
        st.caption("Explanation")
        st.text(answer.explanation)
    if answer.rewrite is not None and answer.status == "ok":
        _points(answer, key, buying)
    if answer.items and answer.rewrite is None:
        st.caption(md_escape(ITEMS.get(answer.method, "Items").format(source=answer.source)))
        st.text("\n".join(f"{n}. {item}" for n, item in enumerate(answer.items, 1)))
    tokens = (
        "tokens unknown"
        if answer.input_tokens is None
        else f"{answer.input_tokens:,} in / {answer.output_tokens:,} out"
    )
    latency = f" · {answer.latency_ms:,.0f} ms" if answer.latency_ms is not None and not answer.cached else ""
    st.caption(
        md_escape(f"{tokens} · {costs.describe_cost(answer.cost)}{latency} · prompts {', '.join(answer.prompts)}")
    )
    with st.expander("Raw output"):
        st.text(answer.raw_output)


def _rewrite_metrics(answer: Answer) -> None:
    """ARM's signals: r ≠ s, the edit distance on the paper's Table 3 scale beside the word count, |E|."""
    cols = st.columns(4)
    cols[0].metric("Rewritten (r ≠ s)", "yes" if answer.rewritten else "no")
    cols[1].metric(
        "Edit distance (0–1)",
        f"{answer.normalized_edit_distance:.2f}",
        help="ARM Table 3's scale: word edits divided by the longer word list. The paper does not define its "
        "normalisation; this standard one is ours.",
    )
    cols[2].metric("Word edits", answer.edit_distance, help="Stemmed NLTK word tokens changed (Levenshtein).")
    points, words, why = points_figure(answer)
    cols[3].metric("Explanation points |E|", points, words, delta_color="off", delta_arrow="off", help=why)


POINTS_FAILURES = {"parse_failure": "not parsed", "refused": "refused", "empty": "empty answer"}
"""How a failed split of the explanation into points reads in the |E| figure, by the call's status."""


def points_figure(answer: Answer) -> tuple[int | str, str | None, str]:
    """|E| as the metric shows it: a count, or a dash with why there is none in a word or two beneath it
    (never a bare '?'), and what it means."""
    if answer.points is not None:
        return len(answer.points), None, "ARM A.3: the explanation split into points, one per change the model made."
    if not answer.rewritten:
        return "–", "r = s", "The model repeated the sentence, so ARM has no points to mark."
    if answer.points_failure:
        status = answer.points_failure.split(":", 1)[0]
        return "–", POINTS_FAILURES.get(status, "failed"), f"The split into points failed: {answer.points_failure}."
    return "–", "no explanation", "The model gave no explanation beside its rewrite, so there is nothing to split."


def _points(answer: Answer, key: str, buying: bool) -> None:
    """ARM A.3's explanation points, or why there are none; a failed split offers to ask again to whom
    may buy a new answer."""
    if not answer.rewritten:
        st.caption("No explanation points: r = s (the model repeated it unchanged), so ARM has nothing to mark.")
    elif answer.points is not None:
        st.caption("Explanation points (ARM A.3)")
        st.text("\n".join(f"• {point}" for point in answer.points))
    elif answer.points_failure:
        st.warning(
            md_escape(
                f"Explanation points (ARM A.3) failed: {answer.points_failure}. The rewrite is stored and counts; "
                "an ARM preference session has no points to mark for it until they are asked again."
            )
        )
        if not buying:
            return
        st.button(
            "Ask for the points again",
            key=f"{key}.points_again",
            icon=":material/replay:",
            help="A new call that splits the same explanation into points; the rewrite stays as it is.",
        )
    else:
        st.caption("No explanation points: the model gave no explanation beside its rewrite.")


def may_buy(actor: access.Actor) -> bool:
    """Whether to offer a new answer (the core checks the ask itself)."""
    return access.allowed(actor, "ask_model", cached=False)


def replay_only(conn, target: Target, actor: access.Actor) -> None:
    """Why this actor replays stored answers only, and which are stored about the target."""
    why = (
        "This is a public demo: it replays stored answers, and asks no model."
        if actor.mode == "demo"
        else f"You replay stored answers: a new answer is a paid call, open to runners and admins (you are a {actor.role})."
    )
    with conn.cursor() as cur:
        stored = usage.stored_requests(cur, target.dataset, target.target_id) if target.dataset else []
    listed = "; ".join(stored) if stored else "none about this unit"
    st.caption(md_escape(f"{why} Stored: {listed}."))


def panel(
    conn, target: Target, key: str, actor: access.Actor, actions: tuple[str, ...] = methods.ACTIONS
) -> Answer | None:
    """The whole 'Ask a model' block for one target: controls, Ask button, and the answer. Returns the
    answer asked in this run (None when nothing was asked, or the call failed). Someone who may not buy
    answers gets "Show stored answer" instead, and the list of what is stored."""
    chosen = method_controls(target, actions, key)
    provider, model, base_url = provider_controls("llm")
    buying = may_buy(actor)
    if buying:
        fresh = st.checkbox("Fresh sample (ask again even if cached)", key=f"{key}.fresh")
    else:
        fresh = False
        replay_only(conn, target, actor)
    answer_key = f"{key}:{target.dataset}:{target.target_id}"
    what = None
    label = "Ask" if buying else "Show stored answer"
    if chosen is not None and st.button(label, key=f"{key}.ask", type="primary", disabled=not model):
        method, variant, evidence = chosen
        what = ask.Ask(method.name, provider, model, variant, evidence, base_url=base_url, fresh=fresh)
    return answer_area(conn, target, what, answer_key, actor)


def points_again(key: str) -> ask.Ask | None:
    """The shown rewrite's request with its explanation points asked anew, when its button was clicked."""
    asked = st.session_state.get(_ASKED, {}).get(key)
    if asked is not None and st.session_state.get(f"{key}.points_again"):
        return dataclasses.replace(asked, fresh=False, fresh_points=True)
    return None


def answer_area(conn, target: Target, what: ask.Ask | None, key: str, actor: access.Actor) -> Answer | None:
    """Ask now when `what` is given (the button was clicked), or ask the shown rewrite's explanation points
    again (its button was clicked), then show the latest answer kept under `key`; returns the answer
    asked in this run, if any."""
    what = what or points_again(key)
    job = Job(what, key, st.container()) if what is not None else None
    if job is not None:
        ask_together(conn, target, [job], actor)
    answer = last_answer(key)
    if answer is not None:
        show_answer(answer, key, may_buy(actor))
    return job.answer if job is not None else None
