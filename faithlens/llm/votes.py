"""Self-consistency (Wang et al., 2022) as ARM's Table 2 runs it (section 4.4): one prompt drawn several
times at its temperature (0.7), and the verdict most draws gave as the label.

Each draw is a request of its own (its parameters carry `draw`: 0, 1, 2), so each is cached, resampled
and batched like any request, and a run's repeat r asks sample r of every draw. The draws write no
label event of their own; `ask.answer` writes the majority's, standing on `vote_call`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from faithlens.llm import records

DRAW = "draw"
"""The request parameter that tells the draws of one vote apart."""


@dataclass(frozen=True)
class Vote:
    """The majority of the draws' verdicts, or why there is none."""

    label: str | None
    raw_label: str | None
    votes: tuple[str, ...]
    """Each draw's own answer (its raw label), in draw order."""
    failure: str | None = None


def majority(calls: Sequence[records.Call]) -> Vote:
    """The verdict more than half of the draws gave. Every draw must have parsed (the caller checks);
    a tie (an even number of draws) is no verdict."""
    votes = tuple(str(call.parsed.get("raw_label")) for call in calls)
    (top, count), *_ = Counter(call.parsed.get("label") for call in calls).most_common()
    if 2 * count <= len(calls):
        return Vote(None, None, votes, f"no majority among {len(calls)} draws: {', '.join(votes)}")
    raw = next(call.parsed.get("raw_label") for call in calls if call.parsed.get("label") == top)
    return Vote(top, raw, votes)


def explanation(calls: Sequence[records.Call]) -> str | None:
    """Each draw's reasoning under its number and answer, or None when no draw gave any."""
    parts = [
        f"Draw {number} ({call.parsed.get('raw_label')}): {call.parsed['explanation']}"
        for number, call in enumerate(calls, 1)
        if call.parsed.get("explanation")
    ]
    return "\n\n".join(parts) or None


def vote_call(calls: Sequence[records.Call]) -> records.Call:
    """One record standing for the draws, for the majority's label event: every draw's replies, their
    summed usage and cost (unknown when one is), and the request's parameters with the number of draws."""
    first = calls[0]
    parameters = {key: value for key, value in first.parameters.items() if key != DRAW}

    def total(values: list[float | None]) -> float | None:
        return None if any(value is None for value in values) else sum(values)

    return dataclasses.replace(
        first,
        replies=[reply for call in calls for reply in call.replies],
        parameters={**parameters, "draws": len(calls)},
        input_tokens=total([call.input_tokens for call in calls]),
        output_tokens=total([call.output_tokens for call in calls]),
        cost_usd=total([call.cost_usd for call in calls]),
        latency_ms=total([call.latency_ms for call in calls]),
        call_id=None,
    )
