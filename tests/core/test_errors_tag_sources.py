"""Errors counts the dataset's own (gold) tags unless another tag source is chosen: a coder's tags,
written through the coding events on a copy of the database, and a changed gold tag, imported from an
edited copy of a TofuEval CSV, each move a figure only when their source is counted. Expected counts
come from the raw CSVs (tests/raw.py); the issue's example is TofuEval Figure 2's Model-Extra ×
Extrinsic Information, 68 from gold, which a pilot coding of two more sentences made 70."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from faithlens import querystate
from faithlens.build import ingest
from faithlens.errors import NotFoundError
from faithlens.views import error_links, errors, explore
from faithlens.views.states import ExploreState
from tests import raw
from tests.pilot_codes import CODER, EXTRINSIC, code_extrinsic, unit_ids, untyped_model_extra
from tests.pilot_codes import error_types as _types

ROOT = Path(__file__).resolve().parents[2]
EDITED = "tofu-edit"
EDITED_FILE = "mediasum_factual_eval_test.csv"


def _cell(cur, dataset: str, tagged_by: str | None, group: str = "Model-Extra") -> tuple[int, int]:
    """(Extrinsic Information × `group` in the distribution by generator, the units Explore opens for it)."""
    family = errors.find_family(cur, dataset, "error_type")
    shown = errors.distribution(cur, dataset, family, "generator", tagged_by=tagged_by)
    row = next(r for r in shown.rows if (r.value, r.group) == (EXTRINSIC, group))
    state = error_links.spread_cell(dataset, shown, EXTRINSIC, group)
    decoded, notes = querystate.decode(
        ExploreState, {k: v if isinstance(v, list) else [v] for k, v in querystate.encode(state).items()}
    )
    assert notes == []
    return row.units, explore.list_summaries(cur, dataset, decoded.filters).units


@pytest.fixture(scope="module")
def pilot_db(built_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled database after a coder tagged two untyped Model-Extra sentences Extrinsic Information."""
    db = tmp_path_factory.mktemp("pilot") / "pilot.duckdb"
    shutil.copy(built_db, db)
    rows = raw.tofueval_rows()
    ids = unit_ids(rows)
    code_extrinsic(db, "tofueval", [ids[i] for i in untyped_model_extra(rows, 2)])
    return db


def test_a_coders_tags_move_figure_2_only_when_their_source_is_chosen(pilot_db: Path) -> None:
    gold = sum(EXTRINSIC in _types(r) for r in raw.tofueval_rows() if r["model_name"] == "Model-Extra")
    assert gold == 68, "TofuEval's gold count for Model-Extra × Extrinsic Information (issue 25)"
    conn = duckdb.connect(str(pilot_db), read_only=True)
    try:
        cur = conn.cursor()
        family = errors.find_family(cur, "tofueval", "error_type")
        assert family.sources == ("coding/pilot/ann", "gold") and family.default_tagged_by == "gold"
        assert _cell(cur, "tofueval", family.tagged_by(None)) == (gold, gold), "the default: gold, and its link"
        assert _cell(cur, "tofueval", family.tagged_by("any")) == (gold + 2, gold + 2)
        assert _cell(cur, "tofueval", family.tagged_by(CODER)) == (2, 2)
        shown = errors.distribution(cur, "tofueval", family, "generator", tagged_by="gold")
        assert "tagged by gold" in shown.how()
        every = errors.distribution(cur, "tofueval", family, "generator", tagged_by=None)
        assert "tagged by any source (coding/pilot/ann, gold)" in every.how()
        with pytest.raises(NotFoundError, match="'nobody' cannot be the tag source of error_type"):
            family.tagged_by("nobody")
        assert (family.file_suffix("gold"), family.file_suffix(None)) == ("_tagged-by-gold", "_tagged-by-any")
        assert family.file_suffix(CODER) == "_tagged-by-coding-pilot-ann", "the CSV's name says whose tags"
    finally:
        conn.close()


def _cli(db: Path, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "faithlens", "errors", "--db", str(db), "--dataset", "tofueval", "--family",
         "error_type", "--by", "generator", "--json", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_cli_counts_gold_unless_told_and_says_whose_tags_it_counted(pilot_db: Path) -> None:
    default, every = _cli(pilot_db), _cli(pilot_db, "--tagged-by", "any")
    cell = {(r["value"], r["group"]): r["units"] for r in default["rows"]}
    assert cell[(EXTRINSIC, "Model-Extra")] == 68
    assert {(r["value"], r["group"]): r["units"] for r in every["rows"]}[(EXTRINSIC, "Model-Extra")] == 70
    assert (default["tagged_by"], default["tag_sources"]) == ("gold", ["gold"])
    assert (every["tagged_by"], every["tag_sources"]) == ("any", [CODER, "gold"])
    assert "tagged by gold" in default["how"] and "coding/pilot/ann" in every["how"]
    assert any("shuffles their order per topic" in note for note in default["notes"]), "by generator: the slots"


@pytest.fixture(scope="module")
def edited_db(built_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, str]]]:
    """A copy holding EDITED: one TofuEval CSV whose gold gives one more Model-Extra sentence Extrinsic
    Information, imported as its own dataset, and a coder's two tags on other sentences of it."""
    folder = tmp_path_factory.mktemp("edit")
    copy = folder / "tofueval"
    shutil.copytree(raw.DATA / "tofueval", copy)
    path = copy / "factual_consistency" / EDITED_FILE
    rows = raw.tofueval_rows([path])
    (changed,) = untyped_model_extra(rows, 1)
    rows[changed] = {**rows[changed], "sent_label": "no", "type": EXTRINSIC}
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    db = folder / "edit.duckdb"
    shutil.copy(built_db, db)
    ingest.import_file(db, path, "tofueval", EDITED)
    ids = unit_ids(rows)
    code_extrinsic(db, EDITED, [ids[i] for i in untyped_model_extra(rows, 2, skip=1)])
    return db, rows


def test_a_changed_gold_tag_moves_the_default_and_any_source_but_not_the_coders(edited_db) -> None:
    db, rows = edited_db
    published = raw.tofueval_rows([raw.DATA / "tofueval" / "factual_consistency" / EDITED_FILE])
    before = Counter(t for r in published if r["model_name"] == "Model-Extra" for t in _types(r))[EXTRINSIC]
    after = Counter(t for r in rows if r["model_name"] == "Model-Extra" for t in _types(r))[EXTRINSIC]
    assert after == before + 1
    conn = duckdb.connect(str(db), read_only=True)
    try:
        cur = conn.cursor()
        assert _cell(cur, EDITED, "gold") == (after, after), "gold moved by the edit, and so does its link"
        assert _cell(cur, EDITED, CODER) == (2, 2), "the coder's view does not see the gold edit"
        assert _cell(cur, EDITED, None) == (after + 2, after + 2)
        assert _cell(cur, "tofueval", "gold")[0] == 68, "the bundled dataset is untouched"
    finally:
        conn.close()
