"""The annotation protocols of the seed papers as modes of a coding session.

- `codes`: the coder picks the codebook's code(s) for each unit (any level).
- `line-by-line` (StorySumm's annotators, Appendix D): every sentence of a summary gets a code, with an
  explanation where the code asks for one (unfaithful); the summary's label follows (unfaithful when a
  sentence is).
- `hybrid` (StorySumm section 3): an LLM source's suggested inconsistencies are shown; the coder agrees
  or disagrees with each and says why, then labels the summary.
- `arm-faithfulness` (ARM section 4.2): the claim is shown inside its summary as the original or its
  rewrite, picked at random per unit (the same for every coder), and judged with the codebook.
- `arm-preference` (ARM section 4.2): the original and the rewrite in random order, which is better;
  when the rewrite is preferred, each of its explanation points is IMPORTANT, NEUTRAL or WRONG.

Each mode says which levels and codebooks it takes, which units it can show (those with suggestions or
a rewrite), what it shows beside the unit (`Context`), and checks what a coder submits."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import duckdb

from faithlens import store
from faithlens.coding.codebook import Codebook
from faithlens.errors import FaithLensError

ORIGINAL, REWRITE, NEUTRAL = "original", "rewrite", "neutral"
POINT_MARKS = ("IMPORTANT", "NEUTRAL", "WRONG")
PREFERENCE_CODEBOOK = "arm-preference"


@dataclass(frozen=True)
class Context:
    """What a mode shows beside the unit: suggested inconsistencies (hybrid), the sentences to code
    (line-by-line), the rewrite and which variant is shown (ARM), the rewrite's explanation points."""

    sentences: tuple[tuple[str, str], ...] = ()
    suggestions: tuple[str, ...] = ()
    original: str | None = None
    rewrite: str | None = None
    shown: str | None = None
    order: tuple[str, ...] = ()
    points: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mode:
    name: str
    title: str
    levels: tuple[str, ...]
    verdicts_only: bool = False
    suggestions: str | None = None
    """What the session's `suggestions` source must hold: 'inconsistencies' (hybrid) or 'rewrites' (ARM)."""
    codebooks: tuple[str, ...] = field(default=())
    """Codebooks the mode is limited to (empty: any that fits)."""

    def check(
        self, cur: duckdb.DuckDBPyConnection, dataset: str, level: str, book: Codebook, suggestions: str | None
    ) -> None:
        if level not in self.levels:
            raise FaithLensError(f"{self.title} codes {' or '.join(self.levels)}s, not {level}s", "pick that level")
        if self.verdicts_only and not book.verdicts:
            raise FaithLensError(
                f"{self.title} needs a codebook of verdicts (faithful, unfaithful, ...); {book.name} holds tags",
                "pick storysumm-faithfulness, arm-status or fables-labels",
            )
        if self.codebooks and book.name not in self.codebooks:
            raise FaithLensError(f"{self.title} uses the codebook {self.codebooks[0]}", "pick that codebook")
        if self.suggestions and not suggestions:
            raise FaithLensError(f"{self.title} shows an LLM source's {self.suggestions}", "pick that label source")
        if not self.suggestions and suggestions:
            raise FaithLensError(f"{self.title} shows no LLM suggestions", "leave the suggestions source empty")

    def narrow(
        self,
        cur: duckdb.DuckDBPyConnection,
        dataset: str,
        level: str,
        source: str | None,
        units: list[str],
        described: str,
    ) -> tuple[list[str], str]:
        """Keep the units this mode can show: those with suggestions or a rewrite from `source`."""
        if self.suggestions == "inconsistencies":
            have, which = (
                set(_suggested(cur, dataset, source, units)),
                f"those with inconsistencies suggested by {source}",
            )
        elif self.suggestions == "rewrites":
            have, which = set(_rewrites(cur, dataset, level, source, units)), f"those {source} rewrote"
        else:
            return units, described
        kept = [u for u in units if u in have]
        return kept, f"{len(kept):,} of {described}: {which}"


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("codes", "Codes", ("summary", "sentence", "claim")),
        Mode("line-by-line", "Line by line (StorySumm annotators)", ("summary",), verdicts_only=True),
        Mode("hybrid", "Hybrid (StorySumm)", ("summary",), verdicts_only=True, suggestions="inconsistencies"),
        Mode("arm-faithfulness", "ARM faithfulness", ("sentence", "claim"), True, "rewrites"),
        Mode(
            "arm-preference",
            "ARM preference and explanation points",
            ("sentence", "claim"),
            False,
            "rewrites",
            (PREFERENCE_CODEBOOK,),
        ),
    )
}


