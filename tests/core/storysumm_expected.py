"""StorySumm's figures recomputed straight from data/storysumm with scikit-learn, independently of
faithlens: gold against every released evaluator at summary level (score sources tuned on val by the
release notebook's grid or by every cut point), and the per-generator table.

Also the printed-precision rule, written out here on its own: a printed figure is matched when ours
lies within half a unit of its last decimal (Tables 11, 12 and the notebook round kappa, precision and
recall to 2 decimals though their print drops trailing zeros).
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    f1_score,
    precision_score,
    recall_score,
)

from tests import raw

BINARY = raw.BINARY
SCORE_SOURCES = ("alignscore-roberta-large", "unieval")


def grid_threshold(scores: list[float], gold: list[str]) -> float:
    """First of 150 evenly spaced thresholds in [0, 1] with the highest balanced accuracy (score > t)."""
    best, best_t = -1.0, None
    for t in np.linspace(0, 1, 150):
        value = balanced_accuracy_score(gold, ["faithful" if s > t else "unfaithful" for s in scores])
        if value > best:
            best, best_t = value, float(t)
    return best_t


def cut_threshold(scores: list[float], gold: list[str]) -> float:
    """The lowest midpoint between two consecutive distinct scores with the highest balanced accuracy."""
    distinct = sorted(set(scores))
    best, best_t = -1.0, None
    for low, high in zip(distinct[:-1], distinct[1:], strict=True):
        t = (low + high) / 2
        value = balanced_accuracy_score(gold, ["faithful" if s > t else "unfaithful" for s in scores])
        if value > best:
            best, best_t = value, t
    return best_t


def thresholds(tuning: str = "grid") -> dict[str, float]:
    """Each score source's threshold, tuned on the val summaries against gold."""
    records, predictions = raw.storysumm_records(), raw.storysumm_predictions()
    val = [i for i in records if records[i]["split"] == "val"]
    tune = grid_threshold if tuning == "grid" else cut_threshold
    return {
        source: tune([predictions[source][i]["probs"] for i in val], [BINARY[records[i]["label"]] for i in val])
        for source in SCORE_SOURCES
    }


def figures(predicted: dict[str, str], split: str) -> dict[str, float]:
    """Every metric of `predicted` (summary id -> label) against gold on one split ('all': every summary)."""
    records = raw.storysumm_records()
    ids = [i for i in records if split == "all" or records[i]["split"] == split]
    gold = [BINARY[records[i]["label"]] for i in ids]
    guess = [predicted[i] for i in ids]
    easy = [predicted[i] == "unfaithful" for i in ids if records[i]["difficulty"] == "easy"]
    hard = [predicted[i] == "unfaithful" for i in ids if records[i]["difficulty"] == "hard"]
    return {
        "n": len(ids),
        "kappa": cohen_kappa_score(gold, guess),
        "pct_faithful": 100 * guess.count("faithful") / len(ids),
        "precision": precision_score(gold, guess, pos_label="faithful", zero_division=np.nan),
        "recall": recall_score(gold, guess, pos_label="faithful"),
        "pct_easy_detected": 100 * float(np.mean(easy)),
        "pct_hard_detected": 100 * float(np.mean(hard)),
        "balanced_accuracy": 100 * balanced_accuracy_score(gold, guess),
        "f1_faithful": f1_score(gold, guess, pos_label="faithful"),
        "f1_unfaithful": f1_score(gold, guess, pos_label="unfaithful"),
    }


def at_threshold(source: str, threshold: float) -> dict[str, str]:
    """A score source's labels: faithful when the score is above `threshold`."""
    return {
        i: "faithful" if p["probs"] > threshold else "unfaithful"
        for i, p in raw.storysumm_predictions()[source].items()
    }


def expected_rows(tuning: str = "grid") -> dict[tuple[str, str], dict[str, float]]:
    """Every summary-level row Compare shows for StorySumm: label sources on all/val/test, score
    sources on val/test at their `tuning` threshold (with it under "threshold")."""
    tuned = thresholds(tuning)
    rows = {}
    for source, by_id in raw.storysumm_predictions().items():
        if source in SCORE_SOURCES:
            predicted, splits = at_threshold(source, tuned[source]), ("val", "test")
        else:
            predicted, splits = {i: BINARY[p["label"]] for i, p in by_id.items()}, ("all", "val", "test")
        for split in splits:
            rows[(source, split)] = {**figures(predicted, split), "threshold": tuned.get(source)}
    return rows


def generator_table() -> dict[tuple[str, str], tuple[int, float, int, int]]:
    """(raw model, split) and ('Overall', 'all') -> (summaries, % gold faithful, # easy, # hard)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for record in raw.storysumm_records().values():
        groups.setdefault((record["model"], record["split"]), []).append(record)
        groups.setdefault(("Overall", "all"), []).append(record)
    return {
        key: (
            len(found),
            100 * sum(r["label"] == 1 for r in found) / len(found),
            sum(r["difficulty"] == "easy" for r in found),
            sum(r["difficulty"] == "hard" for r in found),
        )
        for key, found in groups.items()
    }


def within_printed(ours: float, printed: float | str, decimals: int | None = None) -> bool:
    """Ours rounds to the printed figure: within half a unit of its last decimal (`decimals` when the
    table rounds to more decimals than its print shows)."""
    shown = -Decimal(str(printed)).as_tuple().exponent
    places = max(int(shown), 0, decimals or 0)
    return abs(ours - float(printed)) <= 0.5 * 10**-places + 1e-9
