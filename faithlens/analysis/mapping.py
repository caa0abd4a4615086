"""From the shared six-value vocabulary to the binary faithful / unfaithful that metrics need.

`faithful` and `unfaithful` map to themselves and `n/a` (commentary, not a statement about the
source) is always left out. The three in-between values are the user's choice, each one of
`unfaithful`, `faithful` or `exclude`:

- `partial` (FABLES' PartialSupport): counted as unfaithful by default; FABLES' own auto-rater
  experiments leave it out (`partial=exclude`).
- `unverifiable` (FABLES' "can't verify"): left out by default, as FABLES does.
- `ambiguous` (ARM-style sources): left out by default.

The stable string form (`partial=unfaithful,unverifiable=exclude,ambiguous=exclude`) is what the
CLI's `--mapping` and the Compare page's URL carry; keys left out keep their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from faithlens.errors import FaithLensError
from faithlens.vocab import Verdict

FAITHFUL = Verdict.FAITHFUL.value
UNFAITHFUL = Verdict.UNFAITHFUL.value
EXCLUDE = "exclude"
CHOICES: tuple[str, ...] = (UNFAITHFUL, FAITHFUL, EXCLUDE)

_WHY = {
    "partial": "partly supported by the source",
    "unverifiable": "cannot be checked against the source",
    "ambiguous": "open to more than one reading",
}


@dataclass(frozen=True)
class Mapping:
    """Where each in-between verdict goes; faithful, unfaithful and n/a are fixed."""

    partial: str = UNFAITHFUL
    unverifiable: str = EXCLUDE
    ambiguous: str = EXCLUDE

    def __post_init__(self) -> None:
        for field in fields(self):
            if getattr(self, field.name) not in CHOICES:
                raise FaithLensError(
                    f"mapping: {field.name}={getattr(self, field.name)!r} is not a choice",
                    f"use one of {', '.join(CHOICES)}",
                )

    def choices(self) -> dict[str, str]:
        """The user-chosen part, in a fixed order: {'partial': ..., 'unverifiable': ..., 'ambiguous': ...}."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    def target(self, value: str) -> str | None:
        """Binary label for one vocabulary value; None when the unit is left out."""
        if value in (FAITHFUL, UNFAITHFUL):
            return value
        chosen = self.choices().get(value, EXCLUDE)
        return None if chosen == EXCLUDE else chosen

    def values_to(self, binary: str) -> list[str]:
        """Every vocabulary value that counts as `binary` (for bound SQL list parameters)."""
        return [v.value for v in Verdict if self.target(v.value) == binary]

    def __str__(self) -> str:
        return ",".join(f"{key}={value}" for key, value in self.choices().items())

    def describe(self) -> list[str]:
        """One plain-English line per vocabulary value, as shown on the Compare page."""
        lines = ["faithful counts as faithful.", "unfaithful counts as unfaithful."]
        for key, value in self.choices().items():
            what = f"{key} ({_WHY[key]})"
            lines.append(f"{what} is left out." if value == EXCLUDE else f"{what} counts as {value}.")
        lines.append("n/a (commentary, not a statement about the source) is left out.")
        return lines

    @classmethod
    def parse(cls, text: str | None) -> Mapping:
        """`partial=exclude,unverifiable=faithful` -> Mapping; empty or None -> the default."""
        mapping = cls()
        if not text or not text.strip():
            return mapping
        known = set(mapping.choices())
        for part in text.split(","):
            key, sep, value = (piece.strip() for piece in part.partition("="))
            if not sep or not key or not value:
                raise FaithLensError(
                    f"mapping: cannot read {part.strip()!r}", "write key=value pairs, e.g. partial=unfaithful"
                )
            if key in (FAITHFUL, UNFAITHFUL, Verdict.NA.value):
                raise FaithLensError(
                    f"mapping: {key} is fixed", f"only {', '.join(sorted(known))} can be mapped; n/a is always left out"
                )
            if key not in known:
                raise FaithLensError(f"mapping: unknown value {key!r}", f"map one of {', '.join(sorted(known))}")
            mapping = replace(mapping, **{key: value})
        return mapping


DEFAULT = Mapping()
FABLES_AUTORATER = Mapping(partial=EXCLUDE, unverifiable=EXCLUDE, ambiguous=EXCLUDE)
