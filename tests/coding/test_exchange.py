"""Importing a CSV of codes and exporting a session's codes (`faithlens.coding.exchange`) on real
copies of the bundled database. Expected values come from the CSV rows each test writes and the raw
StorySumm file, never from the code under test; a refused file leaves every table as it was."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.coding import events, exchange, library, report
from faithlens.coding.codebook import parse
from faithlens.errors import InputError
from tests import coders, dbsnapshot, raw
from tests.coders import ADMIN

CODEBOOK = "storysumm-faithfulness"
VERDICT = {"faithful": "faithful", "unfaithful": "unfaithful", "na": "n/a"}
CODING_TABLES = ("codebook", "coding_session", "coding_coder", "coding_event")
LAB_ERRORS = {
    "name": "lab-errors",
    "title": "Lab error types",
    "choice": "multi",
    "family": "lab_error",
    "explanation": "none",
    "codes": [
        {"key": "Entity", "name": "Entity error", "definition": "A person, place or thing is wrong."},
        {"key": "Event", "name": "Event error", "definition": "Something that happens is wrong."},
        {"key": "none", "name": "No error", "definition": "Nothing is wrong."},
    ],
}


def summary_ids() -> list[str]:
    """StorySumm's summary ids in reading order (sorted), from the raw file."""
    return sorted(raw.storysumm_records())


def write_rows(path: Path, rows: list[dict[str, str]], columns: tuple[str, ...] = ("unit_id", "coder", "code", "note")):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def two_coders(units: list[str]) -> list[dict[str, str]]:
    """alice and bob on each unit; unfaithful codes carry the explanation the codebook requires."""
    rows = []
    for number, unit in enumerate(units):
        for coder, code in (
            ("alice", "faithful" if number % 2 else "unfaithful"),
            ("bob", ("na", "faithful")[number % 2]),
        ):
            rows.append({"unit_id": unit, "coder": coder, "code": code, "note": f"{coder} on {number}"})
    return rows


