"""`python -m faithlens metrics`: the JSON shape (every number the Compare page shows), --db and
FAITHLENS_DB, and exit 2 with one line on stderr for choices it cannot honour."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from faithlens import cli, config
from faithlens.analysis.metrics import BinaryMetrics
from faithlens.views import compare
from tests import raw
from tests.core import storysumm_expected as expected
from tests.core.storysumm_published import FIELDS, PAPER_TABLE_8

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "source",
    "split",
    "n",
    "kappa",
    "pct_faithful",
    "precision",
    "recall",
    "pct_easy_detected",
    "pct_hard_detected",
    "balanced_accuracy",
    "f1_faithful",
    "f1_unfaithful",
    "macro_f1",
    "threshold",
    "left_out",
    "confusion",
    "reference_labelled",
    "labelled",
    "both",
    "tuned_on",
}
ARGS = ["metrics", "--dataset", "storysumm", "--level", "summary", "--reference", "gold", "--json"]


def run(args: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    code = cli.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_rows_per_source_and_split(built_db: Path, capsys: pytest.CaptureFixture) -> None:
    sources = "fables-gpt-4-turbo-preview,unieval"
    code, out, err = run([*ARGS, "--sources", sources, "--db", str(built_db)], capsys)
    assert code == 0, err
    rows = json.loads(out)
    assert all(set(row) == KEYS for row in rows)
    assert [(row["source"], row["split"]) for row in rows] == [
        ("fables-gpt-4-turbo-preview", "all"),
        ("fables-gpt-4-turbo-preview", "val"),
        ("fables-gpt-4-turbo-preview", "test"),
        ("unieval", "val"),
        ("unieval", "test"),
    ]
    records, fables = raw.storysumm_records(), raw.storysumm_predictions()["fables-gpt-4-turbo-preview"]
    first = rows[0]
    assert first["n"] == len(records)
    assert first["pct_faithful"] == pytest.approx(
        100 * sum(p["label"] for p in fables.values()) / len(fables), abs=1e-4
    )
    ids = sorted(records)
    gold, predicted = [records[i]["label"] for i in ids], [fables[i]["label"] for i in ids]
    assert first["kappa"] == pytest.approx(cohen_kappa_score(gold, predicted), abs=1e-5)
    assert first["macro_f1"] == pytest.approx(f1_score(gold, predicted, average="macro"), abs=1e-5)
    assert first["left_out"] == 0 and first["both"] == first["labelled"] == first["reference_labelled"] == len(ids)
    flagged = {
        (g, p): sum(1 for x, y in zip(gold, predicted, strict=True) if (x, y) == (g, p)) for g in (0, 1) for p in (0, 1)
    }
    assert first["confusion"] == [[flagged[1, 1], flagged[1, 0]], [flagged[0, 1], flagged[0, 0]]], "faithful (1) first"
    assert first["tuned_on"] is None and rows[3]["tuned_on"] == "val", "unieval's threshold is tuned on val"
    assert first["threshold"] is None
    assert 0 <= rows[3]["threshold"] <= 1 and rows[3]["threshold"] == rows[4]["threshold"]
    assert all(0 <= row["balanced_accuracy"] <= 100 for row in rows), "percentages are 0-100"
    val = [i for i in ids if records[i]["split"] == "val"]
    assert rows[1]["n"] == len(val) and rows[3]["n"] == len(val)


def test_unknown_fields_are_null_not_zero(built_db: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run(
        ["metrics", "--dataset", "storysumm", "--level", "sentence", "--json", "--db", str(built_db)], capsys
    )
    rows = json.loads(out)
    assert code == 0 and {row["source"] for row in rows} == {"minicheck-flan-t5-large"}
    assert all(row["pct_easy_detected"] is None and row["pct_hard_detected"] is None for row in rows)


def test_faithlens_db_environment_variable(
    built_db: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config.SETTINGS["db"].env, str(built_db))
    code, out, err = run([*ARGS, "--sources", "mixtral/cot"], capsys)
    assert code == 0, err
    assert {row["source"] for row in json.loads(out)} == {"mixtral/cot"}


def test_mapping_option_decides_which_claims_count(db_copy: Path, capsys: pytest.CaptureFixture) -> None:
    gold = raw.fables_expected()["labels"]["gold"]["claim"]
    with duckdb.connect(str(db_copy)) as conn:
        conn.execute("INSERT INTO label_source (dataset, source, kind) VALUES ('fables', 'coder:yes', 'coder')")
        conn.execute(
            "INSERT INTO label (dataset, source, level, target_id, value) SELECT dataset, 'coder:yes', level, "
            "target_id, 'faithful' FROM current_label WHERE dataset = 'fables' AND source = 'gold'"
        )
    base = ["metrics", "--dataset", "fables", "--level", "claim", "--json", "--db", str(db_copy)]
    default = json.loads(run(base, capsys)[1])
    as_fables = json.loads(run([*base, "--mapping", "partial=exclude"], capsys)[1])
    assert [row["split"] for row in default] == ["all"], "FABLES has no splits"
    assert default[0]["n"] == gold["faithful"] + gold["unfaithful"] + gold["partial"]
    assert as_fables[0]["n"] == gold["faithful"] + gold["unfaithful"]
    assert default[0]["left_out"] == gold["unverifiable"], "Compare's 'Left out': unverifiable by default"
    assert as_fables[0]["left_out"] == gold["partial"] + gold["unverifiable"]
    assert as_fables[0]["both"] == sum(gold.values())


@pytest.mark.parametrize(
    ("dataset", "level", "extra"),
    [("storysumm", "summary", []), ("tofueval", "sentence", ["--by-topic"]), ("fables", "claim", [])],
)
def test_json_carries_every_figure_of_the_compare_view(
    dataset: str, level: str, extra: list[str], db_copy: Path, capsys: pytest.CaptureFixture
) -> None:
    """Each number the Compare page draws from its view model (`compare.compare`: every metric of a
    row, its threshold, its left-out units and confusion matrix, and the pair's coverage) is in the
    row `metrics --json` prints for the same choices."""
    if dataset != "storysumm":  # a second source: gold with every third verdict flipped, in-between labels kept
        with duckdb.connect(str(db_copy)) as conn:
            conn.execute(
                f"INSERT INTO label_source (dataset, source, kind) VALUES ('{dataset}', 'coder:copy', 'coder')"
            )
            conn.execute(
                "INSERT INTO label (dataset, source, level, target_id, value) SELECT dataset, 'coder:copy', level, "
                "target_id, CASE WHEN hash(target_id) % 3 <> 0 THEN value WHEN value = 'faithful' THEN 'unfaithful' "
                "WHEN value = 'unfaithful' THEN 'faithful' ELSE value END FROM current_label "
                f"WHERE dataset = '{dataset}' AND source = 'gold' AND level = '{level}'"
            )
    code, out, err = run(
        ["metrics", "--dataset", dataset, "--level", level, "--json", "--db", str(db_copy), *extra], capsys
    )
    assert code == 0, err
    printed = {(row["source"], row["split"], row.get("topic_type"), row.get("corpus")): row for row in json.loads(out)}
    with duckdb.connect(str(db_copy), read_only=True) as conn, conn.cursor() as cur:
        view = compare.compare(cur, dataset, level, by_topic=bool(extra))
    shown = [(pair, row) for pair in view.pairs for row in pair.rows]
    assert len(printed) == len(shown) > 0
    for pair, row in shown:
        group = (None if row.subset.topic_type == compare.ALL else row.subset.topic_type,
                 None if row.subset.corpus == compare.ALL else row.subset.corpus) if extra else (None, None)  # fmt: skip
        out_row = printed[(row.source, row.split, *group)]
        for field in dataclasses.fields(BinaryMetrics):
            assert out_row[field.name] == pytest.approx(getattr(row.metrics, field.name), abs=1e-6), field.name
        assert out_row["threshold"] == pytest.approx(row.threshold, abs=1e-6)
        assert out_row["left_out"] == row.excluded and out_row["confusion"] == [list(line) for line in row.confusion]
        assert (out_row["reference_labelled"], out_row["labelled"], out_row["both"]) == (
            view.reference_labelled,
            pair.labelled,
            pair.both,
        )
    if dataset == "fables":
        assert any(row["left_out"] for row in printed.values())


def test_a_dataset_with_one_source_has_nothing_to_compare(built_db: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, err = run(["metrics", "--dataset", "fables", "--level", "claim", "--db", str(built_db)], capsys)
    assert code == 2 and out == "" and "nothing to compare" in err


@pytest.mark.parametrize(
    "extra",
    [
        ["--sources", "no-such-source"],
        ["--reference", "unieval"],
        ["--mapping", "partial=perhaps"],
        ["--level", "paragraph"],
        ["--dataset", "nope"],
        ["--threshold", "unieval=high"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(built_db: Path, capsys: pytest.CaptureFixture, extra: list[str]) -> None:
    code, out, err = run([*ARGS, "--db", str(built_db), *extra], capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")


def test_runs_as_a_module(built_db: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "faithlens", *ARGS, "--sources", "nope", "--db", str(built_db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2 and "no label source 'nope'" in result.stderr


def test_tuning_cutpoints_reproduces_the_papers_unieval_val_row(built_db: Path, capsys: pytest.CaptureFixture) -> None:
    args = [*ARGS, "--sources", "unieval", "--db", str(built_db)]
    code, out, _ = run([*args, "--tuning", "cutpoints"], capsys)
    rows = {row["split"]: row for row in json.loads(out)}
    assert code == 0 and rows["val"]["threshold"] == pytest.approx(
        expected.thresholds("cutpoints")["unieval"], abs=1e-6
    )
    assert all(
        expected.within_printed(rows["val"][f], p)
        for f, p in zip(FIELDS, PAPER_TABLE_8[("unieval", "val")], strict=True)
    )
    code, out, _ = run(args, capsys)
    assert json.loads(out)[0]["threshold"] == pytest.approx(expected.thresholds("grid")["unieval"], abs=1e-6)
