"""The Runs page's read models: the unit sets a new run can take, a unit that stands for the dataset when
deciding which methods and evidence settings fit, the plan shown before starting (the resolved spec,
the units in words, the estimate), and a stored run's state, settings and list row in words.

The work itself is `faithlens.llm.runs` (spec, estimate, engine, jobs, log, stability); nothing here writes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta

import duckdb

from faithlens import access
from faithlens.filters import Filters
from faithlens.llm import costs, methods, prompts, targets
from faithlens.llm.runs import engine, estimate, log
from faithlens.llm.runs.estimate import Estimate
from faithlens.llm.runs.spec import RunSpec, Selection, run_units, select_units
from faithlens.vocab import GOLD

ALL = "all"
EXPLORE = "explore"
SPLIT = "split:"
CREATED = "created"
FINISHED = "finished"
RESUMABLE = (log.INTERRUPTED, "cancelled", "budget", "stopped", CREATED)
"""States a run can go on from (Resume asks only for what is missing)."""
ELSEWHERE = "running on another server"
ELSEWHERE_QUIET_S = 180
"""A working run stores an event with each finished item (an LLM call gives up within its timeout),
so a 'running' run quiet for longer has no worker anywhere: it was interrupted. (A run in batch mode
stores nothing while the provider works on its batch; see the README.)"""
LEVEL_NOUNS = {"summary": "summaries", "sentence": "sentences", "claim": "claims"}


@dataclass(frozen=True)
class UnitSet:
    """One choice of the form's unit set: its key (the widget's value), title and selection."""

    key: str
    title: str
    selection: Selection


def unit_sets(splits: tuple[str, ...], explore_filter: Filters | None) -> list[UnitSet]:
    """All units, one per split, and the Explore filter when the page was opened with one (first then)."""
    sets = [UnitSet(ALL, "all of the level", Selection())]
    sets += [UnitSet(SPLIT + split, f"split {split}", Selection(split=split)) for split in splits]
    if explore_filter is not None:
        sets.insert(0, UnitSet(EXPLORE, "the Explore filter", Selection(filters=explore_filter)))
    return sets


def splits(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, ...]:
    rows = cur.execute(
        "SELECT DISTINCT split FROM summary WHERE dataset = ? AND split IS NOT NULL ORDER BY split", [dataset]
    ).fetchall()
    return tuple(row[0] for row in rows)


def sample_target(cur: duckdb.DuckDBPyConnection, dataset: str, level: str) -> targets.Target | None:
    """A unit of `level` that stands for the dataset when the form decides which methods and evidence
    settings fit (`methods.method_reason`, `evidence_reason`): one with the annotators' evidence quotes
    when any unit has them, else the first. None when the dataset has no unit of that level."""
    if level == "summary":
        row = cur.execute(
            "SELECT summary_id FROM summary WHERE dataset = ? ORDER BY summary_id LIMIT 1", [dataset]
        ).fetchone()
    else:
        row = cur.execute(
            f"""
            SELECT u.unit_id FROM unit u
            LEFT JOIN (SELECT DISTINCT target_id FROM label WHERE dataset = ? AND source = '{GOLD}' AND level = ?
                       AND len(evidence) > 0) g ON g.target_id = u.unit_id
            WHERE u.dataset = ? AND u.kind = ?
            ORDER BY g.target_id IS NULL, u.summary_id, u.position LIMIT 1
            """,
            [dataset, level, dataset, level],
        ).fetchone()
    return targets.resolve(cur, dataset, row[0]) if row else None


def units_in_words(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, selection: Selection) -> tuple[int, str]:
    """How many units the selection holds, and the set in words ('all 96 summaries')."""
    units, words = select_units(cur, dataset, level, selection)
    return len(units), words


@dataclass(frozen=True)
class Plan:
    """What Start would make: the resolved spec, the selection, its units in words, and the estimate."""

    spec: RunSpec
    selection: Selection
    units: int
    words: str
    estimate: Estimate


def plan(conn: duckdb.DuckDBPyConnection, wanted: RunSpec, selection: Selection, actor: access.Actor) -> Plan:
    """Check the settings and estimate the run `actor` would start, with what is left of their budget (no
    call is made); FaithLensError says what to change."""
    resolved = wanted.resolved()
    with conn.cursor() as cur:
        units, words = run_units(cur, resolved, selection)
    return Plan(resolved, selection, len(units), words, estimate.estimate(conn, resolved, units, actor))


def budget_left(found: Estimate) -> str:
    """What is left of the starter's budget, as the estimate shows it beside the cost."""
    left = found.spending.left_usd()
    return "no limit" if left is None else f"${left:.2f}"


def estimate_lines(found: Estimate) -> tuple[str, str, list[str]]:
    """The estimate in words: its cost, its time, and the counts (items, calls, tokens)."""
    seconds = "within 24 h (batch)" if found.seconds is None else duration(found.seconds)
    counts = [
        f"{found.items:,} items: {found.cached_items:,} already stored (free), {found.unfit_items:,} unfit",
        f"{found.calls:,} calls; {found.input_tokens:,} input and {found.output_tokens:,} output tokens",
    ]
    return costs.describe_cost(found.cost), seconds, counts


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def shown_state(state: str, alive: bool, elsewhere: bool = False) -> str:
    """The state as the page shows it: a stored 'running' with no live worker here was interrupted,
    unless another server of the team works on it (`working_elsewhere`)."""
    if alive:
        return "running"
    if state != "running":
        return state
    return ELSEWHERE if elsewhere else log.INTERRUPTED


