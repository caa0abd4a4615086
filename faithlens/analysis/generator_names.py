"""Generators named as the benchmark papers name them, where a release's own model names do not,
and named as what they are where a release's names are not models at all.

StorySumm's release calls two models `claude`. Its paper (Subbiah et al., 2024, section 2.2 and
Table 2) says the val split was summarised by Claude-2 and the test split by Claude-3. The stored
`summary.model` keeps the raw value (the data is never rewritten); readers show `generator_sql()`,
which names such a summary as the paper does and keeps the raw value visible:
"Claude-2 (raw: claude, val)". A rule applies to datasets of one format (the StorySumm loader's,
whether bundled or imported) and one (model, split) pair; every other summary shows its raw model.

TofuEval's release calls its generators `model_A` to `model_E` and `Model-Extra`. Its README says
the models are anonymised "and the orders of models for all topics are shuffled": `model_A` is a
position in each topic's list, a different model from topic to topic, so no slot is one of the
paper's five models (pooled, the five slots are exactly them: 1,479 summaries, section 3.3). They
are shown as slots, "slot A (shuffled per topic; raw: model_A)", and `group_sql()` pools them into
SLOTS_POOLED, the paper's five models together. `Model-Extra`, added to the release after the
paper, is one model throughout and keeps its name.

The shown name is also the value of Explore's generator filter, so a filter in a link names exactly
one (model, split) pair or one slot; the filter accepts a group too (SLOTS_POOLED). `resolve` maps
the paper's short name ("Claude-2"), a slot's raw name from an old link (`model_A`) and a slot's
short name ("slot A") onto the shown name.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

NO_MODEL = "(no model named)"
"""The generator of summaries that name no model."""
OVERALL = "Overall"
"""The row that pools every generator."""


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


@dataclass(frozen=True)
class ShuffledSlot:
    """Summaries of datasets of `format` whose raw `model` is an anonymised slot that the release
    fills with a different model from topic to topic: the slot `name`, pooled into `group`."""

    format: str
    model: str
    name: str
    group: str

    @property
    def shown(self) -> str:
        return f"{self.name} (shuffled per topic; raw: {self.model})"


PAPER_NAMES: tuple[PaperName, ...] = (
    PaperName("storysumm", "claude", "val", "Claude-2"),
    PaperName("storysumm", "claude", "test", "Claude-3"),
)
SLOTS_POOLED = "slots A–E pooled (the paper's five models)"
"""TofuEval's five shuffled slots together: the five models of the paper's Table 2."""
POOLED_ALIASES = ("slots A-E", "slots A–E", "pooled")
"""Short names a hand-written link may give the pooled slots (any case)."""
SHUFFLED_SLOTS: tuple[ShuffledSlot, ...] = tuple(
    ShuffledSlot("tofueval", f"model_{letter}", f"slot {letter}", SLOTS_POOLED) for letter in "ABCDE"
)
SLOT_NOTE = (
    "TofuEval's release anonymises its five generators as model_A–model_E and shuffles their order per topic "
    "(its README: 'the orders of models for all topics are shuffled'), so a slot is a different model from topic "
    "to topic: no slot is one of the paper's models, and slots differ from each other by chance, not by model. "
    "Pooled, slots A–E are the paper's five models; Model-Extra, added to the release after the paper, is one "
    "model throughout."
)
"""Said beside every per-generator breakdown that shows a slot."""


def _literal(text: str) -> str:
    """A constant of this module as a SQL string literal (a quote doubled, as SQL escapes it)."""
    return "'" + text.replace("'", "''") + "'"


def _format_is(alias: str, name: str) -> str:
    return f"{alias}.dataset IN (SELECT name FROM dataset WHERE format = {_literal(name)})"


def _slot_whens(alias: str, shown: bool) -> str:
    return " ".join(
        f"WHEN {alias}.model = {_literal(slot.model)} AND {_format_is(alias, slot.format)} "
        f"THEN {_literal(slot.shown if shown else slot.group)}"
        for slot in SHUFFLED_SLOTS
    )


def generator_sql(alias: str = "s") -> str:
    """SQL for the generator of summary `alias` as shown: its paper name with the raw value where
    a rule applies, a slot's name where the model is a shuffled slot, else the raw model (NULL when
    the summary names none)."""
    whens = " ".join(
        f"WHEN {alias}.model = {_literal(rule.model)} AND {alias}.split = {_literal(rule.split)} "
        f"AND {_format_is(alias, rule.format)} THEN {_literal(rule.shown)}"
        for rule in PAPER_NAMES
    )
    return f"(CASE {whens} {_slot_whens(alias, shown=True)} ELSE {alias}.model END)"


def group_sql(alias: str = "s") -> str:
    """SQL for the generator group of summary `alias`: SLOTS_POOLED for a shuffled slot, else the
    generator as `generator_sql` shows it."""
    return f"(CASE {_slot_whens(alias, shown=False)} ELSE {generator_sql(alias)} END)"


def is_slot(shown: str) -> bool:
    """True for a shuffled slot's shown name and for the pooled slots."""
    return shown == SLOTS_POOLED or any(shown == slot.shown for slot in SHUFFLED_SLOTS)


def group_of(shown: str) -> str:
    """The group of a generator as shown: SLOTS_POOLED for a slot, else the generator itself."""
    return next((slot.group for slot in SHUFFLED_SLOTS if slot.shown == shown), shown)


def slot_note(shown: Iterable[str]) -> str | None:
    """SLOT_NOTE when any of the generators `shown` is a slot or the pooled slots, else None."""
    return SLOT_NOTE if any(is_slot(name) for name in shown) else None


def display_order(shown: Iterable[str]) -> list[str]:
    """Generators as a list or a filter offers them: the pooled slots first, then every generator
    that is one model (by name, case-insensitive), then the slots in order."""
    names = set(shown)
    return sorted(names, key=lambda name: (name != SLOTS_POOLED, is_slot(name), name.lower()))


def resolve(value: str, shown: Collection[str]) -> tuple[str | None, tuple[str, ...]]:
    """A generator filter value read from a link, against the generators `shown` in a dataset:
    (the shown generator it means, or None; the shown generators a raw model was split into).

    A shown name stands for itself; a paper's short name ("claude-2", any case) for its shown
    name; a slot's raw name (`model_A`, as links said before slots were named) or short name
    ("slot a") for the slot; "pooled" or "slots A-E" for the pooled slots; a raw model that rules
    split ("claude") means none of them, and names them."""
    if value in shown:
        return value, ()
    folded = value.casefold()
    for rule in PAPER_NAMES:
        if folded == rule.name.casefold() and rule.shown in shown:
            return rule.shown, ()
    for slot in SHUFFLED_SLOTS:
        if folded in (slot.model.casefold(), slot.name.casefold()) and slot.shown in shown:
            return slot.shown, ()
    if folded in (alias.casefold() for alias in POOLED_ALIASES) and SLOTS_POOLED in shown:
        return SLOTS_POOLED, ()
    return None, tuple(rule.shown for rule in PAPER_NAMES if rule.model == value and rule.shown in shown)
