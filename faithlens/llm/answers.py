"""What the page and the CLI show of one on-demand answer: the stored record, the parsed label (a
self-consistency vote's majority, with each draw's answer), and for ARM rewrites the paper's signals
(r != s, word edit distance as a count and on Table 3's 0-1 scale, explanation points, the word diff)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from faithlens.llm import methods, records, votes
from faithlens.llm.interpret import arm_label
from faithlens.llm.signals import DiffOp, arm_signals


@dataclass(frozen=True)
class Spend:
    """What answering cost now: API calls made (one per turn), tokens and dollars; cached answers add
    nothing. An unpriced call makes the cost unknown (None)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0

    def __add__(self, other: Spend) -> Spend:
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Spend(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
        )

    def plus(self, call: records.Call) -> Spend:
        if call.parsed.get("cached"):
            return self
        return self + Spend(len(call.replies), call.input_tokens or 0, call.output_tokens or 0, call.cost_usd)


@dataclass(frozen=True)
class Answer:
    """One method's answer about one target, assembled from its stored calls."""

    source: str
    method: str
    status: str
    failure: str | None
    label: str | None
    raw_label: str | None
    explanation: str | None
    rewrite: str | None
    items: tuple[str, ...]
    raw_output: str
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    cached: bool
    prompts: tuple[str, ...]
    """name@version of every prompt file sent."""
    calls: tuple[int | None, ...]
    latency_ms: float | None
    original: str | None = None
    rewritten: bool | None = None
    edit_distance: int | None = None
    """Word edits between the claim and its rewrite (a count)."""
    normalized_edit_distance: float | None = None
    """The same on ARM Table 3's 0-1 scale: divided by the longer word list (`signals.normalized_edit_distance`)."""
    votes: tuple[str, ...] = ()
    """A self-consistency vote: each draw's answer, in draw order."""
    points: tuple[str, ...] | None = None
    """ARM A.3's explanation points; None when they were not asked (r = s, no explanation) or failed."""
    points_failure: str | None = None
    """Why the explanation points failed ("parse_failure: expected points between <item></item> tags; ...");
    the rewrite itself is stored and counts, so the answer stays ok and says this beside it."""
    diff: tuple[DiffOp, ...] = ()
    spent: Spend = Spend()

    def with_points(self, points_call: records.Call) -> Answer:
        """Add ARM's explanation points (A.3) from their own call; a failed split leaves points unknown and
        says why in `points_failure`."""
        if points_call.status == "ok":
            points, failure = tuple(points_call.parsed.get("items") or ()), None
        else:
            points, failure = None, f"{points_call.status}: {points_call.failure or points_call.status}"
        return dataclasses.replace(_merge(self, [points_call]), points=points, points_failure=failure)

    def with_original(self, original: str) -> Answer:
        """ARM's signals against the claim as written; the label is r != s, as `interpret` stores it."""
        if self.rewrite is None:
            return self
        signals = arm_signals(original, self.rewrite, None)
        label, raw_label = arm_label(signals.rewritten)
        return dataclasses.replace(
            self,
            original=original,
            label=label,
            raw_label=raw_label,
            rewritten=signals.rewritten,
            edit_distance=signals.edit_distance,
            normalized_edit_distance=signals.normalized_edit_distance,
            diff=tuple(signals.diff),
        )

    def to_json(self) -> dict[str, object]:
        record = dataclasses.asdict(self)
        record["diff"] = [{"op": op.op, "text": op.text} for op in self.diff]
        return record


def combine(method_name: str, calls: list[records.Call]) -> Answer:
    """One answer from the calls of one method (several only for StorySumm's two inconsistency prompts)."""
    first = calls[0]
    failed = next((c for c in calls if c.status != "ok"), None)
    parsed = first.parsed
    answer = Answer(
        source=first.source,
        method=method_name,
        status=failed.status if failed else "ok",
        failure=failed.failure if failed else None,
        label=parsed.get("label") if len(calls) == 1 else None,
        raw_label=parsed.get("raw_label") if len(calls) == 1 else None,
        explanation=parsed.get("explanation"),
        rewrite=parsed.get("rewrite"),
        items=tuple(item for c in calls for item in (c.parsed.get("items") or ())),
        raw_output="",
        input_tokens=None,
        output_tokens=None,
        cost=None,
        cached=True,
        prompts=(),
        calls=(),
        latency_ms=None,
    )
    if methods.METHODS[method_name].draws > 1 and not failed:
        answer = _voted(answer, calls)
    return _merge(answer, calls)


def _voted(answer: Answer, calls: list[records.Call]) -> Answer:
    """A self-consistency answer: the majority of its draws, each draw's answer and reasoning."""
    vote = votes.majority(calls)
    return dataclasses.replace(
        answer,
        status="ok" if vote.failure is None else "parse_failure",
        failure=vote.failure,
        label=vote.label,
        raw_label=vote.raw_label,
        votes=vote.votes,
        explanation=votes.explanation(calls),
    )


def _merge(answer: Answer, calls: list[records.Call]) -> Answer:
    """Add the calls' raw output, tokens, cost and provenance. Unknown usage or price stays unknown."""
    fresh = not answer.calls
    known = all(c.input_tokens is not None for c in calls) and (fresh or answer.input_tokens is not None)
    priced = all(c.cost_usd is not None for c in calls) and (fresh or answer.cost is not None)
    labelled = len(calls) > 1 or not fresh
    raw = [(f"[{c.prompt_name}]\n" if labelled else "") + "\n\n".join(c.replies) for c in calls]
    spent = answer.spent
    for call in calls:
        spent = spent.plus(call)
    return dataclasses.replace(
        answer,
        spent=spent,
        raw_output="\n\n".join(part for part in (answer.raw_output, *raw) if part),
        input_tokens=_add(answer.input_tokens, [c.input_tokens for c in calls]) if known else None,
        output_tokens=_add(answer.output_tokens, [c.output_tokens for c in calls]) if known else None,
        cost=_add(answer.cost, [c.cost_usd for c in calls]) if priced else None,
        cached=answer.cached and all(c.parsed.get("cached") for c in calls),
        prompts=answer.prompts + tuple(f"{c.prompt_name}@{c.prompt_version}" for c in calls),
        calls=answer.calls + tuple(c.call_id for c in calls),
        latency_ms=_add(answer.latency_ms, [c.latency_ms for c in calls]),
    )


def _add(start: float | None, values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    if start is None and not present:
        return None
    return (start or 0) + sum(present)
