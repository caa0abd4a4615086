"""Ask a model about one target with a paper's prompt: from the cache when the same request was
answered before, else by streaming a call; store the answer, and its label event when it parsed.

One request is one prompt file rendered for one target; a method may send several (StorySumm's two
inconsistency prompts, ARM's rewrite then its explanation split into points).

Every ask is someone's (`faithlens.access.Actor`): `faithlens.llm.paying` checks a new answer before
any request is made, and it is stored charged to the asker (`llm_call.person`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from faithlens import access
from faithlens.errors import FaithLensError
from faithlens.llm import costs, evidence, methods, paying, prompts, providers, records, retrying, votes
from faithlens.llm.answers import Answer, combine
from faithlens.llm.interpret import interpret
from faithlens.llm.keylocks import KeyLocks
from faithlens.llm.parsing import parse
from faithlens.llm.targets import Target


@dataclass(frozen=True)
class Ask:
    """What the user chose: method, its variant and evidence setting, and where to send it."""

    method: str
    provider: str
    model: str
    variant: str | None = None
    evidence: str = "none"
    k: int = 5
    base_url: str | None = None
    fresh: bool = False
    """Ask again even when cached: the answer is kept as another sample of the same request."""
    sample: int | None = None
    """Use answer number `sample` of each request (a run's repeat): the stored one, else a call stored
    under that number. None: the newest stored answer (or a new sample with `fresh`)."""
    source: str | None = None
    """The label source to feed, instead of the method's `llm/<method>/<model>` name (a run's --source)."""
    labels: bool = True
    """Write label events. A run's later repeats do not, so its source keeps the first repeat's verdicts."""
    fresh_points: bool = False
    """Ask ARM's explanation points again (a new sample) while the rewrite comes from the cache: the
    split failed to parse, and the rewrite the coders see must stay the same."""


@dataclass(frozen=True)
class Asking:
    """One `ask` in progress: where answers are stored, about what, and where calls go."""

    conn: duckdb.DuckDBPyConnection
    target: Target
    what: Ask
    actor: access.Actor
    endpoint: providers.Endpoint
    on_text: Callable[[str], None] | None
    prices: dict[str, costs.Price]
    calls: retrying.Calls | None = None
    """A run's calls: its limit on calls in flight (held while the provider answers, not while storing)
    and its retries of faults. None: one attempt, with the SDK's own retries."""
    checked: bool = False
    """New answers were checked already (`paying.charge`, or the run): else each call is, before it is made."""


@dataclass(frozen=True)
class Prepared:
    """Everything decided before a call: the method, the source it feeds and the rendered requests.

    Runs render these to estimate tokens and cost without calling."""

    asking: Asking
    method: methods.Method
    slots: dict[str, str]
    source: str
    requests: list[Request]


@dataclass(frozen=True)
class Request:
    """One rendered prompt, ready to send or to find in the cache."""

    template: prompts.Template
    system: str | None
    turns: tuple[str, ...]
    parameters: dict
    key: str
    source: str


def prepare(
    conn: duckdb.DuckDBPyConnection,
    target: Target,
    what: Ask,
    actor: access.Actor,
    on_text: Callable[[str], None] | None = None,
    prices: dict[str, costs.Price] | None = None,
    calls: retrying.Calls | None = None,
    checked: bool = False,
) -> Prepared:
    """Check that the method can judge `target` and render its prompts for `actor`; no call is made
    (`checked`: a run that checked `actor` may start it, and keeps to their budget itself)."""
    method = methods.method(what.method)
    if target.level not in method.levels:
        raise FaithLensError(
            f"{method.name} judges {' or '.join(method.levels)} units, not a {target.level}",
            "pick a unit of that kind",
        )
    if not method.evidence:
        what = dataclasses.replace(what, evidence="none")
    endpoint = providers.Endpoint.resolve(what.provider, what.base_url)
    prices = prices if prices is not None else costs.load_prices()
    asking = Asking(conn, target, what, actor, endpoint, on_text, prices, calls, checked)
    variant = method.resolve_variant(what.variant, what.provider)
    slots = _slots(target, what)
    evidence_setting = what.evidence if method.evidence else None
    source = what.source or methods.source_name(method.name, variant, evidence_setting, what.model)
    names = method.template_names(variant, target.level)
    draws = range(method.draws) if method.draws > 1 else (None,)
    requests = [_request(asking, name, slots, source, draw) for name in names for draw in draws]
    return Prepared(asking, method, slots, source, requests)


