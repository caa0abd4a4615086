"""Helpers shared by the coding tests: a connection to a private database copy, row counts to show a
refused write changed nothing, the current label or tags of a coder's source read straight from the
tables, and LLM answers planted through the real `faithlens.llm.records.save` (the hybrid mode's
suggested inconsistencies, ARM's rewrites and explanation points)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from faithlens import store
from faithlens.llm import points, records
from tests import raw

COUNTED = ("coding_session", "coding_coder", "coding_event", "label", "label_source", "tag", "codebook")
"""Tables a coding write may touch: a refused code leaves every count as it was."""

_KEYS = itertools.count()


@contextmanager
def connected(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = store.connect(path)
    try:
        yield conn
    finally:
        conn.close()


def row_counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in COUNTED}


def current_label(
    conn: duckdb.DuckDBPyConnection, dataset: str, source: str, level: str, target: str
) -> tuple[str | None, str | None, str | None, str | None] | None:
    """(value, raw_value, explanation, created_by) of the source's current label on the target, or None."""
    return conn.execute(
        "SELECT value, raw_value, explanation, created_by FROM current_label "
        "WHERE dataset = ? AND source = ? AND level = ? AND target_id = ?",
        [dataset, source, level, target],
    ).fetchone()


def current_value(conn: duckdb.DuckDBPyConnection, dataset: str, source: str, level: str, target: str) -> str | None:
    """What Compare and Explore read for a source on a target: the current label's value (None: no label)."""
    found = current_label(conn, dataset, source, level, target)
    return found[0] if found else None


def tags_of(conn: duckdb.DuckDBPyConnection, dataset: str, level: str, target: str, source: str) -> set[tuple]:
    """(kind, value) of every tag `source` set on the target."""
    rows = conn.execute(
        "SELECT kind, value FROM tag WHERE dataset = ? AND level = ? AND target_id = ? AND source = ?",
        [dataset, level, target, source],
    ).fetchall()
    return set(rows)


def storysumm_ids(split: str | None = None) -> list[str]:
    """StorySumm summary ids (of a split) in reading order, from the raw file."""
    return sorted(sid for sid, record in raw.storysumm_records().items() if split is None or record["split"] == split)


def storysumm_sentence_count(summary_id: str) -> int:
    return len(raw.storysumm_records()[summary_id]["summary"])


def storysumm_claim_count(summary_id: str) -> int:
    return len(raw.storysumm_records()[summary_id]["claims"])


def llm_call(**fields: object) -> records.Call:
    """A stored answer as `faithlens.llm.ask` would make it; `fields` override the defaults."""
    body: dict[str, object] = {
        "request_key": f"test-request-{next(_KEYS)}",
        "sample": 0,
        "dataset": "storysumm",
        "level": "summary",
        "target_id": None,
        "source": "llm/test/model",
        "provider": "openai",
        "base_url": None,
        "model": "model",
        "method": "storysumm-inconsistencies",
        "prompt_name": "storysumm-inconsistencies.prompt1",
        "prompt_version": "test0000",
        "parameters": {"temperature": 0},
        "request": {"messages": []},
        "replies": ["(scripted)"],
        "status": "ok",
        "failure": None,
        "parsed": {},
        "input_tokens": 10,
        "output_tokens": 5,
        "cost_usd": None,
        "latency_ms": 1.0,
    }
    body.update(fields)
    return records.Call(**body)


def plant_inconsistencies(
    conn: duckdb.DuckDBPyConnection,
    source: str,
    summary_id: str,
    items: list[str],
    status: str = "ok",
    dataset: str = "storysumm",
    prompt: str = "prompt1",
) -> int:
    """The hybrid mode's suggestions: one StorySumm inconsistency prompt's items for one summary (no label event)."""
    call = llm_call(
        prompt_name=f"storysumm-inconsistencies.{prompt}",
        dataset=dataset,
        level="summary",
        target_id=summary_id,
        source=source,
        status=status,
        failure=None if status == "ok" else "did not parse",
        parsed={"items": items} if status == "ok" else {},
    )
    return records.save(conn, call, None, "suggested inconsistencies")


def plant_rewrite(
    conn: duckdb.DuckDBPyConnection,
    source: str,
    unit: str,
    rewrite: str,
    level: str = "claim",
    changed: bool = True,
    dataset: str = "storysumm",
) -> int:
    """ARM's rewrite of one claim: a label event 'unfaithful'/'rewritten' (or 'faithful'/'unchanged'), its
    explanation naming the rewrite (so each has its own explanation points request)."""
    explanation = f"because: {rewrite}"
    call = llm_call(
        dataset=dataset,
        level=level,
        target_id=unit,
        source=source,
        method="arm-rewrite",
        prompt_name="arm-rewrite.both",
        parsed={"rewrite": rewrite, "explanation": explanation},
        replies=[f"Rewrite: {rewrite}"],
    )
    label = records.LabelEvent(
        "unfaithful" if changed else "faithful",
        "rewritten" if changed else "unchanged",
        explanation=explanation,
        rewrite=rewrite,
    )
    return records.save(conn, call, label, "ARM rewrites")


def plant_points(
    conn: duckdb.DuckDBPyConnection,
    source: str,
    unit: str,
    items: list[str],
    level: str = "claim",
    dataset: str = "storysumm",
) -> int:
    """ARM's explanation points of the unit's current rewrite, stored under the request that asks for them
    (`faithlens.llm.points`, as `faithlens.llm.ask` keys it), no label event."""
    with conn.cursor() as cur:
        request = points.request_of(cur, dataset, level, source, unit)
    assert request is not None, f"{unit} has no rewrite of {source} with an explanation"
    call = llm_call(
        request_key=request.key,
        dataset=dataset,
        level=level,
        target_id=unit,
        source=source,
        method=request.template.method,
        prompt_name=request.template.name,
        prompt_version=request.template.version,
        parameters=request.parameters,
        request={"system": request.system, "turns": list(request.turns)},
        parsed={"items": items},
    )
    return records.save(conn, call, None, "ARM rewrites")
