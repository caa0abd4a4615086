"""ARM's explanation points (A.3) of a unit's current rewrite, looked up by their request.

A rewrite's points answer a request of their own: the points prompt rendered with the rewrite's
explanation, sent to the provider, base URL and model that wrote the rewrite. Requests are cached, so
when two units' rewrites carry the same explanation the second unit's points are the first unit's
stored answer, whose row names the first unit: looked up by unit they would be missing. Here the
request is rebuilt from the rewrite, exactly as `ask.render` builds it when asking, and its newest
answer is read.

Every outcome says why there is nothing to mark when there is nothing (never asked, failed to parse,
r = s, no explanation), in words that name neither the original nor the rewrite: ARM's preference
mode shows them to a coder who must not learn which version is which. `ask_again` asks the same
request anew through `ask.ask_points`, the one function that asks for points.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from faithlens import access, store
from faithlens.errors import FaithLensError
from faithlens.llm import ask, methods, prompts, providers, records, targets
from faithlens.llm.interpret import REWRITTEN

NO_REWRITE = "this source gave no new wording for the unit"
R_EQUALS_S = "r = s: the model repeated the sentence unchanged, so ARM has nothing to mark"
NO_EXPLANATION = "the model gave no explanation to split into points"
NO_CALL = "the model call behind this wording is not stored here, so its points cannot be asked"
NOT_ASKED = "its explanation was never split into points (ARM A.3)"
FAILED = {
    "parse_failure": "splitting its explanation into points failed: the answer did not parse",
    "refused": "splitting its explanation into points failed: the model refused",
    "empty": "splitting its explanation into points failed: the answer was empty",
}
_SEPARATOR = "\n\n"
"""How a label's raw_output joins a call's replies (`records.Call.raw_output`)."""


@dataclass(frozen=True)
class Points:
    """A unit's explanation points, or why it has none (`reason`), and whether asking again could help."""

    points: tuple[str, ...] = ()
    reason: str | None = None
    askable: bool = False


@dataclass(frozen=True)
class _Wanted:
    """What the points of one rewrite are asked with: the request and where it goes."""

    endpoint: providers.Endpoint
    model: str
    explanation: str
    request: ask.Request


def lookup(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, source: str | None, unit: str) -> Points:
    """The points of `source`'s current rewrite of `unit`: the newest answer to their request."""
    wanted = _wanted(cur, dataset, level, source, unit)
    if isinstance(wanted, str):
        return Points(reason=wanted, askable=False)
    call = records.latest(cur, wanted.request.key)
    if call is None:
        return Points(reason=NOT_ASKED, askable=True)
    if call.status != "ok":
        return Points(reason=FAILED.get(call.status, FAILED["parse_failure"]), askable=True)
    return Points(points=tuple(call.parsed.get("items") or ()))


def ask_again(
    conn: duckdb.DuckDBPyConnection, dataset: str, level: str, source: str, unit: str, actor: access.Actor
) -> Points:
    """Ask for the points of the unit's current rewrite anew (a paid call by `actor`, checked before it is
    made), and return them as stored.
    FaithLensError when they cannot be asked (r = s, no explanation, no stored call) or the call fails."""
    with conn.cursor() as cur:
        wanted = _wanted(cur, dataset, level, source, unit)
        target = targets.resolve(cur, dataset, unit)
    if isinstance(wanted, str):
        raise FaithLensError(f"the explanation points cannot be asked: {wanted}", "nothing to ask for this unit")
    ask.ask_points(conn, target, wanted.endpoint, wanted.model, wanted.explanation, source, actor)
    with conn.cursor() as cur:
        return lookup(cur, dataset, level, source, unit)


def request_of(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, source: str, unit: str) -> ask.Request | None:
    """The request that asks for the points of the unit's current rewrite (None when there is none)."""
    wanted = _wanted(cur, dataset, level, source, unit)
    return None if isinstance(wanted, str) else wanted.request


_REWRITE = f"""
WITH shown AS (
    SELECT raw_value, explanation, raw_output FROM label
    WHERE dataset = ? AND source = ? AND level = ? AND target_id = ? AND rewrite IS NOT NULL {store.LATEST_LABEL}
)
SELECT raw_value, explanation, (
    SELECT [provider, base_url, model] FROM llm_call
    WHERE method = 'arm-rewrite' AND status = 'ok' AND array_to_string(replies, ?) = shown.raw_output
      AND model = (SELECT model FROM label_source WHERE dataset = ? AND source = ?)
    ORDER BY call_id DESC LIMIT 1
) FROM shown
"""
"""The unit's current rewrite (r != s or not, its explanation) and where the call that wrote it went: the
newest stored call of the source's model whose replies are the label's raw output."""


def _wanted(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, source: str | None, unit: str) -> _Wanted | str:
    """The points request of the unit's current rewrite, or why there is none."""
    found = cur.execute(_REWRITE, [dataset, source, level, unit, _SEPARATOR, dataset, source]).fetchone()
    if found is None:
        return NO_REWRITE
    raw_value, explanation, call = found
    if raw_value != REWRITTEN:
        return R_EQUALS_S
    if not explanation:
        return NO_EXPLANATION
    if call is None:
        return NO_CALL
    provider, base_url, model = call
    endpoint = providers.Endpoint(provider, base_url)
    what = ask.Ask(methods.POINTS_PROMPT, provider, model, base_url=base_url)
    request = ask.render(endpoint, what, prompts.load(methods.POINTS_PROMPT), {"explanation": explanation}, source)
    return _Wanted(endpoint, model, explanation, request)