def ask(
    conn: duckdb.DuckDBPyConnection,
    target: Target,
    what: Ask,
    actor: access.Actor,
    on_text: Callable[[str], None] | None = None,
    prices: dict[str, costs.Price] | None = None,
) -> Answer:
    """Answer `what` about `target` for `actor`, storing every answer before returning it; a new answer
    is refused before any request (PermissionDenied, BudgetExceeded) unless the actor may pay for it."""
    return answer(paying.charge(prepare(conn, target, what, actor, on_text, prices)))


def answer(prepared: Prepared, also: records.AlsoWrite | None = None) -> Answer:
    """The prepared requests' stored answers (called where missing), with ARM's explanation points.

    `also` writes more rows in the transaction that stores a new answer (a run's item event, when
    the item is that one call), so the two are committed together."""
    asking, label = prepared.asking, prepared.asking.what.labels
    calls = [_answer(asking, request, label, also) for request in prepared.requests]
    result = combine(prepared.method.name, calls).with_original(asking.target.text)
    voted = label and asking.actor.mode != "demo" and asking.target.dataset is not None
    if prepared.method.draws > 1 and result.status == "ok" and voted:
        _label_vote(asking, prepared.requests[0], calls, result)
    if prepared.method.action == "rewrite" and result.status == "ok" and result.rewritten and result.explanation:
        points = explanation_points(asking, result.explanation, prepared.source, asking.what.fresh_points)
        result = result.with_points(points)
    return result


def explanation_points(asking: Asking, explanation: str, source: str, fresh: bool = False) -> records.Call:
    """ARM A.3: a rewrite's explanation split into points, a request of its own (cached like any other,
    keyed by the explanation, so another unit with the same explanation shares it). `fresh` asks a new
    sample. Not asked when r = s: ARM has nothing to mark there (the caller checks)."""
    if fresh:
        asking = dataclasses.replace(asking, what=dataclasses.replace(asking.what, fresh=True, sample=None))
    request = _request(asking, methods.POINTS_PROMPT, {"explanation": explanation}, source)
    return _answer(asking, request, label=False)


def ask_points(
    conn: duckdb.DuckDBPyConnection,
    target: Target,
    endpoint: providers.Endpoint,
    model: str,
    explanation: str,
    source: str,
    actor: access.Actor,
) -> records.Call:
    """Ask a stored rewrite's explanation points anew (a new sample of the same request), sent where the
    rewrite was: a coder's "ask again" after the split failed or was never made (paid by `actor`)."""
    what = Ask(methods.POINTS_PROMPT, endpoint.provider, model, base_url=endpoint.base_url, labels=False)
    asking = Asking(conn, target, what, actor, endpoint, None, costs.load_prices())
    return explanation_points(asking, explanation, source, fresh=True)


def _label_vote(asking: Asking, request: Request, calls: list[records.Call], result: Answer) -> None:
    """The majority of a self-consistency vote as the target's label event, once its draws are stored
    (a draw alone is no label); written again only when the target's current label is not this vote."""
    call = votes.vote_call(calls)
    event = records.LabelEvent(result.label, result.raw_label, result.explanation)
    with asking.conn.cursor() as cur:
        if records.has_label(cur, call, event):
            return
    records.attach(asking.conn, call, event, _description(request))


