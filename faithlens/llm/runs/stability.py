"""Self-agreement of a run with repeats, as TofuEval's Table 4 reports it: the same prompt asked K
times at the method's temperature (TofuEval: 0.7, three runs), Cohen's kappa between the verdicts of
each pair of repeats (we show every pair and their mean), and the share of units whose verdict flips.

Only units with a verdict in every repeat count; kappa is undefined (None) when a pair of repeats
uses one and the same label throughout (chance agreement is then 1).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import duckdb
from sklearn.metrics import cohen_kappa_score


@dataclass(frozen=True)
class PairKappa:
    first: int
    second: int
    kappa: float | None


@dataclass(frozen=True)
class Stability:
    run_id: int
    source: str
    repeats: int
    units: int
    """Units with a verdict in every repeat."""
    pairs: tuple[PairKappa, ...]
    flipping: tuple[str, ...]
    """Units whose verdicts are not all the same."""

    @property
    def kappa(self) -> float | None:
        """The mean of the pairs' kappas (the defined ones)."""
        known = [p.kappa for p in self.pairs if p.kappa is not None]
        return sum(known) / len(known) if known else None

    @property
    def flip_pct(self) -> float | None:
        return 100.0 * len(self.flipping) / self.units if self.units else None

    def to_json(self) -> dict[str, object]:
        return {
            "repeats": self.repeats,
            "units": self.units,
            "kappa_mean": self.kappa,
            "kappa_pairs": [{"repeats": [p.first, p.second], "kappa": p.kappa} for p in self.pairs],
            "flipping_units": len(self.flipping),
            "flipping_pct": self.flip_pct,
        }


def of_run(cur: duckdb.DuckDBPyConnection, run_id: int) -> Stability | None:
    """Self-agreement across the run's repeats; None for a run with one repeat."""
    row = cur.execute(
        "SELECT source, CAST(json_extract(spec, '$.repeats') AS INTEGER) FROM llm_run WHERE run_id = ?", [run_id]
    ).fetchone()
    if row is None or row[1] < 2:
        return None
    source, repeats = row
    verdicts: dict[str, dict[int, str]] = {}
    for target_id, repeat, label in cur.execute(
        """
        SELECT target_id, repeat, arg_max(label, event_id) FROM llm_run_event
        WHERE run_id = ? AND kind = 'item' GROUP BY target_id, repeat
        HAVING arg_max(status, event_id) = 'ok' AND arg_max(label, event_id) IS NOT NULL
        """,
        [run_id],
    ).fetchall():
        verdicts.setdefault(target_id, {})[repeat] = label
    complete = {unit: by_repeat for unit, by_repeat in sorted(verdicts.items()) if len(by_repeat) == repeats}
    pairs = tuple(
        PairKappa(a, b, _kappa([v[a] for v in complete.values()], [v[b] for v in complete.values()]))
        for a, b in itertools.combinations(range(repeats), 2)
    )
    flipping = tuple(unit for unit, by_repeat in complete.items() if len(set(by_repeat.values())) > 1)
    return Stability(run_id, source, repeats, len(complete), pairs, flipping)


def _kappa(first: list[str], second: list[str]) -> float | None:
    if not first or len(set(first) | set(second)) < 2:
        return None
    value = float(cohen_kappa_score(first, second))
    return None if math.isnan(value) else value
