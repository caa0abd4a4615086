"""A run's failures as the Runs page and `llm runs --json` show them: counted by cause
(`faithlens.llm.runs.causes`), each with its unit in context (the document's title, the summary's
generator, the sentence or claim text) and the Explore state that opens the unit, coloured by the
run's label source; and the provider and base URL the failures name, said once above the list."""

from __future__ import annotations

from dataclasses import dataclass, replace

import duckdb

from faithlens.filters import Filters
from faithlens.llm.runs import causes, log
from faithlens.views.states import DetailState, ExploreState

TEXT_CHARS = 160
"""A summary-level unit shows the start of its summary; sentences and claims show whole."""


@dataclass(frozen=True)
class InContext:
    """One failed item with its unit where a reader finds it."""

    failure: log.Failure
    summary_id: str | None
    document: str | None
    generator: str | None
    where: str
    """'summary', 'sentence 3' or 'claim 2' (1-based, as Explore numbers them)."""
    text: str | None
    explore: ExploreState | None
    attempts: int | None = None
    """How many times the run asked for it, where the run recorded its attempts."""

    def to_json(self) -> dict[str, object]:
        return {
            **self.failure.to_json(),
            "detail": self.failure.detail,
            "summary": self.summary_id,
            "document": self.document,
            "generator": self.generator,
            "where": self.where,
            "text": self.text,
        } | ({} if self.attempts is None else {"attempts": self.attempts})


@dataclass(frozen=True)
class Breakdown:
    """A run's failures by cause (with the items a budget stop left unasked), and the endpoints they name."""

    counts: list[causes.Counted]
    endpoints: tuple[str, ...]
    unanswered: int
    """Failed items with nothing stored (the call failed): Resume asks for them again."""

    def to_json(self) -> dict[str, object]:
        return {
            "by_cause": {counted.cause.name: counted.items for counted in self.counts},
            "endpoints": list(self.endpoints),
            "failed_without_answer": self.unanswered,
        }


def breakdown(failures: list[log.Failure] | tuple[log.Failure, ...], unasked_by_budget: int = 0) -> Breakdown:
    """`failures` are all of a run's (`log.failures` without a limit, or a live run's snapshot)."""
    endpoints = tuple(dict.fromkeys(f.endpoint for f in failures if f.endpoint))
    counts = causes.counted([(f.cause, f.bought) for f in failures], unasked_by_budget)
    return Breakdown(counts, endpoints, sum(not f.bought for f in failures))


def in_context(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    level: str,
    source: str,
    failures: list[log.Failure],
    run_id: int | None = None,
) -> list[InContext]:
    """The failures, grouped by cause in the vocabulary's order (unit order within), each with its unit
    and, given the run, how many times the run asked for it."""
    units = _units(cur, dataset, level, sorted({f.target_id for f in failures}))
    faults = _faults(cur, run_id) if run_id is not None else {}
    ordered = sorted(enumerate(failures), key=lambda pair: (causes.ORDER[pair[1].cause], pair[0]))
    rows = [_row(dataset, level, source, failure, units.get(failure.target_id)) for _, failure in ordered]
    if not faults:
        return rows
    return [replace(row, attempts=faults.get(_key(row.failure), 0) + row.failure.bought) for row in rows]


def _key(failure: log.Failure) -> tuple[str, int]:
    return failure.target_id, failure.repeat


def _faults(cur: duckdb.DuckDBPyConnection, run_id: int) -> dict[tuple[str, int], int]:
    """(unit, repeat) -> the run's attempts at it that gave no answer (`llm_run_attempt`, recorded since
    runs retry in-run; empty for a run made before, or a file whose schema predates the table)."""
    known = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'llm_run_attempt'").fetchone()[0]
    if not known:
        return {}
    rows = cur.execute(
        "SELECT target_id, repeat, count(*) FROM llm_run_attempt WHERE run_id = ? GROUP BY ALL", [run_id]
    ).fetchall()
    return {(unit, repeat): count for unit, repeat, count in rows}


def _row(dataset: str, level: str, source: str, failure: log.Failure, unit: dict | None) -> InContext:
    if unit is None:
        return InContext(failure, None, None, None, level, None, None)
    position = unit["position"]
    where = "summary" if position is None else f"{level} {position + 1}"
    detail = DetailState(
        summary=unit["summary_id"],
        unit=None if level == "summary" else failure.target_id,
        sentence=position + 1 if level == "sentence" else None,
    )
    explore = ExploreState(dataset=dataset, filters=Filters(source=source), detail=detail)
    text = unit["text"]
    if level == "summary" and text and len(text) > TEXT_CHARS:
        text = text[:TEXT_CHARS].rstrip() + "…"
    return InContext(failure, unit["summary_id"], unit["title"], unit["generator"], where, text, explore)


def _units(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, ids: list[str]) -> dict[str, dict]:
    if not ids:
        return {}
    if level == "summary":
        sql = """
            SELECT s.summary_id AS target_id, s.summary_id, NULL::INTEGER AS position, s.text, d.title,
                   s.model AS generator
            FROM summary s LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
            WHERE s.dataset = ? AND list_contains(?, s.summary_id)
        """
    else:
        sql = """
            SELECT u.unit_id AS target_id, u.summary_id, u.position, u.text, d.title, s.model AS generator
            FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
            LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
            WHERE u.dataset = ? AND list_contains(?, u.unit_id)
        """
    found = cur.execute(sql, [dataset, ids])
    names = [column[0] for column in found.description]
    return {row[0]: dict(zip(names, row, strict=True)) for row in found.fetchall()}


@dataclass(frozen=True)
class Report:
    """A stored run's failures: counted by cause, and the first `limit` of them in context."""

    breakdown: Breakdown
    rows: list[InContext]
    failed: int

    def to_json(self) -> dict[str, object]:
        return {**self.breakdown.to_json(), "failures": [row.to_json() for row in self.rows]}


def report(cur: duckdb.DuckDBPyConnection, run: log.RunSummary, limit: int | None = None) -> Report:
    """Every failure counted by cause; the first `limit` (in cause order) with their units."""
    found = log.failures(cur, run.run_id)
    rows = in_context(cur, run.dataset, run.level, run.source, found, run.run_id)
    unasked = run.remaining if run.state == causes.BUDGET else 0
    return Report(breakdown(found, unasked), rows[:limit] if limit else rows, len(found))
