"""What a run asks and about which units.

A run's units are fixed when it is made (`select_units`), from a dataset, a level, an optional split,
the current Explore filter, and for claims the claim set (the dataset's own claims, or a set a model
extracted), so a resume asks about exactly the same units.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import duckdb

from faithlens import filters as summary_filters
from faithlens.errors import FaithLensError
from faithlens.llm import methods, providers
from faithlens.llm.ask import Ask
from faithlens.store.claim_sets import claim_set_sql

LEVELS = ("summary", "sentence", "claim")
MAX_CONCURRENCY = 64
BATCH_METHODS_EXCLUDED = {
    "storysumm-cot": "its second turn follows the model's first reply",
    "arm-rewrite": "its explanation-points call follows the rewrite",
}
"""Methods whose calls depend on an earlier answer: a batch holds independent requests only."""


@dataclass(frozen=True)
class RunSpec:
    """One method, one model, the run's settings. `source` is the label source it feeds."""

    dataset: str
    level: str
    method: str
    provider: str
    model: str
    variant: str | None = None
    evidence: str = "none"
    k: int = 5
    base_url: str | None = None
    concurrency: int = 8
    repeats: int = 1
    budget: float | None = None
    source: str | None = None
    batch: bool = False
    attempts: int | None = None
    """Attempts at each call before the item counts as failed (faithlens.llm.retrying); None: the
    FAITHLENS_LLM_ATTEMPTS setting when the run works. On-demand asks keep the SDKs' own 2 retries."""

    def resolved(self) -> RunSpec:
        """Checked, with the variant and the source name filled in as the run will store them."""
        method = methods.method(self.method)
        providers.Endpoint.resolve(self.provider)
        if self.level not in method.levels:
            raise FaithLensError(
                f"{method.name} judges {' or '.join(method.levels)} units, not {self.level}s",
                f"use --level {method.levels[0]}",
            )
        if self.evidence not in methods.EVIDENCE_SETTINGS:
            raise FaithLensError(f"unknown evidence setting {self.evidence!r}", ", ".join(methods.EVIDENCE_SETTINGS))
        _check_numbers(self)
        if self.batch and self.method in BATCH_METHODS_EXCLUDED:
            raise FaithLensError(
                f"{method.name} cannot run through a batch API: {BATCH_METHODS_EXCLUDED[self.method]}",
                "run it without --batch-api",
            )
        variant = method.resolve_variant(self.variant, self.provider)
        evidence = self.evidence if method.evidence else "none"
        default = methods.source_name(method.name, variant, evidence if method.evidence else None, self.model)
        return dataclasses.replace(self, variant=variant, evidence=evidence, source=self.source or default)

    def ask(self, repeat: int, retry_failed: bool = False, retry_points: bool = False) -> Ask:
        """The on-demand request for repeat `repeat`: its own stored sample, labelled only for repeat 0.

        `retry_failed` asks for a new sample instead, for an item whose stored answer failed to parse;
        `retry_points` keeps the stored rewrite and asks only its explanation points anew."""
        return Ask(
            method=self.method,
            provider=self.provider,
            model=self.model,
            variant=self.variant,
            evidence=self.evidence,
            k=self.k,
            base_url=self.base_url,
            fresh=retry_failed,
            sample=None if retry_failed else repeat,
            source=self.source,
            labels=repeat == 0,
            fresh_points=retry_points,
        )

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        stored = json.loads(text)
        stored.pop("retries", None)  # runs made before in-run retries: the SDK's count, now the setting's
        return cls(**stored)


def _check_numbers(spec: RunSpec) -> None:
    if not 1 <= spec.concurrency <= MAX_CONCURRENCY:
        raise FaithLensError(f"concurrency {spec.concurrency} is out of range", f"use 1 to {MAX_CONCURRENCY}")
    if spec.repeats < 1:
        raise FaithLensError(f"repeats {spec.repeats} is out of range", "use 1 or more (2+ measures self-agreement)")
    if spec.budget is not None and not spec.budget > 0:
        raise FaithLensError(f"budget {spec.budget} is not a positive amount of US dollars", "e.g. --budget 5")
    if spec.attempts is not None and spec.attempts < 1:
        raise FaithLensError(f"attempts {spec.attempts} is out of range", "use 1 (no retries) or more")
    if spec.k < 1:
        raise FaithLensError(f"k {spec.k} is out of range", "use 1 or more passages")


@dataclass(frozen=True)
class Selection:
    """Which units: all of the level, narrowed by a split, an Explore filter and, for claims, a claim set
    (None: the dataset's own claims; else the label source that extracted them)."""

    split: str | None = None
    filters: summary_filters.Filters | None = None
    claim_set: str | None = None


def select_units(
    cur: duckdb.DuckDBPyConnection, dataset: str, level: str, selection: Selection
) -> tuple[list[str], str]:
    """The unit ids (summary ids at summary level), in reading order, and the set in words."""
    where, params = selection.filters.where(dataset) if selection.filters else ("", [])
    if selection.split is not None:
        where, params = where + " AND s.split = ?", [*params, selection.split]
    summaries = f"SELECT s.summary_id FROM summary s WHERE s.dataset = ?{where}"
    summary_ids = [row[0] for row in cur.execute(f"{summaries} ORDER BY s.summary_id", [dataset, *params]).fetchall()]
    described = _described(selection, len(summary_ids))
    if level == "summary":
        return summary_ids, described
    if level not in LEVELS:
        raise FaithLensError(f"unknown level {level!r}", f"use one of {', '.join(LEVELS)}")
    claim_set = ""
    if level == "claim":
        claim_set = f" AND {claim_set_sql('u')} IS NOT DISTINCT FROM ?"
    rows = cur.execute(
        f"""
        SELECT u.unit_id FROM unit u WHERE u.dataset = ? AND u.kind = ? AND list_contains(?, u.summary_id){claim_set}
        ORDER BY u.summary_id, u.position
        """,
        [dataset, level, summary_ids, *([selection.claim_set] if level == "claim" else [])],
    ).fetchall()
    noun = level if len(rows) == 1 else f"{level}s"
    claims = ""
    if level == "claim":
        claims = f" (claims extracted by {selection.claim_set})" if selection.claim_set else " (the dataset's own)"
    return [row[0] for row in rows], f"{len(rows):,} {noun}{claims} of {described}"


def run_units(cur: duckdb.DuckDBPyConnection, spec: RunSpec, selection: Selection) -> tuple[list[str], str]:
    """`select_units` for a run: FaithLensError when the selection holds no unit to ask about."""
    units, words = select_units(cur, spec.dataset, spec.level, selection)
    if not units:
        raise FaithLensError(f"{spec.dataset}: no {spec.level}s in this selection ({words})", "widen the selection")
    return units, words


def _described(selection: Selection, count: int) -> str:
    """'37 summaries where split is test and generator is gpt-4' (the Explore caption's wording)."""
    chosen = selection.filters or summary_filters.Filters()
    if selection.split is not None:
        chosen = dataclasses.replace(chosen, split=selection.split)
    caption = chosen.caption(count)
    return caption[0].lower() + caption[1:] if caption.startswith("All") else caption
