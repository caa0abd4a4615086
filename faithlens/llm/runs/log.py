"""Runs in DuckDB: the `llm_run` row and its append-only `llm_run_event`s, written through the one
write path, and read back as the state of each item and a summary per run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import duckdb

from faithlens import store
from faithlens.llm import records
from faithlens.llm.answers import Answer, Spend
from faithlens.llm.runs import causes
from faithlens.llm.runs.spec import RunSpec

INTERRUPTED = "interrupted"
"""Shown for a run whose newest state is 'running' with no live worker (a restart or kill -9)."""
POINTS_REASON = "explanation points: "
"""Begins the reason of a done item whose ARM explanation points failed (the rewrite itself counts)."""


@dataclass(frozen=True)
class StoredRun:
    run_id: int
    dataset: str
    level: str
    selection: str
    units: list[str]
    spec: RunSpec
    source: str
    created_at: datetime

    @property
    def total(self) -> int:
        return len(self.units) * self.spec.repeats


@dataclass(frozen=True)
class ItemOutcome:
    """One finished attempt at (unit, repeat): what it answered or why it failed, and what it paid."""

    target_id: str
    repeat: int
    status: str
    reason: str | None = None
    cached: bool = False
    call_ids: tuple[int, ...] = ()
    label: str | None = None
    spent: Spend = Spend()
    points_failure: str | None = None
    """An ARM rewrite done whose explanation points failed: why (the item counts done, its points missing)."""

    @classmethod
    def of_answer(cls, target_id: str, repeat: int, answer: Answer) -> ItemOutcome:
        ok = answer.status == "ok"
        points = answer.points_failure if ok else None
        return cls(
            target_id=target_id,
            repeat=repeat,
            status="ok" if ok else "failed",
            reason=(f"{POINTS_REASON}{points}" if points else None) if ok else f"{answer.status}: {answer.failure}",
            cached=answer.cached,
            call_ids=tuple(c for c in answer.calls if c is not None),
            label=answer.label,
            spent=answer.spent,
            points_failure=points,
        )


@dataclass(frozen=True)
class Failure:
    target_id: str
    repeat: int
    reason: str
    bought: bool
    """An answer came back and is stored (refused, empty, unparseable): only a retry asks again."""

    @property
    def cause(self) -> str:
        """Why, in the vocabulary failures are grouped by (`causes.CAUSES`)."""
        return causes.of_reason(self.reason.removeprefix(POINTS_REASON))

    @property
    def detail(self) -> str:
        """The reason without the provider and base URL a provider error begins with (named once above)."""
        return causes.detail(self.reason)

    @property
    def endpoint(self) -> str | None:
        """The provider (and base URL) a provider error names, or None."""
        return causes.endpoint(self.reason)

    def to_json(self) -> dict[str, object]:
        return {
            "unit": self.target_id,
            "repeat": self.repeat,
            "cause": self.cause,
            "reason": self.reason,
            "answer_stored": self.bought,
        }


@dataclass(frozen=True)
class Counts:
    """A run's items by their latest state, and what its calls paid (None: some model is unpriced)."""

    total: int
    done: int
    failed: int
    cached: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    points_failed: int
    """Items done whose ARM explanation points (A.3) failed: the rewrite counts, its points are missing."""

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed


@dataclass(frozen=True)
class RunSummary(Counts):
    """A run as the Runs page and `llm runs` report it (counts over its items' latest events)."""

    run_id: int
    dataset: str
    level: str
    selection: str
    source: str
    spec: str
    state: str
    reason: str | None
    created_at: datetime
    updated_at: datetime | None
    started_by: str | None = None
    """Who made the run (`llm_run.started_by`); None for runs made before people existed."""

    @property
    def settings(self) -> RunSpec:
        return RunSpec.from_json(self.spec)


def create(
    conn: duckdb.DuckDBPyConnection, spec: RunSpec, units: list[str], selection: str, started_by: str | None = None
) -> int:
    """Store a run; `engine.create_run` checks who may make it and passes them as `started_by`."""
    with store.write(conn, f"run {spec.source}" + (f" by {started_by}" if started_by else "")) as cur:
        run_id = store.next_id(cur, "llm_run_seq")
        cur.execute(
            "INSERT INTO llm_run (run_id, dataset, level, selection, units, spec, source, created_at, started_by) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run_id,
                spec.dataset,
                spec.level,
                selection,
                units,
                spec.to_json(),
                spec.source,
                store.stamp(),
                started_by,
            ],
        )
        return run_id