def offers_resume(state: str, unanswered: int) -> bool:
    """Resume goes on from a state a run can go on from, and from a finished run whose failures include
    calls that failed with nothing stored (rate limit, server error, timeout...): it asks only for those,
    while Retry failed also asks the stored refusals and unparseable answers for a new sample."""
    return state in RESUMABLE or (state == FINISHED and unanswered > 0)


def working_elsewhere(run: log.RunSummary, shared: bool, now: datetime) -> bool:
    """Whether a stored 'running' run not working in this process works on another server of the
    team: its newest event is younger than ELSEWHERE_QUIET_S. Such a run offers no Resume here, which
    would ask again for what that server is asking."""
    recent = run.updated_at is not None and now - run.updated_at < timedelta(seconds=ELSEWHERE_QUIET_S)
    return shared and run.state == "running" and recent


def settings_rows(run: log.RunSummary) -> list[tuple[str, str]]:
    """A run's settings as (setting, value) rows."""
    spec = run.settings
    method = methods.method(spec.method)
    names = method.template_names(spec.variant, spec.level)
    template = prompts.load(names[0])
    variant = f" (variant {spec.variant})" if len(method.variants) > 1 else ""
    return [
        ("units", run.selection),
        ("method", spec.method + variant),
        ("prompt files", prompt_files(method, spec.variant, spec.level)),
        ("evidence", spec.evidence + (f", k={spec.k}" if spec.evidence in methods.RANKED_EVIDENCE else "")),
        ("provider", spec.provider + (f" at {spec.base_url}" if spec.base_url else "")),
        ("model", spec.model),
        ("temperature", f"{template.temperature:g} (the prompt file's)"),
        ("repeats", str(spec.repeats)),
        ("concurrency", "batch API" if spec.batch else str(spec.concurrency)),
        ("budget", "none" if spec.budget is None else f"${spec.budget:g}"),
        ("label source", run.source),
        ("created", f"{run.created_at:%Y-%m-%d %H:%M:%S}"),
        ("started by", run.started_by or "unknown (made before sign-in existed)"),
    ]


def prompt_files(method: methods.Method, variant: str | None, level: str) -> str:
    """The prompt files a method sends, name@version, and what follows on its answer (ARM's points)."""
    sent = [f"{name}@{prompts.load(name).version}" for name in method.template_names(variant, level)]
    after = [f"then {name}@{prompts.load(name).version} when r ≠ s" for name in method.follow_ups()]
    return ", ".join(sent + after)


def points_line(counted: log.Counts) -> str | None:
    """What a run says when some of its done items lack their ARM explanation points (else None)."""
    if not counted.points_failed:
        return None
    return (
        f"Explanation points (ARM A.3) failed for {counted.points_failed:,} of the {counted.done:,} items done: "
        "their rewrites count (r ≠ s, Table 3), but an ARM preference session has no points to mark for them "
        "until Retry failed asks for the points again."
    )


def list_row(run: log.RunSummary, live: engine.Snapshot | None = None, elsewhere: bool = False) -> dict[str, object]:
    """One row of the runs list; a run working now counts from its snapshot (`live`), not the stored events."""
    now = Progress.of_snapshot(live) if live is not None else Progress.of_summary(run)
    return {
        "run": run.run_id,
        "state": shown_state(run.state, live is not None, elsewhere),
        "done": now.done,
        "failed": now.failed,
        "total": now.total,
        "cost": costs.describe_cost(now.cost),
        "source": run.source,
        "units": run.selection,
        "cached": now.cached,
        "created": f"{run.created_at:%Y-%m-%d %H:%M}",
    }


@dataclass(frozen=True)
class Progress(log.Counts):
    """A run's counts as the page shows them, from a live snapshot or from the stored events."""

    eta_s: float | None = None
    batch: str | None = None

    @property
    def fraction(self) -> float:
        return min(1.0, (self.done + self.failed) / self.total) if self.total else 1.0

    @classmethod
    def of_snapshot(cls, now: engine.Snapshot) -> Progress:
        """Cost so far: what earlier sessions of the run paid plus this one (unknown if unpriced)."""
        cost = None if now.cost is None else now.cost_before + now.cost
        return cls(**_counts(now) | {"cost": cost}, eta_s=now.eta_s, batch=now.batch)

    @classmethod
    def of_summary(cls, run: log.RunSummary) -> Progress:
        return cls(**_counts(run))

    def figures(self) -> list[tuple[str, str]]:
        """(label, value) pairs: the counts, then what was spent."""
        return [
            ("Done", f"{self.done:,}"),
            ("Failed", f"{self.failed:,}"),
            ("Remaining", f"{self.remaining:,}"),
            ("Cached", f"{self.cached:,}"),
            ("Calls", f"{self.calls:,}"),
            ("Input tokens", f"{self.input_tokens:,}"),
            ("Output tokens", f"{self.output_tokens:,}"),
            ("Cost so far", costs.describe_cost(self.cost)),
        ]


def _counts(counted: log.Counts) -> dict[str, object]:
    return {field.name: getattr(counted, field.name) for field in dataclasses.fields(log.Counts)}
