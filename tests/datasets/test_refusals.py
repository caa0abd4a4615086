"""Input that used to import silently (repeated keys, misspelt fields, empty sentences, unnamed
TofuEval files, odd dataset names) is refused: one line naming file, position and what was
expected; exit 2; database untouched."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from faithlens import cli
from tests import raw
from tests.dbsnapshot import fingerprint

SENTENCE = {"text": "A sentence.", "label": "faithful"}
LINE = {"document_id": "d1", "summary_id": "s1", "sentences": [SENTENCE]}
CSV_HEADER = "document_id,summary_id,sentence,label\n"
TOFUEVAL_DEV = raw.DATA / "tofueval" / "factual_consistency" / "mediasum_factual_eval_dev.csv"


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def _object_text(pairs: list[tuple[str, object]]) -> str:
    """A JSON object with one key per line (line 2 onwards), repeats allowed."""
    return "{\n" + ",\n".join(f"{json.dumps(key)}: {json.dumps(value)}" for key, value in pairs) + "\n}\n"


def _storysumm_repeating_an_id(tmp: Path) -> tuple[Path, str, str]:
    records = list(raw.storysumm_records().items())
    text = _object_text([*records, records[0]])
    return _write(tmp, "twice.json", text), f"line {len(records) + 2} column 1", f"key {records[0][0]!r} given twice"


def _storysumm_repeating_a_field(tmp: Path) -> tuple[Path, str, str]:
    records = list(raw.storysumm_records().items())
    summary_id, record = records[0]
    inner = json.dumps(record)[:-1] + ', "label": 0}'
    text = "{\n" + f"{json.dumps(summary_id)}: {inner}" + "\n}\n"
    column = len(f"{json.dumps(summary_id)}: {inner}") - len('"label": 0}') + 1
    return _write(tmp, "field.json", text), f"line 2 column {column}", "key 'label' given twice"


def _predictions_repeating_an_id(tmp: Path) -> tuple[Path, str, str]:
    first, second = list(raw.storysumm_predictions()["unieval"].items())[:2]
    text = _object_text([first, second, (first[0], {"probs": 0.5})])
    return _write(tmp, "unieval-again.json", text), "line 4 column 1", f"key {first[0]!r} given twice"


def _fables_json(tmp: Path, name: str, text: str) -> Path:
    if not name.endswith(".zip"):
        return _write(tmp, name, text)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("FABLES.json", text)
    (tmp / name).write_bytes(buffer.getvalue())
    return tmp / name


def _fables_repeating_a_book(name: str):
    def make(tmp: Path) -> tuple[Path, str, str]:
        books = list(raw.fables_books().items())
        text = '{"canary": "x", "FABLES": ' + _object_text([*books, books[1]]) + "}"
        return _fables_json(tmp, name, text), f"line {len(books) + 2} column 1", f"key {books[1][0]!r} given twice"

    return make


def _jsonl(tmp: Path, *lines: str) -> Path:
    return _write(tmp, "mine.jsonl", "\n".join(lines) + "\n")


def _canonical_repeating_a_field(tmp: Path) -> tuple[Path, str, str]:
    line = '{"document_id":"d1","document_id":"d2","summary_id":"s1","sentences":[{"text":"x"}]}'
    column = line.index('"document_id":"d2"') + 1
    return _jsonl(tmp, json.dumps(LINE), line), f"line 2 column {column}", "key 'document_id' given twice"


def _canonical(change: Callable[[dict], object]) -> Callable[[Path], Path]:
    """A two-line canonical file whose second line is LINE after `change`."""

    def make(tmp: Path) -> Path:
        record = json.loads(json.dumps(LINE))
        change(record)
        return _jsonl(tmp, json.dumps(LINE | {"summary_id": "s0"}), json.dumps(record))

    return make


JSON_CASES = {
    "StorySumm summary id twice": ("storysumm", _storysumm_repeating_an_id),
    "StorySumm field twice in a record": ("storysumm", _storysumm_repeating_a_field),
    "prediction for one summary twice": ("storysumm-predictions", _predictions_repeating_an_id),
    "FABLES book twice in the zip": ("fables", _fables_repeating_a_book("FABLES.json.zip")),
    "FABLES book twice in FABLES.json": ("fables", _fables_repeating_a_book("FABLES.json")),
    "canonical field twice on a line": ("canonical", _canonical_repeating_a_field),
}


def _assert_refused(argv: list[str], path: Path, db: Path, capsys, *expected: str) -> None:
    before = fingerprint(db)
    code = cli.main(["import", str(path), *argv, "--db", str(db)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(lines) == 1, lines
    for part in expected:
        assert part in lines[0]
    assert fingerprint(db) == before


@pytest.mark.parametrize("case", JSON_CASES)
def test_a_key_given_twice_is_refused_where_it_repeats(case: str, db_copy: Path, tmp_path: Path, capsys) -> None:
    fmt, make = JSON_CASES[case]
    path, position, expectation = make(tmp_path)
    _assert_refused(
        ["--format", fmt], path, db_copy, capsys, str(path), position, expectation, "expected each key once"
    )


CANONICAL_CASES = {
    "misspelt sentence label": (
        _canonical(lambda r: r["sentences"][0].update(lable="faithful")),
        "line 2 sentence 1",
        "unknown field 'lable' (did you mean 'label'?)",
    ),
    "misspelt model": (
        _canonical(lambda r: r.update(modle="gpt-x")),
        "line 2",
        "unknown field 'modle' (did you mean 'model'?)",
    ),
    "unknown field with no near match": (
        _canonical(lambda r: r.update(annotator="ana")),
        "line 2",
        "unknown field 'annotator'; expected one of document_id, summary_id, sentences",
    ),
    "empty sentences": (_canonical(lambda r: r.update(sentences=[])), "line 2", "'sentences' is an empty list"),
    "empty sentence text": (
        _canonical(lambda r: r["sentences"][0].update(text="  ")),
        "line 2 sentence 1",
        "field 'text' is empty",
    ),
    "empty summary id": (_canonical(lambda r: r.update(summary_id="")), "line 2", "field 'summary_id' is empty"),
    "explanation without a label": (
        _canonical(lambda r: r["sentences"][0].update(label=None, explanation="Wrong.")),
        "line 2 sentence 1",
        "an explanation without a label",
    ),
    "ambiguity types as one string": (
        _canonical(lambda r: r["sentences"][0].update(ambiguity_types="1")),
        "line 2 sentence 1",
        "field 'ambiguity_types' should be a list of strings",
    ),
    "ambiguity types as numbers": (
        _canonical(lambda r: r.update(claims=[{"text": "A claim.", "ambiguity_types": [1, 3]}])),
        "line 2 claim 1",
        "field 'ambiguity_types' should be a list of strings",
    ),
    "misspelt ambiguity types": (
        _canonical(lambda r: r["sentences"][0].update(ambiguity_type=["1"])),
        "line 2 sentence 1",
        "unknown field 'ambiguity_type' (did you mean 'ambiguity_types'?)",
    ),
}


@pytest.mark.parametrize("case", CANONICAL_CASES)
def test_canonical_json_lines_refuse_what_would_import_wrongly(
    case: str, db_copy: Path, tmp_path: Path, capsys
) -> None:
    make, position, expectation = CANONICAL_CASES[case]
    path = make(tmp_path)
    _assert_refused(["--format", "canonical"], path, db_copy, capsys, str(path), position, expectation)


CSV_CASES = {
    "misspelt column": (
        "document_id,summary_id,sentence,lable\nd,s,x,faithful\n",
        "line 1",
        "unknown column 'lable' (did you mean 'label'?)",
    ),
    "misspelt ambiguity types column": (
        "document_id,summary_id,sentence,label,ambiguity_type\nd,s,x,ambiguous,1\n",
        "line 1",
        "unknown column 'ambiguity_type' (did you mean 'ambiguity_types'?)",
    ),
    "missing column": ("document_id,summary_id,sentence\nd,s,x\n", "line 1", "missing column(s) label"),
    "column twice": (
        "document_id,summary_id,sentence,label,label\nd,s,x,faithful,unfaithful\n",
        "line 1",
        "column 'label' appears twice",
    ),
    "empty sentence": (CSV_HEADER + "d,s,x,faithful\nd,s,,faithful\n", "line 3", "column 'sentence' is empty"),
    "empty summary id": (CSV_HEADER + "d,,x,faithful\n", "line 2", "column 'summary_id' is empty"),
    "unknown label": (CSV_HEADER + "d,s,x,Yes\n", "line 2", "unknown label value 'Yes'"),
    "sentence pasted twice": (CSV_HEADER + "d,s,x,faithful\nd,s,x,faithful\n", "line 3", "sentence repeats line 2"),
    "summary split by another": (
        CSV_HEADER + "d,s1,x,faithful\nd,s2,y,faithful\nd,s1,z,faithful\n",
        "line 4",
        "summary 's1' continues here after other summaries (its rows start on line 2)",
    ),
    "two models for one summary": (
        "document_id,summary_id,sentence,label,model\nd,s,x,faithful,a\nd,s,y,faithful,b\n",
        "line 3",
        "column 'model' differs from line 2 within summary 's'",
    ),
    "two documents for one summary": (
        CSV_HEADER + "d1,s,x,faithful\nd2,s,y,faithful\n",
        "line 3",
        "column 'document_id' differs from line 2",
    ),
    "two texts for one document": (
        "document_id,summary_id,sentence,label,document\nd,s1,x,faithful,One.\nd,s2,y,faithful,Two.\n",
        "line 3",
        "document 'd' has a different text",
    ),
}


@pytest.mark.parametrize("case", CSV_CASES)
def test_canonical_csv_refuses_what_would_import_wrongly(case: str, db_copy: Path, tmp_path: Path, capsys) -> None:
    text, position, expectation = CSV_CASES[case]
    path = _write(tmp_path, "mine.csv", text)
    _assert_refused(["--format", "canonical"], path, db_copy, capsys, str(path), position, expectation)


@pytest.mark.parametrize(
    ("options", "expectation"),
    [
        ([], "the file name does not say the corpus and split"),
        (["--corpus", "mediasum"], "the file name does not say the corpus and split"),
    ],
)
def test_a_renamed_tofueval_csv_needs_corpus_and_split(
    options: list[str], expectation: str, db_copy: Path, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "dialogues.csv"
    shutil.copy(TOFUEVAL_DEV, path)
    _assert_refused(["--format", "tofueval", *options], path, db_copy, capsys, str(path), expectation)


def test_options_that_contradict_the_tofueval_file_name_are_refused(db_copy: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / TOFUEVAL_DEV.name
    shutil.copy(TOFUEVAL_DEV, path)
    _assert_refused(
        ["--format", "tofueval", "--split", "test"], path, db_copy, capsys, str(path), "says split 'dev' but 'test'"
    )


def test_options_a_format_does_not_read_are_refused(db_copy: Path, tmp_path: Path, capsys) -> None:
    path = _jsonl(tmp_path, json.dumps(LINE))
    _assert_refused(["--format", "canonical", "--corpus", "mediasum"], path, db_copy, capsys, "--corpus does not apply")


@pytest.mark.parametrize(
    ("file_name", "name", "expectation"),
    [
        ("mine.jsonl", "my data", "dataset name 'my data' is not allowed"),
        ("mine.jsonl", "../evil", "dataset name '../evil' is not allowed"),
        ("my data.jsonl", None, "dataset name 'my data' (taken from the file name) is not allowed"),
    ],
)
def test_dataset_names_are_letters_digits_dashes_and_underscores(
    file_name: str, name: str | None, expectation: str, db_copy: Path, tmp_path: Path, capsys
) -> None:
    path = _write(tmp_path, file_name, json.dumps(LINE))
    _assert_refused(
        ["--format", "canonical", *(["--name", name] if name else [])],
        path,
        db_copy,
        capsys,
        expectation,
        "letters, digits, - and _",
    )
