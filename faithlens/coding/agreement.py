"""Inter-coder agreement for human coding of summaries: how far coders agree on a codebook before
their codes are trusted as labels or compared with an LLM judge.

Every statistic comes from a maintained library (Cohen's kappa and the confusion matrix from
scikit-learn, Fleiss' kappa from statsmodels, Krippendorff's alpha from `krippendorff`) so the
numbers match what reviewers compute themselves; this module only shapes the codes for them and
turns "undefined" (nan, or a library refusing degenerate data) into None. The libraries are
imported inside the functions: the app's cold start must not pay for them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

Codes = Mapping[str, Mapping[str, str]]
"""unit_id -> coder -> the coder's (single) categorical code on that unit."""


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of two coders (a < b) over the `n` units both coded; None when undefined."""

    a: str
    b: str
    n: int
    kappa: float | None

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "n": self.n, "kappa": self.kappa}


@dataclass(frozen=True)
class Agreement:
    """Agreement of all coders over a set of units; see `agreement` for what each number covers."""

    coders: tuple[str, ...]
    units: int
    complete: int
    fleiss_kappa: float | None
    krippendorff_alpha: float | None
    pct_all_agree: float | None
    pairs: tuple[PairKappa, ...]

    def as_dict(self) -> dict:
        return {
            "units": self.units,
            "coders": list(self.coders),
            "complete": self.complete,
            "fleiss_kappa": self.fleiss_kappa,
            "krippendorff_alpha": self.krippendorff_alpha,
            "pct_all_agree": self.pct_all_agree,
            "pairs": [pair.as_dict() for pair in self.pairs],
        }


def _defined(value: float) -> float | None:
    """A library's result as a plain float, or None when it is nan (undefined)."""
    value = float(value)
    return None if math.isnan(value) else value


def all_agree(codes_of_unit: Mapping[str, str]) -> bool:
    """True when more than one coder coded the unit and all gave the same code."""
    return len(codes_of_unit) > 1 and len(set(codes_of_unit.values())) == 1


@dataclass(frozen=True)
class _Matrix:
    """Codes as the libraries take them: one row per coded unit, one column per coder, each cell the
    category's number or -1 where the coder did not code the unit. Built once, shared by all statistics."""

    coders: tuple[str, ...]
    categories: tuple[str, ...]
    cells: object  # numpy int array, units x coders

    @property
    def complete(self) -> object:
        return self.cells[(self.cells >= 0).all(axis=1)]


def _matrix(codes: Codes) -> _Matrix:
    import numpy as np

    units = sorted(unit for unit, by_coder in codes.items() if by_coder)
    coders = sorted({coder for by_coder in codes.values() for coder in by_coder})
    categories = sorted({code for by_coder in codes.values() for code in by_coder.values()})
    column = {coder: number for number, coder in enumerate(coders)}
    index = {category: number for number, category in enumerate(categories)}
    cells = np.full((len(units), len(coders)), -1, dtype=np.int64)
    for row, unit in enumerate(units):
        for coder, code in codes[unit].items():
            cells[row, column[coder]] = index[code]
    return _Matrix(tuple(coders), tuple(categories), cells)


def _pair_kappa(matrix: _Matrix, i: int, j: int) -> PairKappa:
    from sklearn.metrics import cohen_kappa_score

    a, b = matrix.coders[i], matrix.coders[j]
    both = matrix.cells[(matrix.cells[:, i] >= 0) & (matrix.cells[:, j] >= 0)]
    if not len(both):
        return PairKappa(a, b, 0, None)
    with warnings.catch_warnings():
        # Both coders using one and the same category: sklearn warns and returns nan.
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score(both[:, i], both[:, j], labels=list(range(len(matrix.categories))))
    return PairKappa(a, b, len(both), _defined(kappa))