def load(cur: duckdb.DuckDBPyConnection, run_id: int) -> StoredRun | None:
    row = cur.execute(
        "SELECT run_id, dataset, level, selection, units, spec, source, created_at FROM llm_run WHERE run_id = ?",
        [run_id],
    ).fetchone()
    if row is None:
        return None
    run_id, dataset, level, selection, units, spec, source, created_at = row
    return StoredRun(run_id, dataset, level, selection, list(units), RunSpec.from_json(spec), source, created_at)


def record_item(conn: duckdb.DuckDBPyConnection, run_id: int, item: ItemOutcome) -> None:
    store.write_grouped(
        conn, f"run {run_id} item", lambda cur: insert_item(cur, run_id, item), patience_s=records.PAID_PATIENCE_S
    )


def insert_item(cur: duckdb.DuckDBPyConnection, run_id: int, item: ItemOutcome) -> None:
    """The item event, inside a transaction the caller holds (the answer's own, when it is one call)."""
    new_id, id_params = store.new_id(cur, "llm_run_event_seq")
    cur.execute(
        f"""
        INSERT INTO llm_run_event (event_id, run_id, kind, target_id, repeat, status, reason, cached, call_ids, label,
                                   calls, input_tokens, output_tokens, cost_usd, created_at)
        VALUES ({new_id}, ?, 'item', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [
            *id_params,
            run_id,
            item.target_id,
            item.repeat,
            item.status,
            item.reason,
            item.cached,
            list(item.call_ids),
            item.label,
            item.spent.calls,
            item.spent.input_tokens,
            item.spent.output_tokens,
            item.spent.cost,
            store.stamp(),
        ],
    )


def record(conn: duckdb.DuckDBPyConnection, run_id: int, kind: str, status: str, reason: str | None = None) -> None:
    """A 'state' event (running, finished, cancelled, budget, stopped) or a 'batch' one (submitted, collected)."""
    with store.write(conn, f"run {run_id} {status}") as cur:
        new_id, id_params = store.new_id(cur, "llm_run_event_seq")
        cur.execute(
            "INSERT INTO llm_run_event (event_id, run_id, kind, status, reason, created_at) "
            f"VALUES ({new_id}, ?, ?, ?, ?, ?)",
            [*id_params, run_id, kind, status, reason, store.stamp()],
        )


@dataclass(frozen=True)
class ItemState:
    """An item's latest attempt: ok or failed, whether an answer was stored for it, whether it came
    from stored answers."""

    status: str
    bought: bool
    cached: bool


def item_states(cur: duckdb.DuckDBPyConnection, run_id: int) -> dict[tuple[str, int], ItemState]:
    """(unit, repeat) -> its latest attempt."""
    rows = cur.execute(
        """
        SELECT target_id, repeat, arg_max(status, event_id), arg_max(len(call_ids) > 0, event_id),
               arg_max(cached, event_id)
        FROM llm_run_event WHERE run_id = ? AND kind = 'item' GROUP BY target_id, repeat
        """,
        [run_id],
    ).fetchall()
    return {(target_id, repeat): ItemState(*state) for target_id, repeat, *state in rows}


def spent(cur: duckdb.DuckDBPyConnection, run_id: int) -> float:
    """Dollars this run has paid so far, over every attempt (unpriced calls count as 0 here)."""
    return cur.execute(
        "SELECT coalesce(sum(cost_usd), 0) FROM llm_run_event WHERE run_id = ? AND kind = 'item'", [run_id]
    ).fetchone()[0]


def failures(cur: duckdb.DuckDBPyConnection, run_id: int, limit: int | None = None) -> list[Failure]:
    """Items whose latest attempt failed, with the reason, in unit order."""
    rows = cur.execute(
        f"""
        SELECT target_id, repeat, arg_max(reason, event_id), arg_max(len(call_ids) > 0, event_id)
        FROM llm_run_event WHERE run_id = ? AND kind = 'item' GROUP BY target_id, repeat
        HAVING arg_max(status, event_id) = 'failed'
        ORDER BY min(event_id) {"LIMIT " + str(int(limit)) if limit else ""}
        """,
        [run_id],
    ).fetchall()
    return [Failure(*row) for row in rows]


_POINTS_FAILED = """
WITH items AS (
    SELECT run_id, target_id, repeat, arg_max(status, event_id) AS status, arg_max(call_ids, event_id) AS call_ids,
           min(event_id) AS first
    FROM llm_run_event WHERE kind = 'item' AND {where} GROUP BY run_id, target_id, repeat
), calls AS (
    SELECT run_id, target_id, repeat, first, unnest(call_ids) AS call_id FROM items WHERE status = 'ok'
)
SELECT c.run_id, c.target_id, c.repeat, c.first, l.status || ': ' || coalesce(l.failure, l.status) AS reason
FROM calls c JOIN llm_call l ON l.call_id = c.call_id
WHERE l.prompt_name = 'arm-explanation-points' AND l.status <> 'ok'
"""
"""Done items of runs whose explanation-points call failed, read from the calls behind each item's latest
event (so runs recorded before points failures were counted show theirs too)."""


def points_failures(cur: duckdb.DuckDBPyConnection, run_id: int, limit: int | None = None) -> list[Failure]:
    """Done items whose ARM explanation points failed, with the reason, in unit order."""
    rows = cur.execute(
        f"SELECT target_id, repeat, reason FROM ({_POINTS_FAILED.format(where='run_id = ?')}) ORDER BY first"
        + (f" LIMIT {int(limit)}" if limit else ""),
        [run_id],
    ).fetchall()
    return [Failure(unit, repeat, POINTS_REASON + reason, True) for unit, repeat, reason in rows]


def open_batches(cur: duckdb.DuckDBPyConnection, run_id: int) -> list[str]:
    """Provider batch ids this run submitted and has not collected yet (polled again on resume)."""
    rows = cur.execute(
        """
        SELECT reason FROM llm_run_event WHERE run_id = ? AND kind = 'batch' GROUP BY reason
        HAVING NOT bool_or(status = 'collected') ORDER BY min(event_id)
        """,
        [run_id],
    ).fetchall()
    return [row[0] for row in rows]


_SUMMARIES = """
WITH items AS (
    SELECT run_id, target_id, repeat, arg_max(status, event_id) AS status, arg_max(cached, event_id) AS cached
    FROM llm_run_event WHERE kind = 'item' AND {where} GROUP BY run_id, target_id, repeat
), counts AS (
    SELECT run_id, count(*) FILTER (status = 'ok') AS done, count(*) FILTER (status = 'failed') AS failed,
           count(*) FILTER (status = 'ok' AND cached) AS cached
    FROM items GROUP BY run_id
), spend AS (
    SELECT run_id, sum(calls) AS calls, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
           CASE WHEN bool_or(cost_usd IS NULL) THEN NULL ELSE sum(cost_usd) END AS cost, max(created_at) AS updated_at
    FROM llm_run_event WHERE kind = 'item' AND {where} GROUP BY run_id
), points AS (
    SELECT run_id, count(*) AS points_failed FROM ({points}) GROUP BY run_id
), states AS (  -- arg_max_null: a resume's 'running' has no reason, and must not show the cancel's before it
    SELECT run_id, arg_max(status, event_id) AS state, arg_max_null(reason, event_id) AS reason,
           max(created_at) AS updated_at
    FROM llm_run_event WHERE kind = 'state' AND {where} GROUP BY run_id
)
SELECT r.run_id, r.dataset, r.level, r.selection, r.source, r.spec::VARCHAR AS spec,
       len(r.units) * CAST(json_extract(r.spec, '$.repeats') AS INTEGER) AS total,
       coalesce(c.done, 0) AS done, coalesce(c.failed, 0) AS failed, coalesce(c.cached, 0) AS cached,
       coalesce(p.calls, 0) AS calls, coalesce(p.input_tokens, 0) AS input_tokens,
       coalesce(p.output_tokens, 0) AS output_tokens, CASE WHEN p.run_id IS NULL THEN 0 ELSE p.cost END AS cost,
       coalesce(f.points_failed, 0) AS points_failed, coalesce(s.state, 'created') AS state, s.reason, r.created_at,
       greatest(p.updated_at, s.updated_at) AS updated_at, r.started_by
FROM llm_run r LEFT JOIN counts c USING (run_id) LEFT JOIN spend p USING (run_id) LEFT JOIN points f USING (run_id)
     LEFT JOIN states s USING (run_id)
WHERE {run_where}
ORDER BY r.run_id DESC
"""


def summaries(
    cur: duckdb.DuckDBPyConnection, dataset: str | None = None, run_id: int | None = None
) -> list[RunSummary]:
    """Every run (of `dataset`, or the one `run_id`), newest first."""
    if run_id is not None:
        where, params = "run_id = ?", [run_id]
    elif dataset is not None:
        where, params = "run_id IN (SELECT run_id FROM llm_run WHERE dataset = ?)", [dataset]
    else:
        where, params = "TRUE", []
    points = _POINTS_FAILED.format(where=where)
    sql = _SUMMARIES.format(where=where, points=points, run_where=where.replace("run_id", "r.run_id", 1))
    return store.fetch_all(cur, RunSummary, sql, params * 5)


def summary(cur: duckdb.DuckDBPyConnection, run_id: int) -> RunSummary | None:
    found = summaries(cur, run_id=run_id)
    return found[0] if found else None
