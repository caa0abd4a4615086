"""ARM Table 3's # rewrites and average edit distance, per rewrite source and per run, worked by hand on
a small imported dataset whose rewrites come through the real ask path (scripted server), and shown
beside the paper's printed row (ARM, section 5.3, Table 3: Claude both, 341 rewrites, 0.61)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.analysis import published
from faithlens.build import ingest
from faithlens.llm import ask
from faithlens.llm.runs import engine, log, spec
from faithlens.views import arm_tables
from tests.llm.conftest import ANTHROPIC_KEY, ME, asking, target
from tests.llm.test_cli_llm import environment, faithlens
from tests.llmserver import LLMServer

DATASET = "armhand"
MODEL = "claude-3-5-sonnet-20241022"
SOURCE = f"llm/arm-rewrite-both/{MODEL}"
# (sentence, rewrite, word edits, longer word list). Words are NLTK tokens, lowercased and stemmed.
PAIRS = [
    ("Mary walked home.", "Mary ran home.", 1, 4),  # mary walk home . -> mary ran home .
    ("He didn't go.", "He did not go.", 1, 5),  # he did n't go . -> he did not go .
    ("Ann sailed south.", "Ann sailed south.", 0, 3),  # repeated: r = s, not a rewrite
    ("The storm came.", "A storm came at dawn.", 3, 6),  # the -> a, + at, + dawn
]
REWRITTEN = [pair for pair in PAIRS if pair[0] != pair[1]]
AVG_DISTANCE = (1 / 4 + 1 / 5 + 3 / 6) / 3  # over the 3 rewritten claims: 0.95 / 3 = 0.3167
AVG_WORDS = (1 + 1 + 3) / 3


@pytest.fixture
def hand(db_copy: Path, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The bundled database plus a four-sentence summary of a story (canonical import)."""
    line = {
        "document_id": "story",
        "document": "Mary walked home. He did not go. Ann sailed south. A storm came at dawn.",
        "summary_id": "sum",
        "model": "gen",
        "sentences": [{"text": sentence} for sentence, *_ in PAIRS],
    }
    path = tmp_path / f"{DATASET}.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ingest.import_file(db_copy, path, "canonical")
    conn = store.connect(db_copy)
    yield conn
    conn.close()


def _rewrite_all(server: LLMServer, conn: duckdb.DuckDBPyConnection) -> None:
    for position, (sentence, rewrite, *_) in enumerate(PAIRS):
        server.queue(f"<answer>{rewrite}</answer>")
        unit = target(conn, DATASET, f"sum#s{position}")
        assert unit.text == sentence
        answer = ask.ask(conn, unit, asking(server, "arm-rewrite", "anthropic", variant="both"), ME)
        assert answer.status == "ok"


def test_table3_counts_rewrites_and_averages_their_normalised_distance(
    llm_env: LLMServer, hand: duckdb.DuckDBPyConnection
) -> None:
    _rewrite_all(llm_env, hand)
    with hand.cursor() as cur:
        (row,) = arm_tables.table3_rows(cur, DATASET)
        first_two = arm_tables.rewrite_figures(cur, DATASET, SOURCE, "sentence", ["sum#s0", "sum#s1"])
    ours = row.ours
    assert (ours.source, ours.level, ours.model, ours.variant) == (SOURCE, "sentence", MODEL, "both")
    assert (ours.claims, ours.rewrites) == (4, len(REWRITTEN))
    assert ours.avg_edit_distance == pytest.approx(AVG_DISTANCE)
    assert ours.avg_word_edits == pytest.approx(AVG_WORDS)
    assert (first_two.claims, first_two.rewrites) == (2, 2)
    assert first_two.avg_edit_distance == pytest.approx((1 / 4 + 1 / 5) / 2)

    # The paper's row for the same model family and prompt, as printed (ARM Table 3, "Claude both").
    assert row.paper_label == "Claude both"
    compared = {c.column: c for c in row.compared}
    assert (compared["rewrites"].paper.text, compared["rewrites"].ours) == ("341", 3)
    assert compared["avg_edit_distance"].paper.text == "0.61"
    assert compared["avg_edit_distance"].status == published.DIFFERS
    assert compared["subj"].status == published.MISSING
    assert "4 sentences rewritten by claude-3-5-sonnet-20241022" in compared["rewrites"].cause
    assert "does not define its edit-distance normalisation" in compared["rewrites"].cause
    shown = arm_tables.table3_display([row])[0]
    assert (shown["# rewrites"], shown["# rewrites (paper)"], shown["avg. edit dist."]) == (3, "341", 0.32)


def test_a_rewrite_run_reports_table3s_figures_and_other_runs_do_not(
    llm_env: LLMServer, hand: duckdb.DuckDBPyConnection, db_copy: Path
) -> None:
    _rewrite_all(llm_env, hand)
    wanted = spec.RunSpec(
        DATASET, "sentence", "arm-rewrite", "anthropic", MODEL, variant="both", base_url=llm_env.anthropic_base_url
    )
    run_id = engine.create_run(hand, wanted, spec.Selection(), ME)
    with hand.cursor() as cur:
        run = log.load(cur, run_id)
    done = engine.Runner(hand, run, ME).execute()
    assert (done.done, done.calls) == (4, 0), "every rewrite is already stored"
    with hand.cursor() as cur:
        figures = arm_tables.run_figures(cur, run_id)
    assert (figures.claims, figures.rewrites) == (4, 3)
    assert figures.avg_edit_distance == pytest.approx(AVG_DISTANCE)
    assert "Claude both: 341 rewrites of StorySumm's 568 sentences, average edit distance 0.61" in (
        arm_tables.paper_beside(figures)
    )
    hand.close()

    listed = faithlens(["llm", "runs", "--dataset", DATASET, "--json", "--db", str(db_copy)], environment(None))
    assert listed.returncode == 0, listed.stderr
    (record,) = json.loads(listed.stdout)
    assert record["arm"]["rewrites"] == 3 and record["arm"]["claims"] == 4
    assert record["arm"]["avg_edit_distance"] == pytest.approx(AVG_DISTANCE)
    assert record["arm"]["avg_word_edits"] == pytest.approx(AVG_WORDS)

    env = environment(llm_env, ANTHROPIC_API_KEY=ANTHROPIC_KEY)
    again = faithlens(["llm", "run", "--resume", str(run_id), "--json", "--db", str(db_copy)], env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["arm"]["avg_edit_distance"] == pytest.approx(AVG_DISTANCE)
    assert "ARM: 3 of 4 sentences rewritten (r != s); average edit distance of the rewrites 0.32" in (
        faithlens(["llm", "runs", "--dataset", DATASET, "--db", str(db_copy)], environment(None)).stdout
    )


def test_a_run_of_another_method_has_no_arm_figures(llm_env: LLMServer, hand: duckdb.DuckDBPyConnection) -> None:
    llm_env.queue(*["<answer>Yes</answer>"] * 4)
    wanted = spec.RunSpec(DATASET, "sentence", "arm-zero-shot", "openai", "gpt-4o", base_url=llm_env.openai_base_url)
    run_id = engine.create_run(hand, wanted, spec.Selection(), ME)
    with hand.cursor() as cur:
        assert arm_tables.run_figures(cur, run_id) is None