def _slots(target: Target, what: Ask) -> dict[str, str]:
    """Every text a prompt of this method may use; the evidence by the chosen setting."""
    reason = methods.evidence_reason(what.evidence, target)
    if reason:
        raise FaithLensError(f"evidence setting {what.evidence!r} is not available: {reason}", "pick another setting")
    slots = {"summary": target.summary, "sentence": target.text, "claim": target.text, "evidence": ""}
    if target.document:
        slots["story"] = target.document
    if what.evidence == "human":
        slots["evidence"] = "\n\n".join(target.human_evidence)
    elif what.evidence == "document":
        slots["evidence"] = target.document or ""
    elif what.evidence == "bm25":
        slots["evidence"] = evidence.bm25_evidence(target.document or "", target.text, what.k)[0]
    elif what.evidence in methods.RANKED_EVIDENCE:
        slots["evidence"] = evidence.ranked_evidence(target.document or "", target.text, what.k, what.evidence)[0]
    return slots


def _request(asking: Asking, name: str, slots: dict[str, str], source: str, draw: int | None = None) -> Request:
    """The prompt file rendered for the target, with the key that finds its earlier answers; `draw`
    tells a self-consistency vote's draws of the same prompt apart."""
    template = prompts.load(name)
    if "story" in template.slots() and "story" not in slots:
        raise FaithLensError(
            f"{template.name} needs the source text, which this dataset lacks: "
            f"{asking.target.document_note or 'no text'}",
            "attach the source texts (see the README) or pick another method",
        )
    return render(asking.endpoint, asking.what, template, slots, source, draw)


def render(
    endpoint: providers.Endpoint,
    what: Ask,
    template: prompts.Template,
    slots: dict[str, str],
    source: str,
    draw: int | None = None,
) -> Request:
    """One request and its cache key: the identity of what is sent (provider, base URL, model, prompt
    file and version, parameters and the exact texts). Whoever renders the same request finds the same
    answers, whichever unit asked first (`faithlens.llm.points` looks explanation points up this way)."""
    system, turns = template.render(**{slot: slots[slot] for slot in template.slots()})
    parameters = {"temperature": template.temperature, "max_tokens": template.max_tokens}
    if draw is not None:
        parameters[votes.DRAW] = draw
    if "evidence" in template.slots():
        parameters |= methods.evidence_parameters(what.evidence, what.k)
    identity = {
        "provider": endpoint.provider,
        "base_url": endpoint.base_url,
        "model": what.model,
        "prompt": template.name,
        "version": template.version,
        "parameters": parameters,
        "system": system,
        "turns": turns,
    }
    return Request(template, system, turns, parameters, records.request_key(identity), source)


def _answer(
    asking: Asking, request: Request, label: bool = True, also: records.AlsoWrite | None = None
) -> records.Call:
    """The stored answer to `request`: cached unless a fresh sample is asked for, else called and saved.

    The request's key is held meanwhile, so threads of one run never buy the same answer twice."""
    with _KEY_LOCKS.hold(request.key):
        found = _stored(asking, request, label)
        if isinstance(found, records.Call):
            return found
        if not asking.checked:
            paying.pay(asking, [request], with_points=False)
        call = _call(asking, request, found)
        return store_call(asking, request, call, label, also)


def _stored(asking: Asking, request: Request, label: bool) -> records.Call | int:
    """The cached answer (given this target's label event if it lacks one), or the sample number to call."""
    target, what = asking.target, asking.what
    with asking.conn.cursor() as cur:
        if what.sample is not None:
            cached = records.latest(cur, request.key, what.sample)
        else:
            cached = None if what.fresh else records.latest(cur, request.key)
        if cached is None:
            return what.sample if what.sample is not None else records.next_sample(cur, request.key)
        cached = dataclasses.replace(
            cached, dataset=target.dataset, level=target.level, target_id=target.target_id, source=request.source
        )
        event = interpret(cached, target) if label and asking.actor.mode != "demo" else None  # demo: no writes
        if event is not None and target.dataset is not None and not records.has_label(cur, cached, event):
            records.attach(asking.conn, cached, event, _description(request))
    return dataclasses.replace(cached, parsed={**cached.parsed, "cached": True})


