"""What a run will cost before it starts: calls, input and output tokens, dollars and time.

Each unit's prompts are rendered as the run will send them (evidence included) and counted by
`faithlens.llm.likely`. Units whose answers are already stored are free. Every assumption is named in
`notes`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import duckdb

from faithlens import access, store
from faithlens.errors import FaithLensError
from faithlens.llm import ask, costs, likely, targets
from faithlens.llm.answers import Spend
from faithlens.llm.runs.spec import RunSpec


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
    """With a budget the estimate exceeds (the run's or the person's): about how many items it covers
    before the run stops."""
    notes: tuple[str, ...]
    spending: access.Spending
    """What the person who would start the run has spent, beside their budget (`left_usd`)."""


def estimate(
    conn: duckdb.DuckDBPyConnection,
    spec: RunSpec,
    units: list[str],
    actor: access.Actor,
    prices: dict[str, costs.Price] | None = None,
) -> Estimate:
    """The run's calls, tokens, cost and time, rendering every unit's prompts (no call is made), and
    what is left of the budget of `actor`, who would start it."""
    prices = prices if prices is not None else costs.load_prices()
    with conn.cursor() as cur:
        spending = access.spending(conn, store.data_version(cur), actor)
        calibration = likely.calibrate(cur, spec.provider, spec.model)
        found = targets.resolve_many(cur, spec.dataset, spec.level, units)
    prepared, unfit = [], {}
    for target in found:
        try:
            prepared.append(ask.prepare(conn, target, spec.ask(0), actor, prices=prices))
        except FaithLensError as exc:
            unfit[exc.message] = unfit.get(exc.message, 0) + 1
    with conn.cursor() as cur:
        stored = likely.stored_samples(cur, {r.key for p in prepared for r in p.requests})
    items = [
        likely.item_cost(p, repeat, stored, calibration, spec.batch) for p in prepared for repeat in range(spec.repeats)
    ]
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
    affordable = _affordable(spec, spending, cost, len(items), len(to_call), notes)
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
        spending=spending,
    )


def _affordable(
    spec: RunSpec, spending: access.Spending, cost: float | None, items: int, to_call: int, notes: list[str]
) -> int | None:
    """About how many items the smaller of the run's budget and the person's left covers (None: all),
    said in `notes`."""
    left = spending.left_usd()
    if left is not None:
        notes.append(f"your budget: {spending.describe_left()}")
    limits = [(spec.budget, f"the run's budget (${spec.budget:g})")] if spec.budget is not None else []
    limits += [(left, f"your budget (${left:.2f} left)")] if left is not None else []
    if not limits or cost is None or not to_call:
        return None
    limit, words = min(limits, key=lambda pair: pair[0])
    if cost <= limit:
        return None
    affordable = items - to_call + int(limit / (cost / to_call))
    notes.append(f"{words} covers about {affordable:,} of {items:,} items; the run stops there")
    return affordable