def state(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Every row of the tables `tests.dbsnapshot` fingerprints and of the coding tables."""
    return {
        table: conn.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
        for table in (*dbsnapshot.TABLES, *CODING_TABLES)
    }


@contextmanager
def opened(db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = store.connect(db, create=False)
    try:
        yield conn
    finally:
        conn.close()


def test_import_makes_a_session_with_every_row_as_a_code_and_a_label(db_copy: Path, tmp_path: Path) -> None:
    units = summary_ids()[:7]
    rows = two_coders(units)
    path = write_rows(tmp_path / "codes.csv", rows)
    with opened(db_copy) as conn:
        done = exchange.import_codes(conn, ADMIN, path, "storysumm", "lab round 1", CODEBOOK)
        current = events.current(conn, done.session)
        labels = conn.execute(
            "SELECT source, target_id, value, raw_value, explanation, created_by FROM label WHERE source LIKE 'coding/%'"
        ).fetchall()
        version = library.get(conn, CODEBOOK).version
    assert (done.rows, done.coders, done.created) == (len(rows), ("alice", "bob"), True)
    session = done.session
    assert (session.dataset, session.level, session.mode, session.codebook) == (
        "storysumm",
        "summary",
        "codes",
        CODEBOOK,
    )
    assert (session.ordering, session.blind, session.coders, session.codebook_version) == (
        "fixed",
        False,
        ("alice", "bob"),
        version,
    )
    assert session.units == tuple(sorted(units)), "exactly the file's units, in reading order (summary id)"
    assert session.selection == f"{len(units)} summaries named by codes.csv"
    assert {key: (c.codes, c.note, c.action, c.made_by) for key, c in current.items()} == {
        (r["coder"], r["unit_id"]): ((r["code"],), r["note"], "import", ADMIN.id) for r in rows
    }
    assert sorted(labels) == sorted(
        (f"coding/lab round 1/{r['coder']}", r["unit_id"], VERDICT[r["code"]], r["code"], r["note"], ADMIN.id)
        for r in rows
    )


def test_a_second_import_adds_to_the_session_and_levels_are_read_from_the_ids(db_copy: Path, tmp_path: Path) -> None:
    records = raw.storysumm_records()
    first = summary_ids()[0]
    sentences = [f"{first}#s{i}" for i in range(len(records[first]["summary"]))]
    claims = [f"{first}#c{i}" for i in range(len(records[first]["claims"]))]
    with opened(db_copy) as conn:
        by_sentence = exchange.import_codes(
            conn, ADMIN, write_rows(tmp_path / "s.csv", two_coders(sentences)), "storysumm", "lines", CODEBOOK
        )
        by_claim = exchange.import_codes(
            conn, ADMIN, write_rows(tmp_path / "c.csv", two_coders(claims)), "storysumm", "claims", CODEBOOK
        )
        carol = [{"unit_id": u, "coder": "carol", "code": "faithful", "note": ""} for u in sentences[:2]]
        again = exchange.import_codes(
            conn, ADMIN, write_rows(tmp_path / "more.csv", carol), "storysumm", "lines", CODEBOOK
        )
        progress = {p.coder: p.coded for p in report.progress(conn, again.session)}
    assert (by_sentence.session.level, by_claim.session.level) == ("sentence", "claim")
    assert by_sentence.session.units == tuple(sentences) and by_claim.session.units == tuple(claims)
    assert (again.created, again.rows, again.coders) == (False, 2, ("carol",))
    assert again.session == by_sentence.session, "the session, its units and coders are unchanged"
    assert progress == {"alice": len(sentences), "bob": len(sentences), "carol": 2}


def test_multi_choice_codes_split_on_bar_and_match_keys_by_case(db_copy: Path, tmp_path: Path) -> None:
    units = summary_ids()[:3]
    rows = [
        {"unit_id": units[0], "coder": "ann", "code": "event|ENTITY"},
        {"unit_id": units[1], "coder": "ann", "code": "None"},
        {"unit_id": units[2], "coder": "ann", "code": " Entity "},
    ]
    path = write_rows(tmp_path / "errors.csv", rows, ("unit_id", "coder", "code"))
    with opened(db_copy) as conn:
        library.save(conn, ADMIN, parse(LAB_ERRORS, "test"))
        done = exchange.import_codes(conn, ADMIN, path, "storysumm", "errors", "lab-errors", level="summary")
        current = events.current(conn, done.session, "ann")
        tags = conn.execute("SELECT target_id, value FROM tag WHERE kind = 'lab_error' ORDER BY ALL").fetchall()
    expected = {units[0]: ("Entity", "Event"), units[1]: ("none",), units[2]: ("Entity",)}
    assert {unit: code.codes for unit, code in current.items()} == expected
    # The lab's "none" is the codebook's none code: a code like any other, but it sets no tag.
    assert tags == sorted((unit, key) for unit, keys in expected.items() for key in keys if key != "none")


def bad_file(tmp_path: Path, fault: str) -> tuple[Path, str, str]:
    """A file whose third line holds `fault` (the second is fine), the session to import it into,
    and the message expected after `file: line 3: `."""
    good, unit = summary_ids()[0], summary_ids()[1]
    rows = [{"unit_id": good, "coder": "alice", "code": "faithful", "note": ""}]
    third, session = {"unit_id": unit, "coder": "alice", "code": "faithful", "note": ""}, "fresh"
    if fault == "unknown code":
        third["code"], expected = "mostly", "unknown code 'mostly'; expected one of faithful, unfaithful, na"
    elif fault == "unit not in dataset":
        third["unit_id"], expected = "no-such-summary", "unit 'no-such-summary' is not a summary of dataset 'storysumm'"
    elif fault == "unit not in session":
        third["unit_id"], session = f"{good}#s0", "existing"
        expected = f"unit '{good}#s0' is not in session 'existing'"
    elif fault == "missing explanation":
        third["code"], expected = "unfaithful", "the code 'unfaithful' needs an explanation"
    elif fault == "duplicate":
        third["unit_id"], expected = good, f"'alice' codes unit '{good}' again (first at line 2)"
    elif fault == "empty coder":
        third["coder"], expected = " ", "column coder is empty"
    else:
        third["unit_id"], expected = f"{unit}#s1", f"unit '{unit}#s1' is a sentence id but line 2 holds a summary id"
    return write_rows(tmp_path / "bad.csv", [*rows, third]), session, expected


FAULTS = (
    "unknown code",
    "unit not in dataset",
    "unit not in session",
    "missing explanation",
    "duplicate",
    "empty coder",
    "mixed levels",
)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_bad_row_is_named_and_nothing_is_written(fault: str, db_copy: Path, tmp_path: Path) -> None:
    path, session, expected = bad_file(tmp_path, fault)
    with opened(db_copy) as conn:
        existing = [{"unit_id": summary_ids()[0], "coder": "zoe", "code": "na", "note": ""}]
        exchange.import_codes(
            conn, ADMIN, write_rows(tmp_path / "first.csv", existing), "storysumm", "existing", CODEBOOK
        )
        before = state(conn)
        with pytest.raises(InputError) as raised:
            exchange.import_codes(conn, ADMIN, path, "storysumm", session, CODEBOOK)
        after = state(conn)
    assert (raised.value.file, raised.value.position) == (str(path), "line 3")
    assert expected in raised.value.expected and "\n" not in str(raised.value)
    assert after == before


def test_an_existing_session_refuses_another_codebook_or_dataset(db_copy: Path, tmp_path: Path) -> None:
    path = write_rows(tmp_path / "a.csv", [{"unit_id": summary_ids()[0], "coder": "a", "code": "na", "note": ""}])
    with opened(db_copy) as conn:
        exchange.import_codes(conn, ADMIN, path, "storysumm", "one", CODEBOOK)
        before = state(conn)
        with pytest.raises(InputError, match=r"session 'one' exists with codebook 'storysumm-faithfulness', not 'arm"):
            exchange.import_codes(conn, ADMIN, path, "storysumm", "one", "arm-status")
        with pytest.raises(InputError, match=r"exists with dataset 'storysumm', not 'fables'"):
            exchange.import_codes(conn, ADMIN, path, "fables", "one", CODEBOOK)
        assert state(conn) == before


def read_back(path: Path, fmt: str) -> list[dict]:
    if fmt == "csv":
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            row["codes"], row["event_id"] = row["codes"].split("|"), int(row["event_id"])
            row.update({key: row[key] or None for key in ("verdict", "note", "detail")})
        return rows
    if fmt == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    with duckdb.connect() as memory:
        found = memory.execute("SELECT * FROM read_parquet(?)", [str(path)])
        columns = [d[0] for d in found.description]
        return [dict(zip(columns, row, strict=True)) for row in found.fetchall()]


@pytest.mark.parametrize("fmt", exchange.FORMATS)
def test_export_round_trips_the_imported_rows_with_provenance(fmt: str, db_copy: Path, tmp_path: Path) -> None:
    units = summary_ids()[:5]
    rows = two_coders(units)
    path = write_rows(tmp_path / "codes.csv", rows)
    out = tmp_path / f"out.{fmt}"
    with opened(db_copy) as conn:
        session = exchange.import_codes(conn, ADMIN, path, "storysumm", "round trip", CODEBOOK).session
        report.adjudicate(conn, coders.person("judge", "adjudicator"), session, units[1], ("faithful",), None)
        coders.code(conn, session, "bob", events.Submission(units[0], ("unfaithful",), "changed my mind"))
        written = exchange.export(conn, ADMIN, session, fmt, out)
        version = library.get(conn, CODEBOOK).version
    back = read_back(out, fmt)
    assert written == len(back) == len(rows) + 1
    assert [column for column in back[0]] == list(exchange.COLUMNS)
    expected = [(r["unit_id"], r["coder"], [r["code"]], r["note"], ADMIN.id, "import") for r in rows]
    expected[1] = (units[0], "bob", ["unfaithful"], "changed my mind", "bob", "code")
    expected.insert(4, (units[1], "adjudicated", ["faithful"], None, "judge", "adjudicate"))
    assert [(r["unit_id"], r["coder"], r["codes"], r["note"], r["made_by"], r["action"]) for r in back] == expected
    for row in back:
        assert (row["session"], row["dataset"], row["level"], row["mode"]) == (
            "round trip",
            "storysumm",
            "summary",
            "codes",
        )
        assert (row["codebook"], row["codebook_version"]) == (CODEBOOK, version)
        assert row["verdict"] == VERDICT[row["codes"][0]] and row["detail"] is None
        assert isinstance(row["event_id"], int)
        first, last = datetime.fromisoformat(row["first_coded_at"]), datetime.fromisoformat(row["coded_at"])
        assert first < last if (row["unit_id"], row["coder"]) == (units[0], "bob") else first == last


def test_unit_level_from_the_id_shape() -> None:
    assert exchange.unit_level("0b08649def5b4a13aa68f784227fc004") == "summary"
    assert exchange.unit_level("yellowface / MIXTRAL") == "summary"
    assert exchange.unit_level("0b08649def5b4a13aa68f784227fc004#s12") == "sentence"
    assert exchange.unit_level("A Haunting on the Hill / CLAUDE-3-OPUS#c0") == "claim"
    assert exchange.unit_level("0b08649def5b4a13aa68f784227fc004#x1a2b3c4d.0c3") == "claim", "an extracted claim set"
