"""`python -m faithlens export`: a label source as CSV, JSON Lines and Parquet, each file read back with
its own reader (csv, json, DuckDB's Parquet reader) and counted against the raw files (tests/raw.py),
with the units' text context; and bad arguments as one line naming what exists."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from tests import raw

ROOT = Path(__file__).resolve().parents[2]


def _faithlens(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "faithlens", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def _read(path: Path, fmt: str) -> list[dict]:
    if fmt == "csv":
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    if fmt == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    with duckdb.connect() as memory:
        found = memory.execute("SELECT * FROM read_parquet(?)", [str(path)])
        names = [column[0] for column in found.description]
        return [dict(zip(names, row, strict=True)) for row in found.fetchall()]


def _export(db: Path, tmp_path: Path, dataset: str, source: str, fmt: str) -> list[dict]:
    out = tmp_path / f"{dataset}.{fmt}"
    done = _faithlens(
        "export", "--dataset", dataset, "--source", source, "--format", fmt, "--out", str(out), "--db", str(db)
    )
    assert done.returncode == 0, done.stderr
    rows = _read(out, fmt)
    assert done.stdout.startswith(f"wrote {len(rows):,} labels of {source} ({dataset}) to {out}")
    return rows


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_storysumm_gold_read_back_matches_the_raw_file(built_db: Path, tmp_path: Path, fmt: str) -> None:
    rows = _export(built_db, tmp_path, "storysumm", "gold", fmt)
    by_level: dict[str, Counter] = {}
    for row in rows:
        by_level.setdefault(row["level"], Counter())[row["label"]] += 1
    assert {level: dict(c) for level, c in by_level.items()} == raw.storysumm_expected()["labels"]["gold"]

    records = raw.storysumm_records()
    summary_id = sorted(records)[0]
    record = records[summary_id]
    mine = [row for row in rows if row["summary_id"] == summary_id]
    assert [row["level"] for row in mine] == ["summary"] + ["sentence"] * len(record["summary"])
    assert [row["unit_text"] for row in mine[1:]] == [s.strip() for s in record["summary"]]
    assert mine[0]["unit_text"] in (None, ""), "a summary-level row has no unit text"
    assert mine[0]["document_text"] == record["story"] and mine[0]["generator"] == record["model"]
    assert mine[0]["raw_label"] == str(record["label"]) and mine[0]["split"] == record["split"]
    unfaithful = [row for row in mine[1:] if row["label"] == "unfaithful"]
    assert all(row["explanation"] for row in unfaithful), "gold explanations of unfaithful sentences come along"
    assert "raw_output" not in rows[0], "the LLM columns are an LLM source's only"


def test_fables_gold_claims_and_an_evaluator_source(built_db: Path, tmp_path: Path) -> None:
    claims = _export(built_db, tmp_path, "fables", "gold", "jsonl")
    expected = raw.fables_expected()["labels"]["gold"]["claim"]
    assert dict(Counter(row["label"] for row in claims)) == expected
    assert all(isinstance(row["evidence"], list) for row in claims), "JSON Lines keeps the evidence quotes as lists"

    source = "gpt-4-0125-preview/cot"
    levels, _ = raw.storysumm_prediction_counts(raw.storysumm_records(), raw.storysumm_predictions()[source])
    rows = _export(built_db, tmp_path, "storysumm", source, "csv")
    counted: dict[str, Counter] = {}
    for row in rows:
        counted.setdefault(row["level"], Counter())[row["label"]] += 1
    assert counted == levels


def test_bad_arguments_are_one_line_naming_what_exists(built_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.csv"
    base = ["export", "--out", str(out), "--db", str(built_db), "--format", "csv"]
    nope = _faithlens(*base, "--dataset", "storysumm", "--source", "nobody")
    assert nope.returncode == 2
    (line,) = nope.stderr.strip().splitlines()
    assert line.startswith("error: dataset 'storysumm' has no label source 'nobody' (its sources: gold, ")
    assert all(source in line for source in raw.storysumm_predictions())
    dataset = _faithlens(*base, "--dataset", "nope", "--source", "gold")
    assert (
        dataset.returncode == 2
        and dataset.stderr.strip() == "error: no dataset 'nope' (use one of fables, storysumm, tofueval)"
    )
    fmt = _faithlens(
        "export",
        "--out",
        str(out),
        "--db",
        str(built_db),
        "--dataset",
        "storysumm",
        "--source",
        "gold",
        "--format",
        "xlsx",
    )
    assert (
        fmt.returncode == 2
        and fmt.stderr.strip() == "error: unknown export format 'xlsx' (use one of csv, jsonl, parquet)"
    )
    assert not out.exists()
