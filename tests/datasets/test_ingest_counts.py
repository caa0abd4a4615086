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
    assert stats[name] == expected()


def test_stats_json_shape_uses_only_the_shared_vocabulary(stats: dict) -> None:
    allowed_values = {"faithful", "unfaithful", "partial", "unverifiable", "ambiguous", "n/a"}
    for info in stats.values():
        assert set(info) == {"documents", "summaries", "sentences", "claims", "labels"}
        for levels in info["labels"].values():
            assert set(levels) <= {"summary", "sentence", "claim"}
            for values in levels.values():
                assert set(values) <= allowed_values


def test_every_evaluator_file_is_its_own_label_source(stats: dict) -> None:
    expected = set(raw.storysumm_predictions())
    score_only = {s for s, p in raw.storysumm_predictions().items() if all("label" not in r for r in p.values())}
    assert expected - score_only <= set(stats["storysumm"]["labels"])
    assert {"claude-3-opus-20240229/justquestion", "gpt-4-0125-preview/cot", "mixtral/cot"} <= set(
        stats["storysumm"]["labels"]
    )
