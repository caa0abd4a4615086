"""Who pays for answers (issue 28, item 5), against the real scripted LLM server and a real DuckDB copy of
the built data: a new answer is refused, before any request reaches the server and with nothing written,
to a viewer and to a runner past their budget (the refusal says what is left); a stored answer is
replayed for a viewer at no cost; a new answer is charged to its asker; a run is charged to whoever
starts it and stops at the smaller of its own budget and theirs; a demo pack import is refused to a
viewer. Dollar figures come from the price table file and the tokens the server reports."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.access import Actor, BudgetExceeded, PermissionDenied, Person, people, spending
from faithlens.llm import ask, packs
from faithlens.llm.runs import engine, estimate, log, spec
from tests import raw
from tests.llm.conftest import ME, OPENAI_KEY, asking, one, price, target
from tests.llm.test_cli_llm import environment, faithlens
from tests.llmserver import LLMServer, Reply

MODEL = "gpt-4o"
RITA = Actor(Person("rita", "Rita", None, "link"), "runner")
VIC = Actor(Person("vic", "Vic", None, "link"), "viewer")
SUMMARY = sorted(raw.storysumm_records())[0]
WRITTEN = ("llm_call", "label", "label_source", "llm_run", "llm_run_event", "llm_pack_import", "write_log")


def counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows of every table an answer, a run or an import writes to."""
    return {table: one(conn, f"SELECT count(*) FROM {table}") for table in WRITTEN}


def cost_of(input_tokens: int, output_tokens: int) -> float:
    """Dollars of one gpt-4o answer, from the price table file."""
    per_input, per_output = price(MODEL)
    return (input_tokens * per_input + output_tokens * per_output) / 1_000_000


