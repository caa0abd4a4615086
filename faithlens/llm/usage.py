"""Reading the stored answers back: usage and cost by model, method and day, and the earlier answers
about one target (the Rewrite page's history)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb

from faithlens.llm.costs import describe_cost


def usage_rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, object]]:
    """Calls, tokens and cost per day, provider, model and method, newest day first.

    `cost_usd` adds the priced calls only; `priced` says how many those are, so a page can say
    "cost unknown" instead of showing a partial sum as the whole.
    """
    rows = cur.execute(
        """
        SELECT CAST(created_at AS DATE) AS day, provider, model, method, count(*) AS calls,
               count(*) FILTER (status = 'ok') AS answered,
               sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
               sum(cost_usd) AS cost_usd, count(cost_usd) AS priced
        FROM llm_call
        GROUP BY ALL
        ORDER BY day DESC, provider, model, method
        """
    ).fetchall()
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in rows]


def cost_text(row: dict[str, object]) -> str:
    """A usage row's cost as the page and the CLI say it: unknown unless every call in it is priced."""
    calls, priced = row["calls"], row["priced"]
    if priced == calls:
        return describe_cost(row["cost_usd"])
    if priced == 0:
        return "cost unknown"
    return (
        f"cost unknown ({calls - priced} of {calls} calls unpriced; the priced ones: {describe_cost(row['cost_usd'])})"
    )


@dataclass(frozen=True)
class PastAnswer:
    """One stored answer about a target, newest first on the page."""

    call_id: int
    created_at: str
    source: str
    method: str
    model: str
    prompt: str
    status: str
    rewrite: str | None
    label: str | None
    explanation: str | None
    failure: str | None
    raw_output: str
    cost_usd: float | None


def past_answers(
    cur: duckdb.DuckDBPyConnection, dataset: str, target_id: str, method: str | None = None
) -> list[PastAnswer]:
    """Every stored answer about this target (optionally of one method), newest first."""
    rows = cur.execute(
        """
        SELECT call_id, strftime(created_at, '%Y-%m-%d %H:%M:%S'), source, method, model,
               prompt_name || '@' || prompt_version, status, parsed, failure, array_to_string(replies, '\n\n'), cost_usd
        FROM llm_call
        WHERE dataset = ? AND target_id = ? AND (? IS NULL OR method = ?)
        ORDER BY call_id DESC
        """,
        [dataset, target_id, method, method],
    ).fetchall()
    found = []
    for call_id, at, source, name, model, prompt, status, parsed, failure, raw, cost in rows:
        fields = json.loads(parsed) if parsed else {}
        found.append(
            PastAnswer(
                call_id,
                at,
                source,
                name,
                model,
                prompt,
                status,
                fields.get("rewrite"),
                fields.get("label"),
                fields.get("explanation"),
                failure,
                raw,
                cost,
            )
        )
    return found


def stored_requests(cur: duckdb.DuckDBPyConnection, dataset: str, target_id: str) -> list[str]:
    """What is stored about this target, in words: each method with the model, provider (and base URL)
    it was asked with and how many answers, most answers first: what a reader can replay."""
    rows = cur.execute(
        """
        SELECT method, model, provider, base_url, count(*) FROM llm_call WHERE dataset = ? AND target_id = ?
        GROUP BY ALL ORDER BY count(*) DESC, method, model
        """,
        [dataset, target_id],
    ).fetchall()
    return [
        f"{method} with {model} ({provider}{' at ' + base_url if base_url else ''}), {count} answer{'s' * (count != 1)}"
        for method, model, provider, base_url, count in rows
    ]
