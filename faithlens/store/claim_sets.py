"""Claim sets: a dataset's own claims, and each set of claims a model extracted from its summaries
(FABLES' claim extraction). The one definition that Explore, the Overview, the sidebar, `stats`,
Runs and coding sessions share, so a model's claims are never counted as the dataset's.

An extracted claim carries `attributes.claim_set` (the label source of the extraction, e.g.
`llm/fables-extract-claims/gpt-4o`) and `attributes.prompt` (`name@version`); its unit id is
`<summary>#x<first 8 of the request key>.<sample>c<n>` (`faithlens.llm.records`), apart from the
dataset's own `<summary>#c<n>`. Its position continues after the summary's claims at the time, so a
claim's number (position + 1) is one per summary across sets and never changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb


def claim_set_sql(alias: str = "") -> str:
    """SQL of a unit's claim set: NULL for the dataset's own, else the extracting label source."""
    prefix = f"{alias}." if alias else ""
    return f"json_extract_string({prefix}attributes, '$.claim_set')"


def prompt_sql(alias: str = "") -> str:
    """SQL of the prompt (`name@version`) that extracted a claim; NULL for the dataset's own."""
    prefix = f"{alias}." if alias else ""
    return f"json_extract_string({prefix}attributes, '$.prompt')"


EXTRACTION_ID = r"#x([0-9a-f]+)\.([0-9]+)c[0-9]+$"
"""An extracted claim's unit id: group 1 the request key's start, group 2 the sample (draw) number."""
KEY_CHARS = 8
"""How much of the request key a unit id carries (`faithlens.llm.records.claim_set_id`)."""


@dataclass(frozen=True)
class ClaimSet:
    """One claim set of a dataset: `source` None for the dataset's own claims, else the label source
    that extracted them, with the models and prompt versions that did."""

    source: str | None
    claims: int
    summaries: int
    models: tuple[str, ...] = ()
    prompts: tuple[str, ...] = ()

    def counted(self) -> str:
        """'4 claims extracted by SOURCE (model M, prompt P) from 1 summary'."""
        noun = "claim" if self.claims == 1 else "claims"
        if self.source is None:
            return f"{self.claims:,} {noun} of the dataset’s own"
        summaries = "1 summary" if self.summaries == 1 else f"{self.summaries:,} summaries"
        made = _in_parentheses(made_by(self.models, self.prompts))
        return f"{self.claims:,} {noun} extracted by {self.source}{made} from {summaries}"

    def short(self) -> str:
        """'4 claims extracted by SOURCE' (the sidebar's line)."""
        noun = "claim" if self.claims == 1 else "claims"
        return f"{self.claims:,} {noun} extracted by {self.source}" if self.source else self.counted()

    def as_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "claims": self.claims,
            "summaries": self.summaries,
            "models": list(self.models),
            "prompts": list(self.prompts),
        }

    @classmethod
    def from_json(cls, found: dict) -> ClaimSet:
        return cls(
            found["source"], found["claims"], found["summaries"], tuple(found["models"]), tuple(found["prompts"])
        )


def made_by(models: tuple[str, ...], prompts: tuple[str, ...]) -> str:
    """'model gpt-4o, prompt fables-extract-claims@e05190aed9b5', or '' when neither is known."""
    parts = []
    if models:
        parts.append(("model " if len(models) == 1 else "models ") + ", ".join(models))
    if prompts:
        parts.append(("prompt " if len(prompts) == 1 else "prompts ") + ", ".join(prompts))
    return ", ".join(parts)


def _in_parentheses(words: str) -> str:
    return f" ({words})" if words else ""


def by_dataset(
    cur: duckdb.DuckDBPyConnection, dataset: str | None = None, extracted_only: bool = False
) -> dict[str, list[ClaimSet]]:
    """Every dataset's claim sets (or only `dataset`'s) holding claims: its own first (unless
    `extracted_only`), then the extracted ones by source name. A dataset without such claims is absent.

    Plain queries, grouped here: the extracted claims are few, and a query that grouped and matched
    them to their calls took longer to plan than to run."""
    found: dict[str, list[ClaimSet]] = {}
    if not extracted_only:
        own = cur.execute(
            f"SELECT dataset, count(*), count(DISTINCT summary_id) FROM unit WHERE kind = 'claim' "
            f"AND (? IS NULL OR dataset = ?) AND {claim_set_sql()} IS NULL GROUP BY dataset",
            [dataset, dataset],
        ).fetchall()
        found = {name: [ClaimSet(None, claims, summaries)] for name, claims, summaries in own}
    claims = cur.execute(
        f"SELECT dataset, {claim_set_sql()}, summary_id, unit_id, {prompt_sql()} FROM unit "
        f"WHERE kind = 'claim' AND (? IS NULL OR dataset = ?) AND attributes IS NOT NULL "
        f"AND {claim_set_sql()} IS NOT NULL",
        [dataset, dataset],
    ).fetchall()
    models = extracted_by(cur, [(name, source, summary_id, unit_id) for name, source, summary_id, unit_id, _ in claims])
    sets: dict[tuple[str, str], list[tuple]] = {}
    for name, source, summary_id, unit_id, prompt in claims:
        sets.setdefault((name, source), []).append((summary_id, models.get(unit_id), prompt))
    for (name, source), members in sorted(sets.items()):
        summaries, made, prompts = (set(values) for values in zip(*members, strict=True))
        found.setdefault(name, []).append(ClaimSet(source, len(members), len(summaries), _known(made), _known(prompts)))
    return {name: found[name] for name in sorted(found)}


def extracted_by(cur: duckdb.DuckDBPyConnection, claims: list[tuple[str, str, str, str]]) -> dict[str, str]:
    """unit id -> the model whose stored call extracted it, for claims given as (dataset, claim set,
    summary id, unit id); the call is the one the unit id names (request key start and sample)."""
    if not claims:
        return {}
    rows = cur.execute(
        "SELECT dataset, source, target_id, request_key, sample, model FROM llm_call "
        "WHERE list_contains(?, source) AND list_contains(?, dataset)",
        [sorted({claim[1] for claim in claims}), sorted({claim[0] for claim in claims})],
    ).fetchall()
    calls = {
        (name, source, target, key[:KEY_CHARS], sample): model for name, source, target, key, sample, model in rows
    }
    found = {}
    for name, source, summary_id, unit_id in claims:
        made = re.search(EXTRACTION_ID, unit_id)
        model = calls.get((name, source, summary_id, made[1], int(made[2]))) if made else None
        if model is not None:
            found[unit_id] = model
    return found


def _known(values: set[str | None]) -> tuple[str, ...]:
    return tuple(sorted(value for value in values if value is not None))


def claim_sets(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[ClaimSet]:
    """The claim sets of `dataset` that hold claims: its own first, then the extracted ones."""
    return by_dataset(cur, dataset).get(dataset, [])