def _fleiss(matrix: _Matrix) -> float | None:
    """statsmodels' Fleiss' kappa over the units every coder coded."""
    complete = matrix.complete
    if len(matrix.coders) < 2 or not len(complete):
        return None
    import numpy as np
    from statsmodels.stats.inter_rater import fleiss_kappa

    # The units x categories count table statsmodels' `aggregate_raters` builds, row by row there.
    table = np.stack([(complete == category).sum(axis=1) for category in range(len(matrix.categories))], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        # One category used throughout: expected agreement is 1 and kappa is 0/0.
        warnings.simplefilter("ignore")
        return _defined(fleiss_kappa(table, method="fleiss"))


def _krippendorff(matrix: _Matrix) -> float | None:
    """Nominal Krippendorff's alpha over all units, a missing code as nan (the library leaves out
    units with fewer than two codes)."""
    if len(matrix.coders) < 2:
        return None
    import krippendorff
    import numpy as np

    data = matrix.cells.T.astype(float)
    data[data < 0] = np.nan
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            alpha = krippendorff.alpha(
                reliability_data=data, value_domain=list(range(len(matrix.categories))), level_of_measurement="nominal"
            )
        except ValueError:
            # Fewer than two categories, or no unit with two codes: alpha is undefined.
            return None
    return _defined(alpha)


def _of(matrix: _Matrix) -> Agreement:
    complete = matrix.complete
    pct = None
    if len(matrix.coders) >= 2 and len(complete):
        pct = 100 * float((complete == complete[:, :1]).all(axis=1).mean())
    return Agreement(
        coders=matrix.coders,
        units=len(matrix.cells),
        complete=len(complete),
        fleiss_kappa=_fleiss(matrix),
        krippendorff_alpha=_krippendorff(matrix),
        pct_all_agree=pct,
        pairs=tuple(_pair_kappa(matrix, i, j) for i, j in combinations(range(len(matrix.coders)), 2)),
    )


def agreement(codes: Codes) -> Agreement:
    """Agreement of every coder on `codes`.

    Fleiss' kappa and the share of unanimous units use only the `complete` units (coded by every
    coder); Krippendorff's alpha uses all units, missing codes included; each pair's Cohen's kappa
    uses the units both coders coded.
    """
    return _of(_matrix(codes))


def per_code(codes: Codes, keys: Sequence[str]) -> list[tuple[str, Agreement]]:
    """For each code key, agreement on 'chose this code' vs 'did not' (binary presence) over the
    same units and coders — how a multi-choice codebook (TofuEval's 7 error types) reports agreement
    per type, and a single-choice one per code. A coder's codes on a unit are joined by '|'."""
    return _per_code(_matrix(codes), keys)


def with_per_code(codes: Codes, keys: Sequence[str]) -> tuple[Agreement, list[tuple[str, Agreement]]]:
    """`agreement` and `per_code` of the same codes, shaping them for the libraries once."""
    matrix = _matrix(codes)
    return _of(matrix), _per_code(matrix, keys)


def _per_code(matrix: _Matrix, keys: Sequence[str]) -> list[tuple[str, Agreement]]:
    import numpy as np

    out = []
    for key in keys:
        # Category 0: the coder coded the unit without this code; 1: with it; -1: did not code the unit.
        has_key = np.array([key in category.split("|") for category in matrix.categories], dtype=np.int64)
        cells = np.where(matrix.cells >= 0, has_key[matrix.cells], -1)
        out.append((key, _of(_Matrix(matrix.coders, ("0", "1"), cells))))
    return out


def confusion(codes: Codes, a: str, b: str) -> tuple[list[str], list[list[int]]]:
    """(labels sorted, sklearn confusion matrix rows = coder a's code, columns = coder b's) over
    units both coded."""
    shared = [by_coder for _, by_coder in sorted(codes.items()) if a in by_coder and b in by_coder]
    first, second = [by_coder[a] for by_coder in shared], [by_coder[b] for by_coder in shared]
    labels = sorted(set(first) | set(second))
    if not labels:
        return [], []
    from sklearn.metrics import confusion_matrix

    matrix = confusion_matrix(first, second, labels=labels)
    return labels, [[int(count) for count in row] for row in matrix]
