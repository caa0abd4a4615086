"""A run through the providers' batch APIs (OpenAI Batch, Anthropic Message Batches), at batch prices.

The requests still missing from the LLM cache are submitted as batch lines whose custom id names
the request key and sample; each submitted batch id is recorded before polling, so a restart polls
it again instead of buying it twice. Collected answers go through the same parse-and-store path as
a direct call; a line that errored leaves its item failed with the provider's reason (a resume or a
retry submits it again). Cancel asks the provider to cancel and keeps what had come back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from faithlens import config
from faithlens.errors import FaithLensError
from faithlens.llm import ask, likely, providers, records
from faithlens.llm.answers import Spend
from faithlens.llm.costs import describe_cost
from faithlens.llm.runs import batch_wire, log
from faithlens.llm.runs.log import ItemOutcome

if TYPE_CHECKING:
    from faithlens.llm.runs.engine import Item, Runner

MAX_LINES = 10_000
"""Lines per submitted batch (OpenAI takes 50k, Anthropic 100k): smaller batches come back sooner."""


@dataclass(frozen=True)
class Line:
    """One request of one item, as a batch line."""

    item: Item
    prepared: ask.Prepared
    request: ask.Request
    sample: int

    @property
    def custom_id(self) -> str:
        return f"{self.request.key[:48]}-{self.sample}"


def execute(runner: Runner, pending: list[Item]) -> None:
    """Collect this run's open batches, submit what is still missing, poll, collect, record each item."""
    prepared = _prepare(runner, pending)
    lines = {line.custom_id: line for line in _lines(prepared)}
    bought: dict[str, records.Call] = {}
    errors: dict[str, str] = {}
    with runner.conn.cursor() as cur:
        open_ids = log.open_batches(cur, runner.run.run_id)
    for batch_id in open_ids:
        _collect(runner, batch_id, lines, bought, errors)
    missing = _affordable(runner, _missing(runner, lines))
    for at in range(0, len(missing), MAX_LINES):
        if runner.stopping():
            break
        batch_id = _submit(runner, missing[at : at + MAX_LINES])
        if batch_id is not None:
            _collect(runner, batch_id, lines, bought, errors)
    for item, ready in prepared:
        outcome = _outcome(runner, item, ready, bought, errors)
        if outcome is not None:
            runner.finish(outcome)


def _prepare(runner: Runner, pending: list[Item]) -> list[tuple[Item, ask.Prepared | str]]:
    """Each item's requests with the sample it fills (a retry's new sample number), or why it cannot be asked."""
    out: list[tuple[Item, ask.Prepared | str]] = []
    for item in pending:
        what = runner.run.spec.ask(item.repeat)
        try:
            if item.retry:
                first = ask.prepare(runner.conn, item.target, what, runner.actor, prices=runner.prices).requests[0]
                with runner.conn.cursor() as cur:
                    what = replace(what, sample=records.next_sample(cur, first.key))
            ready = ask.prepare(runner.conn, item.target, what, runner.actor, prices=runner.prices, checked=True)
            out.append((item, ready))
        except FaithLensError as exc:
            out.append((item, exc.message))
    return out


def _lines(prepared: list[tuple[Item, ask.Prepared | str]]) -> Iterator[Line]:
    for item, ready in prepared:
        if isinstance(ready, ask.Prepared):
            for request in ready.requests:
                yield Line(item, ready, request, ready.asking.what.sample)


def _missing(runner: Runner, lines: dict[str, Line]) -> list[Line]:
    stored = _stored(runner, lines.values())
    return [line for line in lines.values() if (line.request.key, line.sample) not in stored]


def _affordable(runner: Runner, missing: list[Line]) -> list[Line]:
    """The lines the budgets cover (the run's and its starter's), in order; the run stops (state 'budget')
    before the first they do not."""
    limits = runner.limits()
    if not limits:
        return missing
    total = 0.0
    for at, line in enumerate(missing):
        cost = likely.item_cost(line.prepared, line.sample, set(), runner.calibration, batch=True).cost
        share = (cost or 0.0) / len(line.prepared.requests)
        for limit, words, before in limits:
            if before + total + share > limit:
                runner.stop(
                    "budget",
                    f"stopped before passing {words}: {at:,} of {len(missing):,} batch lines "
                    f"(about {describe_cost(before + total)} with what was spent) fit; the rest were not submitted",
                )
                return missing[:at]
        total += share
    return missing


def _stored(runner: Runner, lines: Iterable[Line]) -> set[tuple[str, int]]:
    with runner.conn.cursor() as cur:
        return likely.stored_samples(cur, {line.request.key for line in lines})