@pytest.fixture
def lab(conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Rita, a runner with $1.00 a day and $5.00 a month, and Vic, a viewer, added by an admin."""
    people.add_person(conn, ME, "rita", "Rita", role="runner")
    people.add_person(conn, ME, "vic", "Vic", role="viewer")
    people.set_budget(conn, ME, "rita", 1.0, 5.0)
    return conn


def test_a_viewer_asking_a_new_answer_is_refused_with_no_request_and_nothing_written(llm_env: LLMServer, lab) -> None:
    before = counts(lab)
    with pytest.raises(PermissionDenied) as refused:
        ask.ask(lab, target(lab, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), VIC)
    assert "Vic (viewer) may not ask a model" in str(refused.value)
    assert llm_env.requests == []
    assert counts(lab) == before


def test_a_stored_answer_is_replayed_for_a_viewer_at_no_cost(llm_env: LLMServer, lab) -> None:
    llm_env.queue(Reply("No", input_tokens=1000, output_tokens=10))
    bought = ask.ask(lab, target(lab, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), RITA)
    assert not bought.cached and bought.label == "unfaithful"
    assert one(lab, "SELECT person FROM llm_call") == "rita", "a new answer is charged to its asker"
    before = counts(lab)
    replayed = ask.ask(lab, target(lab, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), VIC)
    assert replayed.cached and replayed.label == "unfaithful" and replayed.raw_output == "No"
    assert len(llm_env.requests) == 1, "the replay sent nothing"
    assert counts(lab) == before
    assert spending(lab, store.data_version(lab), VIC).month_usd == 0
    charged = spending(lab, store.data_version(lab), RITA)
    assert charged.today_usd == pytest.approx(cost_of(1000, 10))


def test_a_runner_past_their_budget_is_refused_before_the_request_saying_what_is_left(llm_env: LLMServer, lab) -> None:
    # 400,000 input tokens of gpt-4o cost at least the day's $1.00: nothing is left after this answer.
    llm_env.queue(Reply("No", input_tokens=400_000, output_tokens=10))
    ask.ask(lab, target(lab, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), RITA)
    spent = cost_of(400_000, 10)
    assert spent >= 1.0
    before = counts(lab)
    other = sorted(raw.storysumm_records())[1]
    with pytest.raises(BudgetExceeded) as refused:
        ask.ask(lab, target(lab, "storysumm", other), asking(llm_env, "storysumm-binary"), RITA)
    text = str(refused.value)
    assert text.startswith("Rita (runner) may not ask a model: it would cost about $"), text
    assert f"you have $0.00 left, spent ${spent:.2f} of $1.00 today and ${spent:.2f} of $5.00 this month" in text
    assert len(llm_env.requests) == 1, "the refused ask sent nothing"
    assert counts(lab) == before
    again = ask.ask(lab, target(lab, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), RITA)
    assert again.cached, "a stored answer stays open to her at no cost"


def _run(llm_env: LLMServer, **options) -> spec.RunSpec:
    fields = {"concurrency": 1, "base_url": llm_env.openai_base_url} | options
    return spec.RunSpec("storysumm", "summary", "storysumm-binary", "openai", MODEL, **fields)


def test_a_viewer_cannot_start_a_run_and_nothing_is_written(llm_env: LLMServer, lab) -> None:
    before = counts(lab)
    with pytest.raises(PermissionDenied, match="Vic \\(viewer\\) may not start a run"):
        engine.create_run(lab, _run(llm_env), spec.Selection(), VIC)
    run_id = engine.create_run(lab, _run(llm_env), spec.Selection(), ME)
    made = counts(lab)
    with lab.cursor() as cur, pytest.raises(PermissionDenied):
        engine.Runner(lab, log.load(cur, run_id), VIC)
    assert counts(lab) == made and made["llm_run"] == before["llm_run"] + 1
    assert llm_env.requests == []


def test_a_run_is_charged_to_its_starter_and_stops_at_their_budget(llm_env: LLMServer, lab) -> None:
    each = cost_of(100_000, 1)  # about $0.25: the day's $1.00 covers three or four, never all
    llm_env.responder = lambda _request: Reply("No", input_tokens=100_000, output_tokens=1)
    units = sorted(raw.storysumm_records())
    planned = estimate.estimate(lab, _run(llm_env).resolved(), units, RITA)
    assert planned.spending.left_usd() == pytest.approx(1.0)
    assert any(note.startswith("your budget: $1.00 left") for note in planned.notes), planned.notes
    run_id = engine.create_run(lab, _run(llm_env), spec.Selection(), RITA)
    with lab.cursor() as cur:
        done = engine.Runner(lab, log.load(cur, run_id), RITA).execute()
    assert done.state == "budget"
    assert done.reason.startswith(
        "stopped before passing the budget of Rita ($1.00 left, spent $0.00 of $1.00 today and $0.00 of $5.00 "
        "this month when the run started)"
    ), done.reason
    calls = one(lab, "SELECT count(*) FROM llm_call")
    assert 0 < calls < len(units) and done.done == calls
    assert one(lab, "SELECT list(DISTINCT person) FROM llm_call") == ["rita"]
    assert one(lab, "SELECT started_by FROM llm_run WHERE run_id = ?", [run_id]) == "rita"
    charged = spending(lab, store.data_version(lab), RITA).today_usd
    assert charged == pytest.approx(calls * each)
    assert charged <= 1.0 + each, "at most the one call in flight when it stopped passes the budget"


def test_a_run_keeps_to_the_smaller_of_its_budget_and_its_starters(llm_env: LLMServer, lab) -> None:
    llm_env.responder = lambda _request: Reply("No", input_tokens=100_000, output_tokens=1)
    run_id = engine.create_run(lab, _run(llm_env, budget=0.5), spec.Selection(), RITA)
    with lab.cursor() as cur:
        done = engine.Runner(lab, log.load(cur, run_id), RITA).execute()
    assert done.state == "budget" and done.reason.startswith("stopped before passing the budget of $0.5:")


def test_a_viewer_importing_a_pack_is_refused_and_a_runner_is_recorded(llm_env: LLMServer, lab) -> None:
    llm_env.queue(Reply("No", input_tokens=1000, output_tokens=10))
    ask.ask(lab, target(lab, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), RITA)
    data = packs.export(lab, "storysumm", [SUMMARY]).data
    lab.execute("DELETE FROM llm_call")
    before = counts(lab)
    with pytest.raises(PermissionDenied, match="Vic \\(viewer\\) may not import stored answers"):
        packs.import_pack(lab, "office.json", data, VIC)
    assert counts(lab) == before
    done = packs.import_pack(lab, "office.json", data, RITA)
    assert done.added == 1
    assert one(lab, "SELECT imported_by FROM llm_pack_import") == "rita"
    assert one(lab, "SELECT person FROM llm_call") is None, "bought elsewhere: charged to no one here"


def test_the_cli_charges_the_person_named_by_as(server: LLMServer, db_copy: Path) -> None:
    """`llm verify --as ana` and `llm run --as ana` act as ana with admin rights: the answers are charged to
    her and the run records her as its starter."""
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY)
    server.responder = lambda _request: Reply("No", input_tokens=100, output_tokens=1)
    unit = ["--dataset", "storysumm", "--provider", "openai", "--model", MODEL, "--db", str(db_copy), "--as", "ana"]
    asked = faithlens(["llm", "verify", "--unit", SUMMARY, "--method", "storysumm-binary", *unit], env)
    assert asked.returncode == 0, asked.stderr
    ran = faithlens(["llm", "run", "--level", "summary", "--method", "storysumm-binary", "--split", "val", *unit], env)
    assert ran.returncode == 0, ran.stderr
    conn = store.connect(db_copy)
    try:
        assert one(conn, "SELECT list(DISTINCT person) FROM llm_call") == ["ana"]
        assert one(conn, "SELECT list(started_by) FROM llm_run") == ["ana"]
    finally:
        store.close(conn)
