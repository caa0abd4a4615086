"""Ask a model about one target with a paper's prompt: from the cache when the same request was
answered before, else by streaming a call; store the answer, and its label event when it parsed.

One request is one prompt file rendered for one target; a method may send several (StorySumm's two
inconsistency prompts, ARM's rewrite then its explanation split into points).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from faithlens.errors import FaithLensError
from faithlens.llm import costs, evidence, methods, prompts, providers, records
from faithlens.llm.answers import Answer, combine
from faithlens.llm.interpret import interpret
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


@dataclass(frozen=True)
class _Asking:
    """One `ask` in progress: where answers are stored, about what, and where calls go."""

    conn: duckdb.DuckDBPyConnection
    target: Target
    what: Ask
    endpoint: providers.Endpoint
    on_text: Callable[[str], None] | None
    prices: dict[str, costs.Price]


@dataclass(frozen=True)
class Request:
    """One rendered prompt, ready to send or to find in the cache."""

    template: prompts.Template
    system: str | None
    turns: tuple[str, ...]
    parameters: dict
    key: str
    source: str


def ask(
    conn: duckdb.DuckDBPyConnection,
    target: Target,
    what: Ask,
    on_text: Callable[[str], None] | None = None,
    prices: dict[str, costs.Price] | None = None,
) -> Answer:
    """Answer `what` about `target`, storing every answer before returning it."""
    method = methods.method(what.method)
    if target.level not in method.levels:
        raise FaithLensError(
            f"{method.name} judges {' or '.join(method.levels)} units, not a {target.level}",
            "pick a unit of that kind",
        )
    if not method.evidence:
        what = dataclasses.replace(what, evidence="none")
    endpoint = providers.Endpoint.resolve(what.provider, what.base_url)
    asking = _Asking(conn, target, what, endpoint, on_text, prices if prices is not None else costs.load_prices())
    variant = what.variant if what.variant is not None else method.default_variant(what.provider)
    slots = _slots(target, what)
    source = methods.source_name(method.name, variant, what.evidence if method.evidence else None, what.model)
    requests = [_request(asking, name, slots, source) for name in method.template_names(variant, target.level)]
    answer = combine(method.name, [_answer(asking, request) for request in requests]).with_original(target.text)
    if method.action == "rewrite" and answer.status == "ok" and answer.explanation:
        explained = {**slots, "explanation": answer.explanation}
        points = _answer(asking, _request(asking, methods.POINTS_PROMPT, explained, source), label=False)
        answer = answer.with_points(points)
    return answer


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
    return slots


def _request(asking: _Asking, name: str, slots: dict[str, str], source: str) -> Request:
    """The prompt file rendered for the target, with the key that finds its earlier answers."""
    template = prompts.load(name)
    if "story" in template.slots() and "story" not in slots:
        raise FaithLensError(
            f"{template.name} needs the source text, which this dataset lacks: "
            f"{asking.target.document_note or 'no text'}",
            "attach the source texts (see the README) or pick another method",
        )
    system, turns = template.render(**{slot: slots[slot] for slot in template.slots()})
    parameters = {"temperature": template.temperature, "max_tokens": template.max_tokens}
    if "evidence" in template.slots():
        what = asking.what
        parameters |= {"evidence": what.evidence} | ({"k": what.k} if what.evidence == "bm25" else {})
    identity = {
        "provider": asking.endpoint.provider,
        "base_url": asking.endpoint.base_url,
        "model": asking.what.model,
        "prompt": template.name,
        "version": template.version,
        "parameters": parameters,
        "system": system,
        "turns": turns,
    }
    return Request(template, system, turns, parameters, records.request_key(identity), source)


def _answer(asking: _Asking, request: Request, label: bool = True) -> records.Call:
    """The stored answer to `request`: cached unless a fresh sample is asked for, else called and saved."""
    target = asking.target
    with asking.conn.cursor() as cur:
        cached = None if asking.what.fresh else records.latest(cur, request.key)
        if cached is not None:
            cached = dataclasses.replace(cached, dataset=target.dataset, level=target.level, target_id=target.target_id)
            event = interpret(cached, target) if label else None
            if event is not None and target.dataset is not None and not records.has_label(cur, cached, event):
                records.attach(asking.conn, cached, event, _description(request))
            return dataclasses.replace(cached, parsed={**cached.parsed, "cached": True})
        sample = records.next_sample(cur, request.key)
    call = _call(asking, request, sample)
    event = interpret(call, target) if label else None
    call_id = records.save(asking.conn, call, event, _description(request))
    return dataclasses.replace(call, call_id=call_id)


def _call(asking: _Asking, request: Request, sample: int) -> records.Call:
    """Send the turns one by one (CoT's second turn follows the first reply), then parse strictly."""
    template, model = request.template, asking.what.model
    messages, replies, tokens_in, tokens_out, latency = [], [], 0, 0, 0.0
    usage_known, refused = True, False
    for turn in request.turns:
        messages.append({"role": "user", "content": turn})
        if replies and asking.on_text:
            asking.on_text("\n\n")
        done = providers.complete(
            asking.endpoint, model, request.system, messages, template.temperature, template.max_tokens, asking.on_text
        )
        replies.append(done.text)
        messages.append({"role": "assistant", "content": done.text})
        usage_known = usage_known and done.input_tokens is not None and done.output_tokens is not None
        tokens_in, tokens_out = tokens_in + (done.input_tokens or 0), tokens_out + (done.output_tokens or 0)
        latency += done.latency_ms
        if done.refused or not done.text.strip():
            refused = done.refused
            break
    parsed = parse(template.answer, replies)
    answered = bool(replies[-1].strip())
    refused = refused or (parsed.refused and answered)
    status = "refused" if refused else "empty" if not answered else "ok" if parsed.ok else "parse_failure"
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
        input_tokens=tokens_in if usage_known else None,
        output_tokens=tokens_out if usage_known else None,
        cost_usd=costs.cost_usd(model, tokens_in, tokens_out, asking.prices) if usage_known else None,
        latency_ms=latency,
    )


def _description(request: Request) -> str:
    template = request.template
    wording = "our wording" if template.ours else f"{template.paper}, {template.where}"
    return f"{template.method} ({wording}), prompt {template.name}@{template.version}"
