"""What a run will cost before it starts: calls, input and output tokens, dollars and time.

Input tokens come from the prompts the run will really send (rendered per unit, evidence included),
at 4 characters per token unless earlier answers of this provider and model show their own ratio;
output tokens are the mean of earlier answers to the same prompt file, else its max_tokens (an upper
bound). Units whose answers are already stored are free. Every assumption is named in `notes`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb

from faithlens.errors import FaithLensError
from faithlens.llm import ask, costs, methods, prompts, targets
from faithlens.llm.answers import Spend
from faithlens.llm.runs.spec import RunSpec

CHARS_PER_TOKEN = 4.0
"""OpenAI's rule of thumb for English text, used until stored answers give this model's own ratio."""
DEFAULT_SECONDS_PER_CALL = 2.0


@dataclass(frozen=True)
class Calibration:
    tokens_per_char: float
    output_tokens: dict[str, float]
    """Prompt file -> mean output tokens of its parsed answers (this model's, else any model's)."""
    seconds_per_call: float
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Estimate:
    units: int
    items: int
    cached_items: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    seconds: float | None
    unfit_items: int
    """Items that will fail without a call (e.g. a claim without the evidence setting's quotes)."""
    affordable_items: int | None
    """With a budget the estimate exceeds: about how many items it covers before the run stops."""
    notes: tuple[str, ...]


def calibrate(cur: duckdb.DuckDBPyConnection, spec: RunSpec) -> Calibration:
    """Ratios from this database's stored answers, or the defaults, each said in words."""
    notes = []
    ratio = cur.execute(
        """
        SELECT sum(input_tokens) / sum(length(request::VARCHAR)), count(*) FROM llm_call
        WHERE provider = ? AND model = ? AND input_tokens IS NOT NULL AND json_array_length(request->'turns') = 1
        """,
        [spec.provider, spec.model],
    ).fetchone()
    if ratio[1]:
        tokens_per_char = float(ratio[0])
        notes.append(
            f"input tokens at {1 / tokens_per_char:.2f} characters per token, from {ratio[1]:,} stored answers"
        )
    else:
        tokens_per_char = 1 / CHARS_PER_TOKEN
        notes.append(f"input tokens at {CHARS_PER_TOKEN:g} characters per token (no stored answers of {spec.model})")
    rows = cur.execute(
        """
        SELECT prompt_name, coalesce(avg(output_tokens) FILTER (model = ?), avg(output_tokens)) FROM llm_call
        WHERE status = 'ok' AND output_tokens IS NOT NULL GROUP BY prompt_name
        """,
        [spec.model],
    ).fetchall()
    latency = cur.execute(
        "SELECT avg(latency_ms / len(replies)) / 1000, count(*) FROM llm_call WHERE provider = ? AND model = ? "
        "AND latency_ms IS NOT NULL",
        [spec.provider, spec.model],
    ).fetchone()
    if latency[1]:
        seconds = float(latency[0])
        notes.append(f"{seconds:.2f} s per call, the mean of {latency[1]:,} stored answers of {spec.model}")
    else:
        seconds = DEFAULT_SECONDS_PER_CALL
        notes.append(f"{seconds:g} s per call (no stored answers of {spec.model} to time)")
    return Calibration(tokens_per_char, {name: float(mean) for name, mean in rows}, seconds, tuple(notes))


def request_chars(request: ask.Request) -> int:
    """Characters of a request as `llm_call.request` stores it: what the calibration ratio divides."""
    return len(json.dumps({"system": request.system, "turns": list(request.turns)}))


def stored_samples(cur: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> set[tuple[str, int]]:
    """(request key, sample) of every stored answer to these requests."""
    rows = cur.execute(
        "SELECT request_key, sample FROM llm_call WHERE request_key IN (SELECT unnest(?::VARCHAR[]))", [list(keys)]
    ).fetchall()
    return set(rows)


def item_cost(
    prepared: ask.Prepared,
    repeat: int,
    stored: set[tuple[str, int]],
    calibration: Calibration,
    batch: bool = False,
) -> Spend:
    """What answering one (unit, repeat) would likely cost; no calls when every request has its stored answer."""
    requests = prepared.requests
    if all((r.key, repeat) in stored for r in requests):
        return Spend()
    calls = input_tokens = output_tokens = 0
    for request in requests:
        turns = len(request.turns)
        output = calibration.output_tokens.get(request.template.name, request.template.max_tokens * turns)
        prompt = request_chars(request) * calibration.tokens_per_char
        calls += turns
        input_tokens += math.ceil(prompt * turns + output * (turns - 1) / 2)
        output_tokens += math.ceil(output)
    if prepared.method.action == "rewrite":
        points = prompts.load(methods.POINTS_PROMPT)
        written = sum(len(text) for text in (points.system or "", *points.turns))
        calls += 1
        input_tokens += math.ceil(written * calibration.tokens_per_char) + output_tokens
        output_tokens += math.ceil(calibration.output_tokens.get(points.name, points.max_tokens))
    asking = prepared.asking
    cost = costs.cost_usd(asking.what.model, input_tokens, output_tokens, asking.prices, batch=batch)
    return Spend(calls, input_tokens, output_tokens, cost)


def estimate(
    conn: duckdb.DuckDBPyConnection, spec: RunSpec, units: list[str], prices: dict[str, costs.Price] | None = None
) -> Estimate:
    """The run's calls, tokens, cost and time, rendering every unit's prompts (no call is made)."""
    prices = prices if prices is not None else costs.load_prices()
    with conn.cursor() as cur:
        calibration = calibrate(cur, spec)
        found = targets.resolve_many(cur, spec.dataset, spec.level, units)
    prepared, unfit = [], {}
    for target in found:
        try:
            prepared.append(ask.prepare(conn, target, spec.ask(0), prices=prices))
        except FaithLensError as exc:
            unfit[exc.message] = unfit.get(exc.message, 0) + 1
    with conn.cursor() as cur:
        stored = stored_samples(cur, {r.key for p in prepared for r in p.requests})
    items = [item_cost(p, repeat, stored, calibration, spec.batch) for p in prepared for repeat in range(spec.repeats)]
    to_call = [i for i in items if i.calls]
    total = sum(to_call, Spend())
    cost = total.cost
    notes = list(calibration.notes)
    if any(request.template.name not in calibration.output_tokens for p in prepared[:1] for request in p.requests):
        notes.append("output tokens at the prompt's max_tokens, an upper bound, until stored answers give a mean")
    notes += [f"{n:,} units will fail without a call: {why}" for why, n in unfit.items()]
    if any(p.method.follow_ups() for p in prepared[:1]):
        notes.append(
            "each rewrite is counted with its explanation-points call (ARM A.3), which is not made when the model "
            "repeats the sentence (r = s): an upper bound"
        )
    if cost is None:
        notes.append(f"{spec.model} has no price in the price table: cost unknown")
    affordable = None
    if spec.budget is not None and cost is not None and cost > spec.budget:
        affordable = len(items) - len(to_call) + int(spec.budget / (cost / len(to_call)))
        notes.append(
            f"the budget (${spec.budget:g}) covers about {affordable:,} of {len(items):,} items; the run stops there"
        )
    if spec.batch:
        seconds = None
        notes.append("batch prices; a batch finishes within the provider's 24 h window, often much sooner")
    else:
        per_item = total.calls / len(to_call) if to_call else 0
        seconds = math.ceil(len(to_call) / spec.concurrency) * per_item * calibration.seconds_per_call
    return Estimate(
        units=len(units),
        items=len(units) * spec.repeats,
        cached_items=len(items) - len(to_call),
        calls=total.calls,
        input_tokens=total.input_tokens,
        output_tokens=total.output_tokens,
        cost=cost,
        seconds=seconds,
        unfit_items=(len(units) - len(prepared)) * spec.repeats,
        affordable_items=affordable,
        notes=tuple(notes),
    )
