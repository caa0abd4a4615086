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
AMBIGUITY_FAMILY = "ambiguity_type"
"""The tag family of ARM's ambiguity types (1 Wording, 2 Detail, 3 Causation, 4 Explicit, 5 the
unnamed extra type): set by a model, a coder or an imported file, so it lives below all three."""

MATCHES, DIFFERS, MISSING, UNPRINTED = "matches", "differs", "no figure of ours", "no printed number"
"""How a figure of ours stands beside a paper's (`faithlens.analysis.published`): it rounds to the printed
figure, it does not, we have none, or the paper draws a chart and prints no number to compare it with.
Here, not beside the published figures, so a page's URL state can name them without loading those."""
FIGURE_STATUSES: tuple[str, ...] = (MATCHES, DIFFERS, MISSING, UNPRINTED)
