"""Generators named as the benchmark papers name them, where a release's own model names do not.

StorySumm's release calls two models `claude`. Its paper (Subbiah et al., 2024, section 2.2 and
Table 2) says the val split was summarised by Claude-2 and the test split by Claude-3. The stored
`summary.model` keeps the raw value (the data is never rewritten); readers show `generator_sql()`,
which names such a summary as the paper does and keeps the raw value visible:
"Claude-2 (raw: claude, val)". A rule applies to datasets of one format (the StorySumm loader's,
whether bundled or imported) and one (model, split) pair; every other summary shows its raw model.

The shown name is also the value of Explore's generator filter, so a filter in a link names exactly
one (model, split) pair; `resolve` maps the paper's short name ("Claude-2") onto it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class PaperName:
    """Summaries of datasets of `format` whose raw `model` is on `split` are the paper's `name`."""

    format: str
    model: str
    split: str
    name: str

    @property
    def shown(self) -> str:
        return f"{self.name} (raw: {self.model}, {self.split})"


PAPER_NAMES: tuple[PaperName, ...] = (
    PaperName("storysumm", "claude", "val", "Claude-2"),
    PaperName("storysumm", "claude", "test", "Claude-3"),
)


def _literal(text: str) -> str:
    """A constant of this module as a SQL string literal (they hold no quote, so none is escaped)."""
    if "'" in text:
        raise ValueError(f"generator rule text may not hold a quote: {text!r}")
    return f"'{text}'"


def generator_sql(alias: str = "s") -> str:
    """SQL for the generator of summary `alias` as shown: its paper name with the raw value where
    a rule applies, else the raw model (NULL when the summary names none)."""
    whens = " ".join(
        f"WHEN {alias}.model = {_literal(rule.model)} AND {alias}.split = {_literal(rule.split)} "
        f"AND {alias}.dataset IN (SELECT name FROM dataset WHERE format = {_literal(rule.format)}) "
        f"THEN {_literal(rule.shown)}"
        for rule in PAPER_NAMES
    )
    return f"(CASE {whens} ELSE {alias}.model END)"


def resolve(value: str, shown: Collection[str]) -> tuple[str | None, tuple[str, ...]]:
    """A generator filter value read from a link, against the generators `shown` in a dataset:
    (the shown generator it means, or None; the shown generators a raw model was split into).

    A shown name stands for itself; a paper's short name ("claude-2", any case) for its shown
    name; a raw model that rules split ("claude") means none of them, and names them."""
    if value in shown:
        return value, ()
    for rule in PAPER_NAMES:
        if value.casefold() == rule.name.casefold() and rule.shown in shown:
            return rule.shown, ()
    return None, tuple(rule.shown for rule in PAPER_NAMES if rule.model == value and rule.shown in shown)
