"""`python -m faithlens coding import|agreement|export|sessions` in real subprocesses on copies of the
bundled database: what each prints, agreement equal to Cohen's kappa worked out by hand, exports that
read back as the imported rows, exit 2 with one line and an unchanged database for a bad file, and
the read-only commands working while another process holds the database read-write."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from faithlens.coding import library
from tests.coding.test_exchange import CODEBOOK, bad_file, read_back, state, summary_ids, two_coders, write_rows
from tests.holder import holding

ROOT = Path(__file__).resolve().parents[2]
# A 2x2 table of two coders over 12 summaries (rows alice, columns bob):
# faithful/faithful 5, faithful/unfaithful 2, unfaithful/faithful 1, unfaithful/unfaithful 4.
PAIRS = [("faithful", "faithful")] * 5 + [("faithful", "unfaithful")] * 2 + [("unfaithful", "faithful")]
PAIRS += [("unfaithful", "unfaithful")] * 4


def faithlens(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    """`python -m faithlens ARGS` in its own process, its temporary files (snapshots) under `tmp`."""
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run(
        [sys.executable, "-m", "faithlens", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


def kappa_file(tmp_path: Path) -> tuple[Path, list[dict[str, str]]]:
    units = summary_ids()[:12]
    rows = []
    for unit, codes in zip(units, PAIRS, strict=True):
        for coder, code in zip(("alice", "bob"), codes, strict=True):
            rows.append({"unit_id": unit, "coder": coder, "code": code, "note": "why" if code == "unfaithful" else ""})
    return write_rows(tmp_path / "pairs.csv", rows), rows


def import_args(path: Path, db: Path, session: str = "pilot", *extra: str) -> list[str]:
    return [
        "coding", "import", str(path), "--dataset", "storysumm", "--session", session, "--codebook", CODEBOOK,
        "--db", str(db), "--as", "lab lead", *extra,
    ]  # fmt: skip


def read_state(db: Path) -> dict[str, list[tuple]]:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return state(conn)
    finally:
        conn.close()


def test_import_then_agreement_is_cohens_kappa_worked_by_hand(db_copy: Path, tmp_path: Path) -> None:
    path, rows = kappa_file(tmp_path)
    done = faithlens(import_args(path, db_copy), tmp_path / "tmp")
    assert done.returncode == 0, done.stderr
    summaries = len({row["unit_id"] for row in rows})
    assert done.stdout == (
        f"imported {len(rows)} codes by 2 coders (alice, bob); made session 'pilot' "
        f"(storysumm, {summaries} summary units, {CODEBOOK}@{_version(db_copy)})\n"
    )
    found = faithlens(["coding", "agreement", "--session", "pilot", "--json", "--db", str(db_copy)], tmp_path / "tmp")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    # Observed agreement 9/12; alice says faithful on 7 of 12, bob on 6 of 12:
    po = (5 + 4) / 12
    pe = (7 / 12) * (6 / 12) + (5 / 12) * (6 / 12)  # = 72/144 = 0.5
    assert (po - pe) / (1 - pe) == pytest.approx(0.5)
    assert result["pairs"] == [{"a": "alice", "b": "bob", "n": 12, "kappa": pytest.approx(0.5)}]
    assert (result["session"], result["session_units"], result["units"], result["complete"]) == (
        "pilot",
        summaries,
        12,
        12,
    )
    assert result["coders"] == ["alice", "bob"] and result["pct_all_agree"] == pytest.approx(75.0)
    assert [code["code"] for code in result["per_code"]] == ["faithful", "unfaithful", "na"]
    text = faithlens(["coding", "agreement", "--session", "pilot", "--db", str(db_copy)], tmp_path / "tmp")
    assert text.returncode == 0, text.stderr
    assert f"session pilot: 12 of {summaries} units coded, 12 by every coder (alice, bob)" in text.stdout
    assert re.search(r"^  alice +bob +12 +0\.5$", text.stdout, re.MULTILINE)
    assert re.search(r"^  na +12 +12 +n/a +n/a +100$", text.stdout, re.MULTILINE)


def _version(db: Path) -> str:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return library.get(conn, CODEBOOK).version
    finally:
        conn.close()


def test_a_second_import_appends_and_sessions_lists_progress(db_copy: Path, tmp_path: Path) -> None:
    units = summary_ids()[:4]
    assert faithlens(import_args(write_rows(tmp_path / "a.csv", two_coders(units)), db_copy), tmp_path).returncode == 0
    more = [{"unit_id": units[0], "coder": "carol", "code": "na", "note": ""}]
    added = faithlens(import_args(write_rows(tmp_path / "b.csv", more), db_copy, "pilot", "--json"), tmp_path)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout) == {
        "session": "pilot",
        "dataset": "storysumm",
        "level": "summary",
        "codebook": CODEBOOK,
        "codebook_version": _version(db_copy),
        "rows": 1,
        "coders": ["carol"],
        "created": False,
    }
    listed = faithlens(["coding", "sessions", "--dataset", "storysumm", "--json", "--db", str(db_copy)], tmp_path)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["name"], row["units"], row["mode"]) == ("pilot", len(units), "codes")
    assert row["coded"] == {"alice": len(units), "bob": len(units), "carol": 1}
    text = faithlens(["coding", "sessions", "--db", str(db_copy)], tmp_path)
    assert text.stdout == (
        f"pilot: storysumm, summary, codes, {CODEBOOK}@{_version(db_copy)}, {len(units)} units; "
        f"coded: alice {len(units)}, bob {len(units)}, carol 1\n"
    )
    other = faithlens(["coding", "sessions", "--dataset", "fables", "--db", str(db_copy)], tmp_path)
    assert (other.returncode, other.stdout) == (0, "no coding sessions of fables\n")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_reads_back_as_the_imported_rows(fmt: str, db_copy: Path, tmp_path: Path) -> None:
    path, rows = kappa_file(tmp_path)
    assert faithlens(import_args(path, db_copy), tmp_path / "tmp").returncode == 0
    out = tmp_path / f"codes.{fmt}"
    args = ["coding", "export", "--session", "pilot", "--format", fmt, "--out", str(out), "--db", str(db_copy)]
    done = faithlens(args, tmp_path / "tmp")
    assert (done.returncode, done.stdout) == (0, f"wrote {len(rows)} rows to {out}\n"), done.stderr
    back = read_back(out, fmt)
    assert [(r["unit_id"], r["coder"], r["codes"], r["note"]) for r in back] == [
        (r["unit_id"], r["coder"], [r["code"]], r["note"] or None) for r in rows
    ]
    version = _version(db_copy)
    assert {(r["codebook"], r["codebook_version"], r["made_by"], r["action"]) for r in back} == {
        (CODEBOOK, version, "lab lead", "import")
    }, "the coders are the CSV's; the events record who imported them (--as)"
    assert [r["verdict"] for r in back] == [r["code"] for r in rows]


@pytest.mark.parametrize("fault", ["unknown code", "unit not in dataset", "missing explanation", "duplicate"])
def test_abad_file_exits_2_with_one_line_and_changes_nothing(fault: str, db_copy: Path, tmp_path: Path) -> None:
    path, session, expected = bad_file(tmp_path, fault)
    before = read_state(db_copy)
    done = faithlens(import_args(path, db_copy, session), tmp_path / "tmp")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"error: {path}: line 3: ") and done.stderr.count("\n") == 1
    assert expected in done.stderr
    assert read_state(db_copy) == before


def test_an_existing_session_is_kept_from_another_codebook_or_unit(db_copy: Path, tmp_path: Path) -> None:
    first = [{"unit_id": summary_ids()[0], "coder": "zoe", "code": "na", "note": ""}]
    assert faithlens(import_args(write_rows(tmp_path / "a.csv", first), db_copy, "existing"), tmp_path).returncode == 0
    path, _, expected = bad_file(tmp_path, "unit not in session")
    before = read_state(db_copy)
    outside = faithlens(import_args(path, db_copy, "existing"), tmp_path)
    assert (outside.returncode, outside.stdout) == (2, "") and outside.stderr.count("\n") == 1
    assert outside.stderr.startswith(f"error: {path}: line 3: {expected}")
    args = import_args(tmp_path / "a.csv", db_copy, "existing")
    args[args.index("--codebook") + 1] = "arm-status"
    wrong = faithlens(args, tmp_path)
    assert (wrong.returncode, wrong.stdout) == (2, "")
    assert wrong.stderr == (
        f"error: {tmp_path / 'a.csv'}: session 'existing' exists with codebook '{CODEBOOK}', not 'arm-status'; "
        "expected the session's dataset, level and codebook, or a new session name\n"
    )
    assert read_state(db_copy) == before


def test_read_only_commands_work_while_another_process_holds_the_database(db_copy: Path, tmp_path: Path) -> None:
    path, _ = kappa_file(tmp_path)
    assert faithlens(import_args(path, db_copy), tmp_path / "tmp").returncode == 0
    tmp = tmp_path / "snapshots"
    out = tmp_path / "held.jsonl"
    with holding(db_copy) as holder:
        agreement = faithlens(["coding", "agreement", "--session", "pilot", "--json", "--db", str(db_copy)], tmp)
        listed = faithlens(["coding", "sessions", "--json", "--db", str(db_copy)], tmp)
        export = ["coding", "export", "--session", "pilot", "--format", "jsonl", "--out", str(out)]
        exported = faithlens([*export, "--db", str(db_copy)], tmp)
        refused = faithlens(import_args(path, db_copy, "second"), tmp)
        assert holder.poll() is None
    note = rf"note: process {holder.pid} \(`python[\d.]*`\) holds {re.escape(str(db_copy))}; .*snapshot.*\n"
    assert agreement.returncode == 0, agreement.stderr
    assert re.fullmatch(note, agreement.stderr)
    assert json.loads(agreement.stdout)["pairs"][0]["kappa"] == pytest.approx(0.5)
    assert listed.returncode == 0 and json.loads(listed.stdout)[0]["name"] == "pilot"
    assert exported.returncode == 0 and len(out.read_text(encoding="utf-8").splitlines()) == len(PAIRS) * 2
    assert list(tmp.iterdir()) == [], "the snapshots are deleted afterwards"
    assert refused.returncode == 2 and "in use by process" in refused.stderr and refused.stderr.count("\n") == 1


def test_unknown_session_and_a_database_without_coding_tables(db_copy: Path, tmp_path: Path) -> None:
    missing = faithlens(["coding", "agreement", "--session", "nope", "--db", str(db_copy)], tmp_path)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr.startswith("error: no coding session 'nope'") and missing.stderr.count("\n") == 1
    conn = duckdb.connect(str(db_copy))
    for table in ("coding_event", "coding_coder", "coding_session", "codebook"):
        conn.execute(f"DROP TABLE {table}")
    conn.close()
    old = faithlens(["coding", "sessions", "--db", str(db_copy)], tmp_path)
    assert (old.returncode, old.stdout) == (2, "")
    assert old.stderr.startswith("error: this database has no coding sessions yet") and old.stderr.count("\n") == 1