def store_call(
    asking: Asking, request: Request, call: records.Call, label: bool = True, also: records.AlsoWrite | None = None
) -> records.Call:
    """Save a finished answer (and its label event when it parsed) before anyone is shown it."""
    event = interpret(call, asking.target) if label else None
    call_id = records.save(asking.conn, call, event, _description(request), also)
    return dataclasses.replace(call, call_id=call_id)


def _call(asking: Asking, request: Request, sample: int) -> records.Call:
    """Send the turns one by one (CoT's second turn follows the first reply), then parse strictly."""
    messages, replies, tokens_in, tokens_out, latency = [], [], 0, 0, 0.0
    usage_known, refused = True, False
    for turn in request.turns:
        messages.append({"role": "user", "content": turn})
        if replies and asking.on_text:
            asking.on_text("\n\n")
        done = _complete(asking, request, messages)
        replies.append(done.text)
        messages.append({"role": "assistant", "content": done.text})
        usage_known = usage_known and done.input_tokens is not None and done.output_tokens is not None
        tokens_in, tokens_out = tokens_in + (done.input_tokens or 0), tokens_out + (done.output_tokens or 0)
        latency += done.latency_ms
        if done.refused or not done.text.strip():
            refused = done.refused
            break
    usage = (tokens_in, tokens_out) if usage_known else None
    return finished(asking, request, sample, Received(replies, usage, refused, latency))


def _complete(asking: Asking, request: Request, messages: list[dict[str, str]]) -> providers.Completion:
    """One reply: a run's call through its retries (the SDK's own off, so each attempt is seen), else
    one call with the SDK's retries."""
    template, what = request.template, asking.what

    def send(retries: int | None = None) -> providers.Completion:
        return providers.complete(
            asking.endpoint,
            what.model,
            request.system,
            messages,
            template.temperature,
            template.max_tokens,
            asking.on_text,
            retries=retries,
        )

    if asking.calls is None:
        return send()
    return retrying.complete(asking.calls, request.key, asking.endpoint, lambda: send(0))


@dataclass(frozen=True)
class Received:
    """What the provider sent back for one request: one reply per turn, usage, a refusal flag."""

    replies: list[str]
    usage: tuple[int, int] | None
    refused: bool
    latency_ms: float | None
    batch: bool = False
    """Answered through a batch API, priced at the batch rate."""


def finished(asking: Asking, request: Request, sample: int, reply: Received) -> records.Call:
    """The record of one answer, parsed strictly: ok, parse_failure, refused or empty."""
    template, model, replies = request.template, asking.what.model, reply.replies
    parsed = parse(template.answer, replies)
    answered = bool(replies and replies[-1].strip())
    refused = reply.refused or (parsed.refused and answered)
    status = "refused" if refused else "empty" if not answered else "ok" if parsed.ok else "parse_failure"
    tokens_in, tokens_out = reply.usage if reply.usage is not None else (None, None)
    return records.Call(
        request_key=request.key,
        sample=sample,
        dataset=asking.target.dataset,
        level=asking.target.level,
        target_id=asking.target.target_id,
        source=request.source,
        provider=asking.endpoint.provider,
        base_url=asking.endpoint.base_url,
        model=model,
        method=template.method,
        prompt_name=template.name,
        prompt_version=template.version,
        parameters=request.parameters,
        request={"system": request.system, "turns": list(request.turns)},
        replies=replies,
        status=status,
        failure=None if status == "ok" else (parsed.failure or status),
        parsed=dataclasses.asdict(parsed),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=costs.cost_usd(model, tokens_in, tokens_out, asking.prices, batch=reply.batch),
        latency_ms=reply.latency_ms,
        person=asking.actor.id,
    )


_KEY_LOCKS = KeyLocks()


def _description(request: Request) -> str:
    template = request.template
    wording = "our wording" if template.ours else f"{template.paper}, {template.where}"
    return f"{template.method} ({wording}), prompt {template.name}@{template.version}"
