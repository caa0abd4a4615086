"""Bad input of any kind: one line naming file, position and expectation; exit 2; database untouched."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from faithlens import cli
from faithlens.build import ingest
from tests import raw
from tests.dbsnapshot import fingerprint
from tests.holder import holding

ROOT = Path(__file__).resolve().parents[2]
CANONICAL_LINE = {
    "document_id": "d1",
    "summary_id": "s1",
    "model": "m",
    "sentences": [{"text": "A sentence.", "label": "faithful"}],
}


def _storysumm_text() -> str:
    return (raw.DATA / "storysumm" / "storysumm.json").read_text(encoding="utf-8")


def _storysumm_with(change) -> str:
    records = raw.storysumm_records()
    first = next(iter(records))
    change(records[first])
    return json.dumps(records)


def _fables_zip(path: Path, change) -> Path:
    books = raw.fables_books()
    change(books)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("FABLES.json", json.dumps({"canary": "x", "FABLES": books}))
    path.write_bytes(buffer.getvalue())
    return path


def _first_claim(books: dict) -> dict:
    return next(iter(next(iter(books.values())).values()))["claims"]["0"]


def _tofueval_csv(tmp: Path, content: str) -> Path:
    folder = tmp / "factual_consistency"
    folder.mkdir(exist_ok=True)
    path = folder / "mediasum_factual_eval_dev.csv"
    path.write_text(content, encoding="utf-8")
    return path


def _tofueval_head(lines: int) -> str:
    source = raw.DATA / "tofueval" / "factual_consistency" / "mediasum_factual_eval_dev.csv"
    return "".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[:lines])


def _write(tmp: Path, name: str, data: str | bytes) -> Path:
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


CASES = {
    "truncated JSON": ("storysumm", lambda t: _write(t, "cut.json", _storysumm_text()[:5000]), "line ", "invalid JSON"),
    "invalid JSON line": (
        "canonical",
        lambda t: _write(t, "bad.jsonl", json.dumps(CANONICAL_LINE) + '\n{"summary_id": "s2",}\n'),
        "line 2 column",
        "invalid JSON",
    ),
    "truncated CSV": (
        "tofueval",
        lambda t: _tofueval_csv(t, _tofueval_head(6).rsplit(",", 4)[0]),
        "line ",
        "expected 9 fields",
    ),
    "CSV with an unclosed quote": (
        "tofueval-docs",
        lambda t: _write(t, "docs.csv", 'doc_id,source\nNPR-5615,"never closed\n'),
        "line 2",
        "never closed",
    ),
    "wrong top-level type": (
        "storysumm",
        lambda t: _write(t, "list.json", "[1, 2, 3]"),
        "top level",
        "found a JSON list",
    ),
    "missing required field": (
        "canonical",
        lambda t: _write(t, "nosent.jsonl", json.dumps({"document_id": "d", "summary_id": "s"})),
        "line 1",
        "missing field 'sentences'",
    ),
    "wrong type": (
        "storysumm",
        lambda t: _write(t, "type.json", _storysumm_with(lambda r: r.update(errors="1,1,0"))),
        "record '",
        "field 'errors' is str",
    ),
    "unknown label value": (
        "fables",
        lambda t: _fables_zip(t / "maybe.zip", lambda b: _first_claim(b).update(label="Maybe")),
        "claim 0",
        "unknown label value 'Maybe'",
    ),
    "length mismatch": (
        "storysumm",
        lambda t: _write(t, "short.json", _storysumm_with(lambda r: r["errors"].pop())),
        "record '",
        "labels in 'errors'; expected one label per sentence",
    ),
    "duplicate ids": (
        "canonical",
        lambda t: _write(t, "dup.jsonl", json.dumps(CANONICAL_LINE) + "\n" + json.dumps(CANONICAL_LINE) + "\n"),
        "line 2",
        "duplicate summary_id 's1'",
    ),
    "non-UTF-8": (
        "canonical",
        lambda t: _write(t, "latin.jsonl", b'{"document_id": "caf\xe9"}\n'),
        "line 1 column 21",
        "invalid UTF-8 byte 0xe9",
    ),
    "empty file": ("canonical", lambda t: _write(t, "empty.jsonl", ""), "", "file is empty"),
    "file of another format": (
        "storysumm",
        lambda t: (
            shutil.copy(raw.DATA / "tofueval" / "factual_consistency" / "mediasum_factual_eval_test.csv", t / "x.json")
            and t / "x.json"
        ),
        "line 1 column 1",
        "expected a JSON object keyed by summary id",
    ),
    "corrupt zip": (
        "fables",
        lambda t: _write(t, "broken.zip", b"PK\x03\x04" + b"\x00garbage" * 20),
        "",
        "corrupt zip archive",
    ),
    "prediction for an unknown summary": (
        "storysumm-predictions",
        lambda t: _write(t, "preds.json", json.dumps({"no-such-summary": {"label": 1}})),
        "record 'no-such-summary'",
        "no summary with this id",
    ),
    "unknown TofuEval doc id": (
        "tofueval-docs",
        lambda t: _write(t, "docs.csv", "doc_id,source\nNOT-A-DOC,hello\n"),
        "line 2",
        "is not a document of dataset 'tofueval'",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_clear_line_and_changes_nothing(case: str, db_copy: Path, tmp_path: Path, capsys) -> None:
    fmt, make, position, expectation = CASES[case]
    path = Path(make(tmp_path))
    before = fingerprint(db_copy)
    code = cli.main(["import", str(path), "--format", fmt, "--db", str(db_copy)])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0]
    assert position in lines[0]
    assert expectation in lines[0]
    assert fingerprint(db_copy) == before


def test_exit_code_and_no_traceback_from_a_real_process(db_copy: Path, tmp_path: Path) -> None:
    path = _write(tmp_path, "list.json", "[]")
    before = fingerprint(db_copy)
    result = subprocess.run(
        [sys.executable, "-m", "faithlens", "import", str(path), "--format", "storysumm", "--db", str(db_copy)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr
    assert fingerprint(db_copy) == before


def test_broken_bundled_file_fails_the_whole_ingest(db_copy: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    shutil.copytree(raw.DATA, data, ignore=shutil.ignore_patterns("*.duckdb*"))
    target = data / "tofueval" / "factual_consistency" / "meetingbank_factual_eval_test.csv"
    target.write_text(target.read_text(encoding="utf-8").replace(",yes,", ",perhaps,", 1), encoding="utf-8")
    before = fingerprint(db_copy)
    code = cli.main(["ingest", "--db", str(db_copy), "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code == 2
    assert str(target) in err and "unknown label value 'perhaps'" in err
    assert fingerprint(db_copy) == before


def test_broken_bundled_file_leaves_no_new_database_behind(tmp_path: Path, capsys) -> None:
    """A fresh database gets its schema while the files are parsed: a file that does not parse leaves
    no half-made database file that a later `make run` would take for a built one."""
    data = tmp_path / "data"
    shutil.copytree(raw.DATA, data, ignore=shutil.ignore_patterns("*.duckdb*"))
    target = data / "tofueval" / "factual_consistency" / "meetingbank_factual_eval_test.csv"
    target.write_text(target.read_text(encoding="utf-8").replace(",yes,", ",perhaps,", 1), encoding="utf-8")
    fresh = tmp_path / "fresh.duckdb"
    code = cli.main(["ingest", "--db", str(fresh), "--data-dir", str(data)])
    assert code == 2 and str(target) in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_failure_while_writing_rolls_everything_back(db_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation passes, then the write fails half way: the transaction leaves no trace."""
    original = ingest.write_bundle

    def write_then_fail(cur, bundle) -> None:
        original(cur, bundle)
        raise RuntimeError("disk full")

    monkeypatch.setattr(ingest, "write_bundle", write_then_fail)
    before = fingerprint(db_copy)
    with pytest.raises(RuntimeError):
        ingest.ingest(db_copy, raw.DATA)
    assert fingerprint(db_copy) == before


def test_a_database_held_by_another_process_is_reported_plainly(db_copy: Path, tmp_path: Path) -> None:
    path = _write(tmp_path, "ok.jsonl", json.dumps(CANONICAL_LINE))
    with holding(db_copy) as holder:
        result = subprocess.run(
            [sys.executable, "-m", "faithlens", "import", str(path), "--format", "canonical", "--db", str(db_copy)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"in use by process {holder.pid}" in result.stderr
