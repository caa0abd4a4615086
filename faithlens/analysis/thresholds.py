"""Thresholds that turn a score source's scores into labels: the user's, or tuned as the papers do.

`Thresholds` is the stable string form `SOURCE=NUMBER,SOURCE=NUMBER` that the CLI's `--threshold`
and the Compare page's URL carry (one `parse`, one `__str__`, as `mapping.Mapping`). `Threshold`
records the one a score source was compared at: the caller's, or the first candidate that reaches
the highest balanced accuracy on the val/dev split (StorySumm, TofuEval), applied to the other
splits; a dataset without val/dev is tuned on all units together (in-sample). The tuning itself is
`faithlens.analysis.metrics.tune_threshold`.

Two searches (`TUNINGS`) pick the candidates. `grid`, the default, is the StorySumm release's
notebook (Results.ipynb): 150 evenly spaced thresholds in [0, 1]; it reproduces the release's own
results table. `cutpoints` tries every midpoint between two consecutive distinct val scores, so no
split of the val scores is missed: it reproduces the paper's Table 8 UniEval val row, whose
threshold falls between two val scores that no grid point separates. The paper does not say how it
searched.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from faithlens.errors import FaithLensError

ALL = "all"
TUNING_SPLITS = ("val", "dev")
GRID, CUT_POINTS = "grid", "cutpoints"
TUNINGS = (GRID, CUT_POINTS)
TUNING_NAMES = {GRID: "the 150-point grid of the release's notebook", CUT_POINTS: "the exhaustive cut-point search"}
"""Each search in words, for sentences ("tuned by ...")."""


@dataclass(frozen=True)
class Thresholds(Mapping[str, float]):
    """User-set thresholds per score source, in the order given."""

    values: tuple[tuple[str, float], ...] = field(default=())

    def __getitem__(self, source: str) -> float:
        return dict(self.values)[source]

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self.values))

    def __len__(self) -> int:
        return len(dict(self.values))

    def __str__(self) -> str:
        return ",".join(f"{source}={value:.6g}" for source, value in dict(self.values).items())

    @classmethod
    def of(cls, values: Mapping[str, float]) -> Thresholds:
        return cls(tuple((source, float(value)) for source, value in values.items()))

    @classmethod
    def parse(cls, text: str | None) -> Thresholds:
        """`unieval=0.5,alignscore-roberta-large=0.7` -> Thresholds; empty or None -> none set."""
        if not text or not text.strip():
            return cls()
        found: dict[str, float] = {}
        for part in text.split(","):
            source, sep, number = (piece.strip() for piece in part.rpartition("="))
            try:
                value = float(number)
            except ValueError:
                value = math.nan
            if not sep or not source or not math.isfinite(value):
                raise FaithLensError(
                    f"threshold {part.strip()!r}: expected SOURCE=NUMBER", "e.g. unieval=0.88 (a finite number)"
                )
            found[source] = value
        return cls.of(found)


@dataclass(frozen=True)
class Threshold:
    """The threshold applied to a score source and where it came from."""

    value: float
    tuned: bool  # False when the caller set it (the page's slider, the CLI's --threshold)
    tuned_on: str  # split the tuning used ('all' when the dataset has no val/dev split)
    tuned_value: float | None  # what tuning gave (None when the caller set the threshold)
    low: float
    high: float
    tuning: str = GRID
    """The search that tuned it (`TUNINGS`); kept when the caller set the value, to say what it replaced."""
    candidates: int = 0
    """How many thresholds the search tried."""

    def how_tuned(self) -> str:
        """The tuning in words, for captions and the CLI: "the first of 150 evenly spaced thresholds ..."."""
        if self.tuning == CUT_POINTS:
            return (
                f"the lowest of the {self.candidates} midpoints between consecutive distinct {self.tuned_on} scores "
                "(an exhaustive cut-point search) that reaches the highest balanced accuracy"
            )
        return (
            f"the first of {self.candidates} evenly spaced thresholds in [{self.low:g}, {self.high:g}] that reaches "
            "the highest balanced accuracy"
        )
