"""The files a user has in hand import whole: FABLES.json unzipped, a TofuEval CSV under any name,
the canonical format as CSV."""

from __future__ import annotations

import csv
import io
import json
import shutil
import zipfile
from pathlib import Path

import duckdb
import pytest

from faithlens import cli
from faithlens.views import catalog
from faithlens.vocab import AMBIGUITY_FAMILY
from tests import raw

FACTUAL = raw.DATA / "tofueval" / "factual_consistency"


def _stats(db: Path) -> dict:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return catalog.stats(conn)
    finally:
        conn.close()


def _release_counts(db: Path, dataset: str) -> dict:
    """An imported dataset's counts, which the raw files give; an import extracts no claims of its own."""
    found = dict(_stats(db)[dataset])
    assert (found.pop("extracted_claims"), found.pop("extracted_labels")) == ([], {})
    return found


def _rows(db: Path, sql: str) -> list[tuple]:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _import(db: Path, path: Path, *options: str) -> None:
    assert cli.main(["import", str(path), *options, "--db", str(db)]) == 0


def test_unzipped_fables_json_gives_the_counts_of_the_release(db_copy: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(raw.DATA / "fables" / "FABLES.json.zip") as archive:
        archive.extract("FABLES.json", tmp_path)
    _import(db_copy, tmp_path / "FABLES.json", "--format", "fables")
    assert _release_counts(db_copy, "FABLES") == raw.fables_expected()


@pytest.mark.parametrize(
    ("published", "corpus", "split"),
    [
        ("mediasum_factual_eval_test.csv", "mediasum", "test"),
        ("meetingbank_factual_eval_dev.csv", "meetingbank", "dev"),
    ],
)
def test_a_renamed_tofueval_csv_imports_with_corpus_and_split(
    published: str, corpus: str, split: str, db_copy: Path, tmp_path: Path
) -> None:
    path = tmp_path / "annotations.csv"
    shutil.copy(FACTUAL / published, path)
    _import(db_copy, path, "--format", "tofueval", "--corpus", corpus, "--split", split)
    assert _release_counts(db_copy, "annotations") == raw.tofueval_expected([FACTUAL / published])
    assert _rows(db_copy, "SELECT DISTINCT source, split FROM document WHERE dataset = 'annotations'") == [
        (corpus, split)
    ]
    assert _rows(db_copy, "SELECT DISTINCT split FROM summary WHERE dataset = 'annotations'") == [(split,)]


CSV = (
    "document_id,summary_id,sentence,label,explanation,error_types,model,split,summary_label,document\n"
    's1-doc,sum-a,Ann sailed south.,unfaithful,She sailed north.,Contradiction; Mis-Referencing,gpt-x,test,unfaithful,"Ann sailed north.\n'
    'The storm came at dawn, late."\n'
    "s1-doc,sum-a,A storm came.,faithful,,,,,,\n"
    "s1-doc,sum-b,Ann went to sea.,,,,llama,,,\n"
)
"""Two summaries of one document: error types `;`-separated, summary-level cells filled once, the
document text (with a comma and a line break) on one row, an unlabelled sentence."""

SAME_AS_JSON_LINES = [
    {
        "document_id": "s1-doc",
        "document": "Ann sailed north.\nThe storm came at dawn, late.",
        "summary_id": "sum-a",
        "model": "gpt-x",
        "split": "test",
        "label": "unfaithful",
        "sentences": [
            {
                "text": "Ann sailed south.",
                "label": "unfaithful",
                "explanation": "She sailed north.",
                "error_types": ["Contradiction", "Mis-Referencing"],
            },
            {"text": "A storm came.", "label": "faithful"},
        ],
    },
    {"document_id": "s1-doc", "summary_id": "sum-b", "model": "llama", "sentences": [{"text": "Ann went to sea."}]},
]

CONTENT = {
    "document": "SELECT document_id, text, text_note FROM document WHERE dataset = ? ORDER BY ALL",
    "summary": "SELECT summary_id, document_id, model, split, text FROM summary WHERE dataset = ? ORDER BY ALL",
    "unit": "SELECT unit_id, kind, position, text FROM unit WHERE dataset = ? ORDER BY ALL",
    "label": "SELECT source, level, target_id, value::VARCHAR, explanation FROM current_label WHERE dataset = ? ORDER BY ALL",
    "tag": "SELECT level, target_id, kind, value FROM tag WHERE dataset = ? ORDER BY ALL",
}


def _content(db: Path, dataset: str) -> dict[str, list[tuple]]:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return {table: conn.execute(sql, [dataset]).fetchall() for table, sql in CONTENT.items()}
    finally:
        conn.close()


def test_canonical_csv_lands_as_its_rows_say(db_copy: Path, tmp_path: Path) -> None:
    path = tmp_path / "my_eval.csv"
    path.write_text(CSV, encoding="utf-8")
    _import(db_copy, path, "--format", "canonical")
    content = _content(db_copy, "my_eval")
    assert content["document"] == [("s1-doc", "Ann sailed north.\nThe storm came at dawn, late.", None)]
    assert content["summary"] == [
        ("sum-a", "s1-doc", "gpt-x", "test", "Ann sailed south. A storm came."),
        ("sum-b", "s1-doc", "llama", None, "Ann went to sea."),
    ]
    assert content["label"] == [
        ("gold", "sentence", "sum-a#s0", "unfaithful", "She sailed north."),
        ("gold", "sentence", "sum-a#s1", "faithful", None),
        ("gold", "summary", "sum-a", "unfaithful", None),
    ]
    assert content["tag"] == [
        ("sentence", "sum-a#s0", "error_type", "Contradiction"),
        ("sentence", "sum-a#s0", "error_type", "Mis-Referencing"),
    ]
    assert [row[0] for row in content["unit"]] == ["sum-a#s0", "sum-a#s1", "sum-b#s0"]


def test_canonical_csv_and_json_lines_of_the_same_data_import_alike(db_copy: Path, tmp_path: Path) -> None:
    (tmp_path / "as_csv.csv").write_text(CSV, encoding="utf-8")
    (tmp_path / "as_jsonl.jsonl").write_text("\n".join(json.dumps(r) for r in SAME_AS_JSON_LINES), encoding="utf-8")
    _import(db_copy, tmp_path / "as_csv.csv", "--format", "canonical")
    _import(db_copy, tmp_path / "as_jsonl.jsonl", "--format", "canonical")
    assert _content(db_copy, "as_csv") == _content(db_copy, "as_jsonl")


def test_canonical_csv_format_reads_a_csv_under_any_extension(db_copy: Path, tmp_path: Path) -> None:
    path = tmp_path / "export.txt"
    path.write_text(CSV, encoding="utf-8")
    _import(db_copy, path, "--format", "canonical-csv", "--name", "from-sheet")
    assert _stats(db_copy)["from-sheet"]["sentences"] == CSV.count("\ns1-doc,")


AMBIGUITY_CSV = (
    "document_id,summary_id,sentence,label,error_types,ambiguity_types\n"
    "d,s,Ann hesitated.,ambiguous,,1; 3;1\n"
    "d,s,Bob left.,unfaithful,Contradiction,\n"
    "d,s,Bob stayed.,,,2\n"
)
"""Ambiguity types split like error types: `;`-separated, spaces around them and repeats dropped."""


def test_canonical_csv_ambiguity_types_become_tags(db_copy: Path, tmp_path: Path) -> None:
    path = tmp_path / "ambiguous.csv"
    path.write_text(AMBIGUITY_CSV, encoding="utf-8")
    _import(db_copy, path, "--format", "canonical")
    rows = list(csv.DictReader(io.StringIO(AMBIGUITY_CSV)))
    expected = {
        (f"{row['summary_id']}#s{position}", value.strip())
        for position, row in enumerate(rows)
        for value in row["ambiguity_types"].split(";")
        if value.strip()
    }
    tags = _rows(db_copy, "SELECT level, target_id, kind, value, source FROM tag WHERE dataset = 'ambiguous'")
    ambiguity = [row for row in tags if row[2] == AMBIGUITY_FAMILY]
    assert len(ambiguity) == len(expected), "one tag per distinct type of a sentence"
    assert {(target, value) for _, target, _, value, _ in ambiguity} == expected
    assert {row[0] for row in ambiguity} == {"sentence"}
    assert {row[4] for row in tags} == {"gold"}, "ambiguity types get the source error types get"


def _exact_repeats() -> list[tuple[Path, str, str]]:
    """(file, line, line it repeats) for every CSV row of the TofuEval release that repeats an earlier
    row of its file cell for cell, read from the raw files alone."""
    found, first = [], {}
    for row in raw.tofueval_csv_rows():
        path = FACTUAL / f"{row['corpus']}_factual_eval_{row['split']}.csv"
        key = (path, *(value for name, value in row.items() if name != "line"))
        if key in first:
            found.append((path, row["line"], first[key]))
        first.setdefault(key, row["line"])
    return found


@pytest.mark.parametrize("command", ["import", "ingest"])
def test_an_exact_repeat_the_import_drops_is_named_on_stderr(
    command: str, db_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    repeats = _exact_repeats()
    assert repeats, "the TofuEval release holds an exact repeat"
    if command == "import":
        path = repeats[0][0]
        assert cli.main(["import", str(path), "--format", "tofueval", "--name", "repeats", "--db", str(db_copy)]) == 0
        repeats = [r for r in repeats if r[0] == path]
    else:
        assert cli.main(["ingest", "--db", str(tmp_path / "fresh.duckdb"), "--data-dir", str(raw.DATA)]) == 0
    out, err = capsys.readouterr()
    for path, line, earlier in repeats:
        expected = f"repair: {path}: line {line}: exact repeat of line {earlier} dropped"
        assert expected in err.splitlines(), err
        assert f"line {line}:" not in out, "notes go to stderr, what was loaded to stdout"
