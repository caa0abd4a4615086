"""Opening the database from the command line: a path into a missing folder or at a file that is not
DuckDB is named with what to do and creates nothing; read-only commands work while another process
holds the file read-write (they read a snapshot and say so); writing commands say to stop it first.

The holder is a real second process that opens the file read-write, commits and keeps it open."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from faithlens import cli, config, store
from faithlens.errors import FaithLensError
from tests import raw
from tests.holder import holding

ROOT = Path(__file__).resolve().parents[2]
IMPORT_FILE = ROOT / "tests" / "fixtures" / "browser_imports" / "xss_payloads.jsonl"
PROBE = "coder:probe"
COMMIT_AND_HOLD = f"""
import sys, time
from faithlens import store
conn = store.connect(sys.argv[1])
with store.write(conn, "probe") as cur:
    cur.execute("INSERT INTO label_source (dataset, source, kind) VALUES ('storysumm', '{PROBE}', 'coder')")
    cur.execute(
        "INSERT INTO label (dataset, source, level, target_id, value) "
        "SELECT dataset, '{PROBE}', 'summary', summary_id, 'faithful' FROM summary WHERE dataset = 'storysumm'"
    )
print("held", flush=True)
time.sleep(120)
"""
# A commit every 20 ms and a checkpoint every 10th: far busier than the app (DuckDB checkpoints on
# its own at 16 MiB of log), yet a copy of the file (tens of MB) fits between two checkpoints.
COMMIT_AND_CHECKPOINT_IN_A_LOOP = """
import sys, time
from faithlens import store
conn = store.connect(sys.argv[1])
for n in range(1, 100_000):
    with store.write(conn, f"tick {n}") as cur:
        store.set_meta(cur, f"tick-{n}", str(n))
    if n % 10 == 0:
        conn.execute("CHECKPOINT")
    if n == 1:
        print("held", flush=True)
    time.sleep(0.02)
"""


def run(args: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    code = cli.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_process(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    """`python -m faithlens ARGS` in its own process, with its temporary files under `tmp`."""
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    command = [sys.executable, "-m", "faithlens", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


def fingerprint(db: Path) -> list[str]:
    return [hashlib.sha256(f.read_bytes()).hexdigest() for f in (db, db.with_name(db.name + ".wal")) if f.exists()]


def test_a_missing_folder_is_named_and_never_created(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "typo" / "faithlens.duckdb"
    commands = [
        ["stats", "--json"],
        ["metrics", "--dataset", "storysumm", "--level", "summary"],
        ["ingest"],
        ["import", str(IMPORT_FILE), "--format", "canonical"],
    ]
    for command in commands:
        code, out, err = run([*command, "--db", str(missing)], capsys)
        assert (code, out) == (2, ""), command
        assert err == (
            f"error: {missing}: the folder {missing.parent} does not exist (check FAITHLENS_DB or --db for a typo, "
            f"or create the folder first: mkdir -p {missing.parent})\n"
        ), command
    monkeypatch.setenv(config.SETTINGS["db"].env, str(missing))
    code, _, err = run(["stats"], capsys)
    assert code == 2 and f"the folder {missing.parent} does not exist" in err
    with pytest.raises(FaithLensError, match="does not exist"):
        store.connect(missing, create=False)
    assert not missing.parent.exists()


def test_the_app_open_never_creates_the_file(tmp_path: Path) -> None:
    absent = tmp_path / "absent.duckdb"
    with pytest.raises(FaithLensError, match=r"no database here .*python -m faithlens ingest"):
        store.connect(absent, create=False)
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_duckdb_is_named_with_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n", encoding="utf-8")
    for command in (["stats"], ["ingest"]):
        code, out, err = run([*command, "--db", str(notes)], capsys)
        assert (code, out) == (2, "")
        assert err.startswith(f"error: {notes} is not a DuckDB database (point FAITHLENS_DB or --db at the database")
        assert err.count("\n") == 1
    assert notes.read_text(encoding="utf-8") == "not a database\n"


def test_read_only_commands_read_a_snapshot_while_another_process_holds_the_database(
    db_copy: Path, tmp_path: Path
) -> None:
    summaries = len(raw.storysumm_records())
    tmp = tmp_path / "tmp"
    metrics = ["metrics", "--dataset", "storysumm", "--level", "summary", "--sources", PROBE, "--json"]
    with holding(db_copy, COMMIT_AND_HOLD) as holder:
        assert db_copy.with_name(db_copy.name + ".wal").stat().st_size > 0, "the commit must still be in the WAL"
        before = fingerprint(db_copy)
        stats = run_process(["stats", "--json", "--db", str(db_copy)], tmp)
        compared = run_process([*metrics, "--db", str(db_copy)], tmp)
        ingest = run_process(["ingest", "--db", str(db_copy)], tmp)
        assert fingerprint(db_copy) == before, "readers must leave the holder's files alone"
        assert holder.poll() is None
    assert stats.returncode == 0, stats.stderr
    labels = json.loads(stats.stdout)["datasets"]["storysumm"]["labels"]
    assert labels[PROBE] == {"summary": {"faithful": summaries}}
    note = (
        rf"note: process {holder.pid} \(`python[\d.]*`\) holds {re.escape(str(db_copy))}; "
        r"these figures come from a snapshot of it taken at \d\d:\d\d:\d\d\n"
    )
    assert re.fullmatch(note, stats.stderr)
    assert compared.returncode == 0, compared.stderr
    rows = json.loads(compared.stdout)
    assert rows[0]["source"] == PROBE and rows[0]["split"] == "all"
    assert rows[0]["n"] == summaries and rows[0]["pct_faithful"] == 100
    assert re.fullmatch(note, compared.stderr)
    assert list(tmp.iterdir()) == [], "the snapshot is deleted afterwards"
    assert ingest.returncode == 2 and ingest.stdout == ""
    assert ingest.stderr == (
        f"error: {db_copy}: the database is in use by process {holder.pid} (`{Path(sys.executable).name}`) "
        f"(wait for process {holder.pid} to finish or stop it, then rerun this command)\n"
    )


def test_a_snapshot_is_consistent_while_the_holder_keeps_committing_and_checkpointing(db_copy: Path) -> None:
    seen: list[int] = []
    with holding(db_copy, COMMIT_AND_CHECKPOINT_IN_A_LOOP):
        for _ in range(15):
            with store.open_for_reading(db_copy) as reading:
                assert reading.note is not None
                ticks = [
                    int(v) for (v,) in reading.conn.execute("SELECT value FROM meta WHERE key LIKE 'tick-%'").fetchall()
                ]
            assert sorted(ticks) == list(range(1, len(ticks) + 1)), "every commit up to the snapshot, none torn"
            seen.append(len(ticks))
    assert seen == sorted(seen) and seen[-1] > seen[0]