def mode(name: str) -> Mode:
    if name not in MODES:
        raise FaithLensError(f"unknown mode {name!r}", f"use one of {', '.join(MODES)}")
    return MODES[name]


def _suggested(cur: duckdb.DuckDBPyConnection, dataset: str, source: str | None, units: list[str]) -> dict:
    """Summary id -> the newest parsed inconsistencies `source` suggested for it."""
    rows = cur.execute(
        """
        SELECT target_id, parsed FROM llm_call
        WHERE dataset = ? AND source = ? AND level = 'summary' AND status = 'ok' AND list_contains(?, target_id)
        QUALIFY row_number() OVER (PARTITION BY target_id ORDER BY call_id DESC) = 1
        """,
        [dataset, source, units],
    ).fetchall()
    found = {target: tuple(json.loads(parsed).get("items") or ()) for target, parsed in rows}
    return {target: items for target, items in found.items() if items}


def _rewrites(cur: duckdb.DuckDBPyConnection, dataset: str, level: str, source: str | None, units: list[str]) -> dict:
    """Unit id -> the current rewrite `source` made of it, for units it changed (ARM's r != s)."""
    rows = cur.execute(
        f"""
        SELECT target_id, rewrite, raw_value FROM label
        WHERE dataset = ? AND source = ? AND level = ? AND list_contains(?, target_id) {store.LATEST_LABEL}
        """,
        [dataset, source, level, units],
    ).fetchall()
    return {target: rewrite for target, rewrite, raw in rows if rewrite and raw == "rewritten"}


def _points(cur: duckdb.DuckDBPyConnection, dataset: str, source: str, unit: str) -> tuple[str, ...]:
    row = cur.execute(
        """
        SELECT parsed FROM llm_call WHERE dataset = ? AND source = ? AND target_id = ?
          AND prompt_name = 'arm-explanation-points' AND status = 'ok' ORDER BY call_id DESC LIMIT 1
        """,
        [dataset, source, unit],
    ).fetchone()
    return tuple(json.loads(row[0]).get("items") or ()) if row else ()


def shown_variant(seed: int, unit: str) -> str:
    """ARM shows a unit as its original or its rewrite at random; every coder sees the same one."""
    return random.Random(f"{seed}:shown:{unit}").choice((ORIGINAL, REWRITE))


def context(cur: duckdb.DuckDBPyConnection, session, unit: str) -> Context:
    """What the coding view shows beside `unit` in this session's mode."""
    if session.mode == "line-by-line":
        rows = cur.execute(
            "SELECT unit_id, text FROM unit WHERE dataset = ? AND summary_id = ? AND kind = 'sentence' ORDER BY position",
            [session.dataset, unit],
        ).fetchall()
        return Context(sentences=tuple((uid, text) for uid, text in rows))
    if session.mode == "hybrid":
        return Context(suggestions=_suggested(cur, session.dataset, session.suggestions, [unit]).get(unit, ()))
    if session.mode.startswith("arm-"):
        original = cur.execute(
            "SELECT text FROM unit WHERE dataset = ? AND unit_id = ?", [session.dataset, unit]
        ).fetchone()[0]
        rewrite = _rewrites(cur, session.dataset, session.level, session.suggestions, [unit]).get(unit)
        order = (ORIGINAL, REWRITE) if shown_variant(session.seed, unit) == ORIGINAL else (REWRITE, ORIGINAL)
        return Context(
            original=original,
            rewrite=rewrite,
            shown=order[0],
            order=order,
            points=_points(cur, session.dataset, session.suggestions, unit) if session.mode == "arm-preference" else (),
        )
    return Context()
