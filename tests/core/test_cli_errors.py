"""`python -m faithlens errors`: the rows the Errors page shows, as JSON, from counts made here from the
raw TofuEval CSVs; recall per value with --recall-for (hand-computed on a small import); one line and
exit 2 for what it cannot do; and it reads while another process holds the database."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests import raw
from tests.core.hand_errors import CODER_SOURCE, DATASET

ROOT = Path(__file__).resolve().parents[2]
HOLD = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ok', flush=True); time.sleep(60)"


def run(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "faithlens", "errors", "--db", str(db), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_rows_per_generator_are_the_raw_counts(built_db: Path) -> None:
    done = run(built_db, "--dataset", "tofueval", "--family", "error_type", "--by", "generator", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rows = raw.tofueval_rows()
    typed = [
        (raw.tofueval_generator(r["model_name"]), {t.strip() for t in r["type"].split(",") if t.strip()}) for r in rows
    ]
    per_cell = Counter((t, model) for model, types in typed for t in types)
    per_group = Counter(model for model, types in typed if types)
    expected = [
        {"family": "error_type", "value": t, "group": g, "units": n, "pct": round(100 * n / per_group[g], 2)}
        for (t, g), n in per_cell.items()
    ]
    got = [row for row in out["rows"] if row["group"] != "all"]
    key = lambda row: (row["value"], row["group"])  # noqa: E731
    nonzero = [row for row in got if row["units"]]
    assert sorted(nonzero, key=key) == sorted(expected, key=key)
    assert (out["family"], out["level"], out["by"], out["of"]) == ("error_type", "sentence", "generator", "tagged")


def test_recall_for_a_coder_is_worked_by_hand(hand_db: Path) -> None:
    done = run(hand_db, "--dataset", DATASET, "--family", "error_type", "--recall-for", CODER_SOURCE, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["reference"] == "gold" and out["typed"] == "single"
    recall = {row["value"]: (row["flagged"], row["total"], row["recall"]) for row in out["recall"]}
    assert recall == {"A": (2, 3, 0.6667), "B": (1, 1, 1.0)}
    assert {tuple(sorted(row)) for row in out["recall"]} == {
        ("family", "flagged", "recall", "source", "threshold", "total", "units", "value")
    }


def test_recall_of_any_unit_without_a_reference(hand_db: Path) -> None:
    args = ("--dataset", DATASET, "--family", "error_type", "--recall-for", CODER_SOURCE)
    done = run(hand_db, *args, "--reference", "none", "--typed", "any", "--json")
    recall = {row["value"]: (row["flagged"], row["total"]) for row in json.loads(done.stdout)["recall"]}
    # A: s1#s0, s2#s2, s3#s0 flagged of s1#s0, s1#s1, s2#s1, s2#s2, s3#s0; B: s2#s0 of s1#s1, s2#s0.
    assert recall == {"A": (3, 5), "B": (1, 2)}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--family", "nope"), "error: tofueval has no tag family or verdicts 'nope'"),
        (("--family", "error_type", "--recall-for", "ghost"), "error: 'ghost' gives no labels or scores"),
        (("--family", "error_type", "--recall-for", "gold", "--split", "val"), "error: tofueval has no split 'val'"),
    ],
)
def test_what_it_cannot_do_is_one_line_and_exit_2(built_db: Path, args: tuple[str, ...], message: str) -> None:
    done = run(built_db, "--dataset", "tofueval", *args)
    assert done.returncode == 2
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == ""


def test_it_reads_while_another_process_holds_the_database(db_copy: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db_copy)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        done = run(db_copy, "--dataset", "storysumm", "--family", "difficulty", "--json")
        assert done.returncode == 0, done.stderr
        difficulty = Counter(r["difficulty"] for r in raw.storysumm_records().values() if r.get("difficulty"))
        assert {row["value"]: row["units"] for row in json.loads(done.stdout)["rows"]} == difficulty
        assert "snapshot" in done.stderr
    finally:
        holder.kill()
        holder.wait()
