"""The shared label vocabulary and the levels labels speak to."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """One value of the shared vocabulary; each dataset's own spelling is kept as `raw_value`."""

    FAITHFUL = "faithful"
    UNFAITHFUL = "unfaithful"
    PARTIAL = "partial"
    UNVERIFIABLE = "unverifiable"
    AMBIGUOUS = "ambiguous"
    NA = "n/a"


class Level(StrEnum):
    """What a label is about: a whole summary, one of its sentences, or one of its claims."""

    SUMMARY = "summary"
    SENTENCE = "sentence"
    CLAIM = "claim"


VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)
LEVELS: tuple[str, ...] = tuple(level.value for level in Level)
GOLD = "gold"
