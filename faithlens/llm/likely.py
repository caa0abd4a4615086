"""What answering a request would likely cost before it is asked: tokens, calls and dollars.

Input tokens come from the prompts really sent, at 4 characters per token unless earlier answers of
this provider and model show their own ratio; output tokens are the mean of earlier answers to the same
prompt file, else its max_tokens (an upper bound). A run's estimate (`runs.estimate`) and its budget,
and an on-demand ask's budget check (`ask.ask`), all count this way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb

from faithlens.llm import costs, methods, prompts
from faithlens.llm.answers import Spend

if TYPE_CHECKING:
    from faithlens.llm.ask import Prepared, Request

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


def calibrate(cur: duckdb.DuckDBPyConnection, provider: str, model: str) -> Calibration:
    """Ratios from this database's stored answers, or the defaults, each said in words."""
    notes = []
    ratio = cur.execute(
        """
        SELECT sum(input_tokens) / sum(length(request::VARCHAR)), count(*) FROM llm_call
        WHERE provider = ? AND model = ? AND input_tokens IS NOT NULL AND json_array_length(request->'turns') = 1
        """,
        [provider, model],
    ).fetchone()
    if ratio[1]:
        tokens_per_char = float(ratio[0])
        notes.append(
            f"input tokens at {1 / tokens_per_char:.2f} characters per token, from {ratio[1]:,} stored answers"
        )
    else:
        tokens_per_char = 1 / CHARS_PER_TOKEN
        notes.append(f"input tokens at {CHARS_PER_TOKEN:g} characters per token (no stored answers of {model})")
    rows = cur.execute(
        """
        SELECT prompt_name, coalesce(avg(output_tokens) FILTER (model = ?), avg(output_tokens)) FROM llm_call
        WHERE status = 'ok' AND output_tokens IS NOT NULL GROUP BY prompt_name
        """,
        [model],
    ).fetchall()
    latency = cur.execute(
        "SELECT avg(latency_ms / len(replies)) / 1000, count(*) FROM llm_call WHERE provider = ? AND model = ? "
        "AND latency_ms IS NOT NULL",
        [provider, model],
    ).fetchone()
    if latency[1]:
        seconds = float(latency[0])
        notes.append(f"{seconds:.2f} s per call, the mean of {latency[1]:,} stored answers of {model}")
    else:
        seconds = DEFAULT_SECONDS_PER_CALL
        notes.append(f"{seconds:g} s per call (no stored answers of {model} to time)")
    return Calibration(tokens_per_char, {name: float(mean) for name, mean in rows}, seconds, tuple(notes))


def request_chars(request: Request) -> int:
    """Characters of a request as `llm_call.request` stores it: what the calibration ratio divides."""
    return len(json.dumps({"system": request.system, "turns": list(request.turns)}))


def stored_samples(cur: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> set[tuple[str, int]]:
    """(request key, sample) of every stored answer to these requests."""
    rows = cur.execute(
        "SELECT request_key, sample FROM llm_call WHERE request_key IN (SELECT unnest(?::VARCHAR[]))", [list(keys)]
    ).fetchall()
    return set(rows)


def item_cost(
    prepared: Prepared,
    repeat: int,
    stored: set[tuple[str, int]],
    calibration: Calibration,
    batch: bool = False,
) -> Spend:
    """What answering one (unit, repeat) would likely cost; no calls when every request has its stored answer."""
    if all((r.key, repeat) in stored for r in prepared.requests):
        return Spend()
    asking = prepared.asking
    rewrite = prepared.method.action == "rewrite"
    return calls_cost(prepared.requests, rewrite, asking.what.model, asking.prices, calibration, batch)


def calls_cost(
    requests: Sequence[Request],
    with_points: bool,
    model: str,
    prices: dict[str, costs.Price],
    calibration: Calibration,
    batch: bool = False,
) -> Spend:
    """What calling `requests` would likely cost, with ARM's explanation-points call (A.3) after a rewrite
    when `with_points` (not made when r = s: an upper bound)."""
    calls = input_tokens = output_tokens = 0
    for request in requests:
        turns = len(request.turns)
        output = calibration.output_tokens.get(request.template.name, request.template.max_tokens * turns)
        prompt = request_chars(request) * calibration.tokens_per_char
        calls += turns
        input_tokens += math.ceil(prompt * turns + output * (turns - 1) / 2)
        output_tokens += math.ceil(output)
    if with_points:
        points = prompts.load(methods.POINTS_PROMPT)
        written = sum(len(text) for text in (points.system or "", *points.turns))
        calls += 1
        input_tokens += math.ceil(written * calibration.tokens_per_char) + output_tokens
        output_tokens += math.ceil(calibration.output_tokens.get(points.name, points.max_tokens))
    cost = costs.cost_usd(model, input_tokens, output_tokens, prices, batch=batch)
    return Spend(calls, input_tokens, output_tokens, cost)
