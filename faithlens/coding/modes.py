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
from faithlens.llm import points as llm_points
from faithlens.unit_filter import level_noun

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
    points_reason: str | None = None
    """ARM preference: why the rewrite has no explanation points to mark (never asked, failed to parse, r = s,
    no explanation), worded without naming either version; None when it has points."""
    points_askable: bool = False
    """Asking for the points again could give them (`faithlens.llm.points.ask_again`)."""
    points_unit: str | None = None
    """ARM preference: the unit whose rewrite the points explain (what asking again asks about)."""


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
    usual_codebook: str | None = None
    """The codebook of the paper's protocol, which a new session starts with (any that fits may be chosen)."""

    def starting_codebook(self, dataset: str, fitting: list[str]) -> str:
        """The codebook a new session's form starts with: the protocol's, else the dataset's own, else the first."""
        own = [name for name in fitting if name.startswith(f"{dataset}-")]
        return self.usual_codebook if self.usual_codebook in fitting else (own or fitting)[0]

    def check(
        self, cur: duckdb.DuckDBPyConnection, dataset: str, level: str, book: Codebook, suggestions: str | None
    ) -> None:
        if level not in self.levels:
            levels = " or ".join(level_noun(name) for name in self.levels)
            raise FaithLensError(f"{self.title} codes {levels}, not {level_noun(level)}", "pick that level")
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
        """Keep the units this mode can show: those with suggestions or a rewrite from `source`. The set in
        words reads as a phrase: "6 summaries with inconsistencies suggested by S, of all 96 summaries"."""
        if self.suggestions == "inconsistencies":
            have, which = set(_suggested(cur, dataset, source, units)), f"with inconsistencies suggested by {source}"
        elif self.suggestions == "rewrites":
            have, which = set(_rewrites(cur, dataset, level, source, units)), f"that {source} rewrote"
        else:
            return units, described
        kept = [u for u in units if u in have]
        return kept, f"{len(kept):,} {level_noun(level, len(kept))} {which}, of {described}"


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("codes", "Codes", ("summary", "sentence", "claim")),
        Mode(
            "line-by-line",
            "Line by line (StorySumm annotators)",
            ("summary",),
            verdicts_only=True,
            usual_codebook="storysumm-faithfulness",
        ),
        Mode(
            "hybrid",
            "Hybrid (StorySumm)",
            ("summary",),
            verdicts_only=True,
            suggestions="inconsistencies",
            usual_codebook="storysumm-faithfulness",
        ),
        Mode(
            "arm-faithfulness", "ARM faithfulness", ("sentence", "claim"), True, "rewrites", usual_codebook="arm-status"
        ),
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


WHOLE_SUMMARY_MODES = ("line-by-line", "hybrid")
"""Modes whose summary label answers StorySumm's overall question, "is the summary consistent?" (Yes or No):
"N/A, just commentary" is an answer for a line (Appendix D), never for a whole summary."""


def offered_codes(mode_name: str, book: Codebook) -> tuple[str, ...]:
    """The code keys a unit of this mode can carry: every code of the codebook, except the N/A codes
    (verdict n/a) for a whole summary in line-by-line and hybrid."""
    if mode_name in WHOLE_SUMMARY_MODES:
        return tuple(code.key for code in book.codes if code.verdict != "n/a")
    return book.keys


def agreed_yet_consistent(book: Codebook, codes: tuple[str, ...], answers: list[dict]) -> list[int]:
    """Hybrid: the suggestions (numbered from 1) the coder agrees are inconsistencies while labelling the
    summary faithful. StorySumm B.2 makes the summary label follow from the agreed inconsistencies, so the
    page warns; it does not refuse (the coder may have a reason, and says it in the note)."""
    if not any(key in book.keys and book.code(key).verdict == "faithful" for key in codes):
        return []
    return [number for number, answer in enumerate(answers, start=1) if answer.get("agree") is True]


def preference_tags(order: tuple[str, ...]) -> dict[str, str]:
    """ARM preference: the letter each version carries for this unit (A is the one shown first)."""
    return {variant: tag for tag, variant in zip("AB", order, strict=False)}


def _suggested(cur: duckdb.DuckDBPyConnection, dataset: str, source: str | None, units: list[str]) -> dict:
    """Summary id -> the inconsistencies `source` suggested for it: the newest parsed answer to each of
    the method's prompts, their items joined in prompt order (StorySumm B.2 sends Prompt 1 and Prompt 2
    and concatenates both lists)."""
    rows = cur.execute(
        """
        SELECT target_id, parsed FROM llm_call
        WHERE dataset = ? AND source = ? AND level = 'summary' AND status = 'ok' AND list_contains(?, target_id)
        QUALIFY row_number() OVER (PARTITION BY target_id, prompt_name ORDER BY call_id DESC) = 1
        ORDER BY target_id, prompt_name
        """,
        [dataset, source, units],
    ).fetchall()
    found: dict[str, tuple[str, ...]] = {}
    for target, parsed in rows:
        found[target] = found.get(target, ()) + tuple(json.loads(parsed).get("items") or ())
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


def _points(cur: duckdb.DuckDBPyConnection, session, unit: str) -> llm_points.Points:
    """The explanation points of the unit's rewrite, looked up by their request (not by unit: a unit whose
    points came from another unit's cached call has them too), or why there are none."""
    if session.mode != "arm-preference":
        return llm_points.Points()
    return llm_points.lookup(cur, session.dataset, session.level, session.suggestions, unit)


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
        found = _points(cur, session, unit)
        return Context(
            original=original,
            rewrite=rewrite,
            shown=order[0],
            order=order,
            points=found.points,
            points_reason=found.reason,
            points_askable=found.askable,
            points_unit=unit if session.mode == "arm-preference" else None,
        )
    return Context()