def _outcome(
    runner: Runner,
    item: Item,
    ready: ask.Prepared | str,
    bought: dict[str, records.Call],
    errors: dict[str, str],
) -> ItemOutcome | None:
    """The item's outcome once its lines are in; None when a cancel left it unanswered (resume asks again)."""
    unit = item.target.target_id
    if isinstance(ready, str):
        return ItemOutcome(unit, item.repeat, "failed", ready)
    own = [Line(item, ready, request, ready.asking.what.sample) for request in ready.requests]
    failed = [errors[line.custom_id] for line in own if line.custom_id in errors]
    if failed:
        return ItemOutcome(unit, item.repeat, "failed", failed[0])
    stored = _stored(runner, own)
    if not all((line.request.key, line.sample) in stored for line in own):
        return None if runner.stopping() else ItemOutcome(unit, item.repeat, "failed", "no answer in the batch results")
    paid = [bought[line.custom_id] for line in own if line.custom_id in bought]
    spent = Spend()
    for call in paid:
        spent = spent.plus(call)
    # Every answer is stored by now, so `answer` makes no call; what this batch bought is `paid`.
    answer = replace(ask.answer(ready), cached=not paid, spent=spent)
    return ItemOutcome.of_answer(unit, item.repeat, answer)


def _submit(runner: Runner, chunk: list[Line]) -> str | None:
    """Send the lines as one batch and record its id; a refused submission fails its items."""
    spec = runner.run.spec
    endpoint = chunk[0].prepared.asking.endpoint
    try:
        client = providers.client(endpoint)
        if spec.provider == "openai":
            body = "".join(json.dumps(_openai_line(spec.model, line)) + "\n" for line in chunk).encode()
            uploaded = client.files.create(file=("faithlens-run.jsonl", body), purpose="batch")
            batch_id = client.batches.create(
                input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
            ).id
        else:
            requests = [{"custom_id": line.custom_id, "params": _anthropic_params(spec.model, line)} for line in chunk]
            batch_id = client.messages.batches.create(requests=requests).id
    except providers.call_errors(spec.provider) as exc:
        error = providers.as_provider_error(endpoint, exc)
        for line in chunk:
            runner.finish(ItemOutcome(line.item.target.target_id, line.item.repeat, "failed", error.message))
        if error.kind in ("no_key", "auth", "bad_request"):
            runner.stop("stopped", error.message)
        return None
    log.record(runner.conn, runner.run.run_id, "batch", "submitted", batch_id)
    return batch_id


def _openai_line(model: str, line: Line) -> dict:
    request = line.request
    messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
        {"role": "user", "content": request.turns[0]}
    ]
    body = {"model": model, "messages": messages, "temperature": request.template.temperature}
    body["max_tokens"] = request.template.max_tokens
    return {"custom_id": line.custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}


def _anthropic_params(model: str, line: Line) -> dict:
    request = line.request
    params = {"model": model, "max_tokens": request.template.max_tokens, "temperature": request.template.temperature}
    params["messages"] = [{"role": "user", "content": request.turns[0]}]
    return params | ({"system": request.system} if request.system else {})


def _collect(
    runner: Runner, batch_id: str, lines: dict[str, Line], bought: dict[str, records.Call], errors: dict[str, str]
) -> None:
    """Poll until the batch ends (cancelling it at the provider if the user cancels), then store its answers."""
    spec = runner.run.spec
    endpoint = providers.Endpoint.resolve(spec.provider, spec.base_url)
    poll = float(config.get("batch_poll"))
    try:
        client = providers.client(endpoint)
        cancelled = False
        while True:
            ended, words = batch_wire.status(client, spec.provider, batch_id)
            runner.set_batch(words)
            if ended:
                break
            if runner.cancelled.is_set() and not cancelled:
                batch_wire.cancel(client, spec.provider, batch_id)
                cancelled = True
            time.sleep(poll) if cancelled else runner.cancelled.wait(poll)
        results = batch_wire.results(client, spec.provider, batch_id)
    except providers.call_errors(spec.provider) as exc:
        error = providers.as_provider_error(endpoint, exc)
        runner.stop("stopped", f"lost contact with batch {batch_id}: {error.message}; resume polls it again")
        return
    for result in results:
        line = lines.get(result.custom_id)
        if line is None:
            continue
        if result.received is None:
            errors[result.custom_id] = result.error or "no answer"
            continue
        call = ask.finished(line.prepared.asking, line.request, line.sample, result.received)
        bought[result.custom_id] = ask.store_call(
            line.prepared.asking, line.request, call, line.prepared.asking.what.labels
        )
    runner.set_batch(None)
    log.record(runner.conn, runner.run.run_id, "batch", "collected", batch_id)
