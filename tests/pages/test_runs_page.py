"""The Runs page in AppTest, against the scripted local LLM server (`tests.llmserver`) and a private
copy of the bundled database: the estimate before Start, a run in the background with its summary,
failures and Retry failed, an interrupted run resumed, the Explore filter carried over as the unit
set, and a run with repeats: self-agreement on the page, and Explore's flips filter and badge.

Expected figures come from the raw StorySumm file (`tests.raw`) and the scripted answers, not from
the code under test. The page is reached through app.py and `switch_page`, as in the real app, so
its links resolve."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs

import pytest
from sklearn.metrics import cohen_kappa_score

from components.markdown import md_escape
from faithlens import config, store
from faithlens.filters import Filters
from faithlens.llm.runs import engine, log
from faithlens.llm.runs.spec import RunSpec, Selection
from faithlens.views import arm_tables
from tests import raw
from tests.apptest import clean
from tests.llm.conftest import ME
from tests.llmserver import LLMServer, Reply

PAGE = "pages/runs.py"
DATASET = "storysumm"
MODEL = "gpt-4o"
SOURCE = f"llm/storysumm-binary/{MODEL}"
NEW = f"runs.{DATASET}.new"
FINISHED_WITHIN_S = 60


class Script:
    """What the scripted server answers per summary: 'Yes' unless told otherwise; a list of answers is
    given out in turn (repeats), the last one kept."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.asked: dict[str, int] = {}

    def __call__(self, request) -> Reply:
        summary_id = raw.storysumm_summary_in(request.last_user_text())
        answers = self.answers.get(summary_id, ["Yes"])
        turn = self.asked.get(summary_id, 0)
        self.asked[summary_id] = turn + 1
        return Reply(answers[min(turn, len(answers) - 1)])


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def llm(script: Script, monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    with LLMServer(script) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-runs")
        monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("FAITHLENS_LLM_TIMEOUT", "20")
        monkeypatch.delenv("FAITHLENS_LLM_PRICES", raising=False)
        yield server


@pytest.fixture
def runs_page(open_page, db_copy, monkeypatch, llm) -> Callable[..., object]:
    """The Runs page on a private database copy (runs write), entered from app.py."""
    monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))

    def make(script: str = PAGE, **params: str | list[str]):
        return open_page(script, dataset=DATASET, **params)

    return make


