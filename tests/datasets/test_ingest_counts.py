"""The bundled datasets load completely: counts and label distributions match the raw files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import raw

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stats(built_db: Path) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "faithlens", "stats", "--json", "--db", str(built_db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(result.stdout)["datasets"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [("storysumm", raw.storysumm_expected), ("fables", raw.fables_expected), ("tofueval", raw.tofueval_expected)],
)
def test_stats_match_raw_files(stats: dict, name: str, expected) -> None:
    counted = {key: value for key, value in stats[name].items() if key not in ("extracted_claims", "extracted_labels")}
    assert counted == expected()
    assert stats[name]["extracted_claims"] == [], "a fresh build holds no claims a model extracted"
    assert stats[name]["extracted_labels"] == {}


def test_stats_json_shape_uses_only_the_shared_vocabulary(stats: dict) -> None:
    allowed_values = {"faithful", "unfaithful", "partial", "unverifiable", "ambiguous", "n/a"}
    for info in stats.values():
        assert set(info) == {
            "documents",
            "summaries",
            "sentences",
            "claims",
            "extracted_claims",
            "labels",
            "extracted_labels",
            "sources",
        }
        for levels in info["labels"].values():
            assert set(levels) <= {"summary", "sentence", "claim"}
            for values in levels.values():
                assert set(values) <= allowed_values


def test_every_evaluator_file_is_its_own_label_source(stats: dict) -> None:
    assert set(raw.storysumm_predictions()) | {"gold"} == set(stats["storysumm"]["sources"])
    assert {"claude-3-opus-20240229/justquestion", "gpt-4-0125-preview/cot", "mixtral/cot"} <= set(
        stats["storysumm"]["labels"]
    )


@pytest.mark.parametrize("source", ["alignscore-roberta-large", "unieval"])
def test_score_only_evaluators_are_listed_with_their_scores(stats: dict, source: str) -> None:
    """AlignScore and UniEval give scores, no labels: stats still lists them, with one score per summary scored."""
    predictions = raw.storysumm_predictions()[source]
    scores = [record["probs"] for record in predictions.values() if isinstance(record.get("probs"), (int, float))]
    assert scores and all("label" not in record for record in predictions.values())
    assert stats["storysumm"]["sources"][source] == {"kind": "evaluator", "labelled": 0, "scored": len(scores)}


def test_stats_text_names_every_label_source(built_db: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "faithlens", "stats", "--db", str(built_db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    scored = len(raw.storysumm_predictions()["unieval"])
    assert f"  unieval (evaluator): 0 labelled, {scored} scored" in result.stdout.splitlines()
