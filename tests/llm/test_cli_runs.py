"""`python -m faithlens llm run` in a real subprocess against the scripted server in this process:
the printed record, Compare's metrics for the new source, Ctrl-C, kill -9 and resume."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score

from tests import raw
from tests.llm.conftest import OPENAI_KEY, ROOT
from tests.llm.runs_support import (
    PerSummary,
    answers_per_request,
    current_labels,
    model_requests,
    storysumm_summaries,
    verdict,
)
from tests.llm.test_cli_llm import environment, faithlens
from tests.llmserver import LLMServer, Reply

SOURCE = "llm/storysumm-binary/gpt-4o"


def run_args(db: Path, *extra: str) -> list[str]:
    return [
        "llm", "run", "--dataset", "storysumm", "--level", "summary", "--method", "storysumm-binary",
        "--provider", "openai", "--model", "gpt-4o", "--json", "--db", str(db), *extra,
    ]  # fmt: skip


def labels_in(db: Path) -> dict[str, str]:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return current_labels(conn, SOURCE)
    finally:
        conn.close()


def test_run_prints_the_record_and_compare_scores_the_source_against_gold(server: LLMServer, db_copy: Path) -> None:
    server.responder = PerSummary(lambda s, _: verdict(s))
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY)
    done = faithlens(run_args(db_copy, "--concurrency", "8"), env)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert {k: record[k] for k in ("source", "total", "done", "failed", "cached", "calls", "failures")} == {
        "source": SOURCE, "total": 96, "done": 96, "failed": 0, "cached": 0, "calls": 96, "failures": [],
    }  # fmt: skip
    assert "96 done, 0 failed of 96" in done.stderr

    metrics = faithlens(
        ["metrics", "--dataset", "storysumm", "--level", "summary", "--json", "--db", str(db_copy)], env
    )
    row = next(r for r in json.loads(metrics.stdout) if r["source"] == SOURCE and r["split"] == "all")
    summaries = storysumm_summaries()
    gold = [s.gold for s in summaries]
    model = ["unfaithful" if verdict(s) == "No" else "faithful" for s in summaries]
    assert row["n"] == 96
    assert row["kappa"] == round(cohen_kappa_score(gold, model), 6)
    assert row["balanced_accuracy"] == round(100 * balanced_accuracy_score(gold, model), 6)

    again = json.loads(faithlens(run_args(db_copy, "--concurrency", "8"), env).stdout)
    assert (again["calls"], again["cached"], again["done"]) == (0, 96, 96)
    assert len(model_requests(server.requests)) == 96


def test_a_run_the_dataset_cannot_feed_is_refused_in_one_line(server: LLMServer, db_copy: Path) -> None:
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY)
    args = ["llm", "run", "--dataset", "tofueval", "--level", "sentence", "--method", "tofueval-dir"]
    refused = faithlens([*args, "--provider", "openai", "--model", "gpt-4o", "--db", str(db_copy)], env)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "transcripts" in refused.stderr
    assert model_requests(server.requests) == [], (
        "no model was asked"
    )  # a stray health probe of a reused port is no call


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "faithlens", *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_for_requests(server: LLMServer, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(model_requests(server.requests)) < count:
        assert time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.02)


def test_kill_9_mid_run_then_resume_calls_only_what_is_missing(server: LLMServer, db_copy: Path) -> None:
    server.responder = PerSummary(lambda s, _: Reply(verdict(s), delay=0.2), "val")
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY)
    worker = start(run_args(db_copy, "--split", "val", "--concurrency", "2"), env)
    wait_for_requests(server, 10)
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)
    before = len(labels_in(db_copy))
    asked_before = len(model_requests(server.requests))
    assert 6 <= before < 33

    resumed = faithlens(run_args(db_copy, "--resume", "1"), env)
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads(resumed.stdout)
    val = storysumm_summaries("val")
    assert (record["total"], record["done"], record["failed"]) == (len(val), len(val), 0)
    assert record["calls"] == len(val) - before
    assert len(model_requests(server.requests)) - asked_before == len(val) - before
    assert set(labels_in(db_copy)) == {s.summary_id for s in val}
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        assert max(answers_per_request(conn).values()) == 1
        assert conn.execute("SELECT count(*) FROM llm_call").fetchone()[0] == len(val)
    finally:
        conn.close()


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(server: LLMServer, db_copy: Path) -> None:
    server.responder = PerSummary(lambda s, _: Reply(verdict(s), delay=0.2), "val")
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY)
    args = run_args(db_copy, "--split", "val", "--concurrency", "2")
    worker = start(args, env)
    wait_for_requests(server, 6)
    worker.send_signal(signal.SIGINT)
    out, err = worker.communicate(timeout=30)
    assert worker.returncode == 130, err
    stopped = json.loads(out)
    assert stopped["state"] == "cancelled" and "cancelling" in err
    assert stopped["done"] == len(labels_in(db_copy)) >= 6

    again = faithlens(args, env)
    record = json.loads(again.stdout)
    val = storysumm_summaries("val")
    assert (record["done"], record["cached"], record["calls"]) == (
        len(val),
        stopped["done"],
        len(val) - stopped["done"],
    )


def test_run_and_runs_json_list_the_failures_with_their_cause_and_unit(server: LLMServer, db_copy: Path) -> None:
    val = storysumm_summaries("val")
    faults = {
        val[0].summary_id: ("rate limit", Reply(status=429, headers={"retry-after-ms": "10"})),
        val[1].summary_id: ("server error", Reply(status=500, message="upstream exploded")),
        val[2].summary_id: ("refused", Reply(refusal=True)),
    }
    server.responder = PerSummary(lambda s, _: faults[s.summary_id][1] if s.summary_id in faults else verdict(s), "val")
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY, FAITHLENS_LLM_ATTEMPTS="1")
    done = faithlens(run_args(db_copy, "--split", "val"), env)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    expected = {unit: cause for unit, (cause, _) in faults.items()}
    assert {f["unit"]: f["cause"] for f in record["failures"]} == expected
    assert record["by_cause"] == {"rate limit": 1, "server error": 1, "refused": 1}
    assert record["endpoints"] == [f"openai at {server.openai_base_url}"]
    assert (record["failed_without_answer"], record["resume_offered"], record["retry_failed_offered"]) == (
        2,
        True,
        True,
    )
    records = raw.storysumm_records()
    for failure in record["failures"]:
        assert failure["document"] == f"Story {records[failure['unit']]['story-id']}"
        assert failure["generator"] == records[failure["unit"]]["model"]
        assert not failure["detail"].startswith("openai")

    listed = faithlens(["llm", "runs", "--dataset", "storysumm", "--json", "--db", str(db_copy)], env)
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)
    assert (run["state"], run["by_cause"], run["resume_offered"]) == ("finished", record["by_cause"], True)
    assert [f["unit"] for f in run["failures"]] == [f["unit"] for f in record["failures"]]
    text = faithlens(["llm", "runs", "--dataset", "storysumm", "--db", str(db_copy)], env).stdout
    assert "by cause: rate limit 1, server error 1, refused 1" in text