def state_line(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**State:**"))


def finish(at, timeout: float = FINISHED_WITHIN_S) -> str:
    """Rerun the page until the shown run is no longer running; returns its state line."""
    deadline = time.monotonic() + timeout
    while True:
        at.run()
        clean(at)
        line = state_line(at)
        if "running" not in line:
            return line
        assert time.monotonic() < deadline, f"still running after {timeout} s: {line}"
        time.sleep(0.2)


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def estimate_and_start(at, repeats: int = 1) -> None:
    at.number_input(key=f"{NEW}.repeats").set_value(repeats).run()
    at.button(key=f"{NEW}.estimate").click().run()
    clean(at)
    at.button(key=f"{NEW}.start").click().run()
    clean(at)


def test_the_estimate_is_shown_before_start(runs_page) -> None:
    at = runs_page()
    assert not [b for b in at.button if b.key == f"{NEW}.start"], "no Start before an estimate"
    summaries = len(raw.storysumm_records())
    assert any(c.value == f"The run asks about all {summaries} summaries\\." for c in at.caption)
    at.button(key=f"{NEW}.estimate").click().run()
    clean(at)
    lines = "\n".join(m.value for m in at.markdown)
    assert md_escape(f"{summaries} items: 0 already stored (free), 0 unfit") in lines
    assert f"{summaries} calls;" in lines
    assert metric(at, "Cost").startswith("$") and metric(at, "Time").startswith("about")
    assert any("characters per token" in c.value for c in at.caption), "the estimate's notes are shown"
    assert at.button(key=f"{NEW}.start").label == "Start run"
    at.number_input(key=f"{NEW}.repeats").set_value(2).run()
    assert not [b for b in at.button if b.key == f"{NEW}.start"], "another setting needs its own estimate"


def test_a_run_works_in_the_background_then_shows_its_outcome_and_failures(runs_page, script, llm) -> None:
    records = raw.storysumm_records()
    ids = sorted(records)
    unusable = ids[:3]
    script.answers = {summary_id: ["Perhaps.", "Yes"] for summary_id in unusable}
    at = runs_page()
    estimate_and_start(at)
    assert at.query_params["run"] == "1"
    line = finish(at)
    done = len(ids) - len(unusable)
    assert line.startswith(f"**State:** finished: {done} done, {len(unusable)} failed of {len(ids)}")
    assert metric(at, "Done") == str(done) and metric(at, "Failed") == str(len(unusable))
    assert metric(at, "Calls") == str(len(ids)) and metric(at, "Remaining") == "0"
    (failures,) = [h.proto.body for h in at.get("html") if "fl-rf-list" in h.proto.body]
    assert sorted(re.findall(r'class="fl-rf-id">([0-9a-f]+)<', failures)) == unusable
    assert failures.count('<tr data-cause="unparseable">') == len(unusable) and "Perhaps" in failures
    assert not [b for b in at.button if b.key == f"runs.{DATASET}.resume.1"], "their answers are stored: no Resume"
    listing = at.dataframe[0].value
    assert listing.iloc[0]["run"] == 1 and listing.iloc[0]["source"] == SOURCE
    links = {link.proto.label: parse_qs(link.proto.query_string) for link in at.get("page_link")}
    assert links["Compare with gold"] == {"dataset": [DATASET], "level": ["summary"], "sources": [SOURCE]}
    assert links["Explore coloured by this source"] == {"dataset": [DATASET], "source": [SOURCE]}

    at.button(key=f"runs.{DATASET}.retry.1").click().run()
    line = finish(at)
    assert line.startswith(f"**State:** finished: {len(ids)} done, 0 failed of {len(ids)}")
    assert sum(script.asked.values()) == len(ids) + len(unusable), "only the failed items were asked again"


def test_an_interrupted_run_offers_resume(runs_page, db_copy, llm) -> None:
    conn = store.connect(db_copy)
    wanted = RunSpec(DATASET, "summary", "storysumm-binary", "openai", MODEL, base_url=llm.openai_base_url).resolved()
    ids = sorted(raw.storysumm_records())[:5]
    run_id = log.create(conn, wanted, ids, "5 summaries")
    log.record(conn, run_id, "state", "running")
    conn.close()
    at = runs_page(run=str(run_id))
    assert state_line(at).startswith("**State:** interrupted")
    assert at.dataframe[0].value.iloc[0]["state"] == "interrupted"
    at.button(key=f"runs.{DATASET}.resume.{run_id}").click().run()
    assert finish(at).startswith("**State:** finished: 5 done, 0 failed of 5")
    assert len([r for r in llm.requests if r.path.endswith("/chat/completions")]) == 5


def test_the_explore_filter_becomes_the_unit_set(runs_page) -> None:
    records = raw.storysumm_records()
    hard_tests = sum(1 for r in records.values() if r["split"] == "test" and r["difficulty"] == "hard")
    at = runs_page("pages/explore.py", split="test", difficulty="hard")
    link = next(link for link in at.get("page_link") if link.proto.label == "Run a method on the filtered set")
    carried = parse_qs(link.proto.query_string)
    assert carried == {"dataset": [DATASET], "split": ["test"], "difficulty": ["hard"]}
    at = runs_page(**{name: values[0] for name, values in carried.items() if name != "dataset"})
    assert at.selectbox(key=f"{NEW}.units").value == "explore"
    words = f"{hard_tests} summaries where split is test and difficulty is hard"
    assert any(c.value == "The run asks about " + words.replace(".", "\\.") + "\\." for c in at.caption)
    estimate_and_start(at)
    assert finish(at).startswith(f"**State:** finished: {hard_tests} done")
    assert at.dataframe[0].value.iloc[0]["units"] == words
    assert at.query_params["split"] == "test" and at.query_params["difficulty"] == "hard"


def test_repeats_show_self_agreement_and_the_flips_filter_in_explore(runs_page, script) -> None:
    records = raw.storysumm_records()
    ids = sorted(records)
    flipper, steady_no = ids[10], set(ids[20:40])
    script.answers = {summary_id: ["No"] for summary_id in steady_no} | {flipper: ["Yes", "No"]}
    at = runs_page()
    estimate_and_start(at, repeats=2)
    assert finish(at).startswith(f"**State:** finished: {2 * len(ids)} done")
    first = ["unfaithful" if i in steady_no else "faithful" for i in ids]
    second = ["unfaithful" if i in steady_no or i == flipper else "faithful" for i in ids]
    assert metric(at, "Mean Cohen's κ") == f"{cohen_kappa_score(first, second):.3f}"
    assert metric(at, "Flipping units") == "1" and metric(at, "Units counted") == str(len(ids))
    assert metric(at, "Units whose verdict flips") == f"{100 / len(ids):.1f}%"
    assert any("TofuEval" in c.value and "Cohen" in c.value for c in at.caption)
    link = next(link for link in at.get("page_link") if "flips" in link.proto.label)
    assert parse_qs(link.proto.query_string) == {"dataset": [DATASET], "source": [SOURCE], "flips": [SOURCE]}

    at = runs_page("pages/explore.py", source=SOURCE)
    flips = at.selectbox(key=f"explore.{DATASET}.f.flips")
    assert flips.options == ["(no repeat filter)", SOURCE]
    flips.set_value(SOURCE).run()
    clean(at)
    caption = f"1 summary where the verdict of {SOURCE} flips across repeats"
    assert any(m.value.startswith(f"**{md_escape(caption)}") for m in at.markdown), [m.value for m in at.markdown]
    assert flipper in at.subheader[0].value, "the one flipping summary opens"
    assert any(md_escape("flips across repeats on: the summary") in c.value for c in at.caption)


def test_the_batch_api_is_not_offered_for_a_two_turn_method(runs_page) -> None:
    at = runs_page()
    assert not at.toggle(key=f"{NEW}.batch.storysumm-binary").disabled
    at.selectbox(key=f"{NEW}.method.summary").set_value("storysumm-cot").run()
    assert at.toggle(key=f"{NEW}.batch.storysumm-cot").disabled
    assert any("Batch API not offered" in c.value and "first reply" in c.value for c in at.caption)


def test_a_start_that_cannot_be_made_shows_the_error_box_with_what_to_do(runs_page) -> None:
    at = runs_page()
    at.text_input(key=f"{NEW}.model.openai").set_value("test-model").run()
    at.number_input(key=f"{NEW}.budget").set_value(1.0).run()
    at.button(key=f"{NEW}.estimate").click().run()
    assert metric(at, "Cost") == "cost unknown"
    at.button(key=f"{NEW}.start").click().run()
    (box,) = at.error
    assert "test\\-model has no price" in box.value and "What to do" in box.value
    assert "run" not in at.query_params, "no run was made"


def test_cancel_stops_the_run_and_resume_finishes_it(runs_page, script, llm) -> None:
    ids = sorted(raw.storysumm_records())
    llm.responder = lambda request: Reply(script(request).text, delay=0.05)
    at = runs_page()
    at.number_input(key=f"{NEW}.concurrency").set_value(1).run()
    estimate_and_start(at)
    assert state_line(at) == "**State:** running"
    at.button(key="runs.cancel.1").click().run()
    line = finish(at)
    assert line.startswith("**State:** cancelled: cancelled after"), line
    asked = len(script.asked)
    assert asked < len(ids)
    at.button(key=f"runs.{DATASET}.resume.1").click().run()
    assert finish(at).startswith(f"**State:** finished: {len(ids)} done, 0 failed of {len(ids)}")
    assert sum(script.asked.values()) == len(ids), "the resume asked only for what was missing"


def _rewrite_even_sentences(request) -> str:
    """ARM's rewrite prompt ends with the sentence: an even-length one gets " Indeed." added, others stay."""
    sentence = request.last_user_text().rsplit("Sentence: ", 1)[1].strip()
    return f"<answer>{sentence} Indeed.</answer>" if len(sentence) % 2 == 0 else f"<answer>{sentence}</answer>"


def test_table_2_baselines_are_offered_and_an_arm_run_shows_table_3s_figures(runs_page, db_copy, llm) -> None:
    at = runs_page()
    at.selectbox(key=f"{NEW}.level").set_value("sentence").run()
    offered = set(at.selectbox(key=f"{NEW}.method.sentence").options)
    assert {"ARM Table 2 baseline: zero-shot", "ARM Table 2 baseline: few-shot"} <= offered
    assert "ARM Table 2 baseline: self-consistency (3 CoT draws, majority)" in offered

    llm.responder = _rewrite_even_sentences
    conn = store.connect(db_copy)
    wanted = RunSpec(DATASET, "sentence", "arm-rewrite", "openai", MODEL, variant="both", base_url=llm.openai_base_url)
    run_id = engine.create_run(conn, wanted, Selection(filters=Filters(search="mermaid")), ME)
    with conn.cursor() as cur:
        engine.Runner(conn, log.load(cur, run_id), ME).execute()
        units = log.load(cur, run_id).units
        texts = [
            row[0] for row in cur.execute("SELECT text FROM unit WHERE list_contains(?, unit_id)", [units]).fetchall()
        ]
        figures = arm_tables.run_figures(cur, run_id)
    conn.close()
    even = sum(len(text.strip()) % 2 == 0 for text in texts)
    at = runs_page(run=str(run_id))
    assert metric(at, "# Rewrites (r ≠ s)") == f"{even} of {len(units)}"
    assert metric(at, "Avg. edit distance") == f"{figures.avg_edit_distance:.2f}"
    assert metric(at, "Avg. word edits") == "2.00", "' Indeed.' adds two tokens: indeed and ."
    caption = next(c.value for c in at.caption if "Table 3" in c.value)
    assert md_escape("GPT-4 both: 203 rewrites of StorySumm's 568 sentences, average edit distance 0.22") in caption
    assert "divided by the longer word list" in caption


class _Explained:
    """ARM rewrites, each with its own explanation; the explanation-points split parses once `tagged`."""

    def __init__(self) -> None:
        self.tagged = False

    def __call__(self, request) -> Reply:
        text = request.last_user_text()
        if text.startswith("Summarize the key reasons described in this explanation"):  # ARM A.3's prompt
            return Reply("<item>It adds a word.</item>" if self.tagged else "It adds a word.")
        sentence = text.rsplit("Sentence: ", 1)[1].strip()
        return Reply(f"It reads more into: {sentence}\n<answer>{sentence} Indeed.</answer>")


def test_a_rewrite_run_lists_the_explanation_points_that_failed_and_retry_asks_them(runs_page, db_copy, llm) -> None:
    responder = _Explained()
    llm.responder = responder
    conn = store.connect(db_copy)
    wanted = RunSpec(DATASET, "sentence", "arm-rewrite", "openai", MODEL, variant="both", base_url=llm.openai_base_url)
    run_id = engine.create_run(conn, wanted, Selection(filters=Filters(search="mermaid")), ME)
    with conn.cursor() as cur:
        engine.Runner(conn, log.load(cur, run_id), ME).execute()
        units = log.load(cur, run_id).units
    conn.close()
    n = len(units)
    at = runs_page(run=str(run_id))
    reason = f"{n} done, 0 failed of {n}; explanation points failed for {n} (Retry failed asks them again)"
    assert state_line(at) == "**State:** finished: " + md_escape(reason)
    assert metric(at, "Done") == str(n) and metric(at, "Failed") == "0"
    (warning,) = [w.value for w in at.warning if "Explanation points" in w.value]
    assert md_escape(f"Explanation points (ARM A.3) failed for {n} of the {n} items done") in warning
    listed = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert sorted(listed["unit"]) == sorted(units)
    assert all(r.startswith("explanation points: parse_failure: expected points") for r in listed["reason"])

    responder.tagged = True
    before = len(llm.requests)
    at.button(key=f"runs.{DATASET}.retry.{run_id}").click().run()
    assert finish(at).startswith(f"**State:** finished: {n} done, 0 failed of {n}")
    asked = [r.last_user_text() for r in llm.requests[before:] if r.path.endswith("/chat/completions")]
    assert len(asked) == n and all(t.startswith("Summarize the key reasons") for t in asked), "points only"
    assert not [w for w in at.warning if "Explanation points" in w.value]
