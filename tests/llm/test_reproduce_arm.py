"""ARM's Tables 2-5 on the Reproduced figures page (`faithlens.views.reproduce_arm`). Without a rewrite
source or a coding session every printed figure (typed from the paper in tests/core/test_published_arm.py)
is "no figure of ours", its cause saying what to create and its link opening that page. With a Claude
rewrite source made through the real ask path (the scripted server) and a preference session coded
through the coding core, Table 3's, 4's and 5's figures of ours stand beside the paper's, recomputed
here from the raw StorySumm file, NLTK's tokens, scikit-learn and the codes saved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import nltk
import pytest
from sklearn.metrics import balanced_accuracy_score

from faithlens import store
from faithlens.coding import sessions
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.llm import ask
from faithlens.views import reproduce_arm
from tests import coders, raw
from tests.coders import ADMIN
from tests.core.test_published_arm import TYPED
from tests.llm.conftest import ME, asking, target
from tests.llmserver import LLMServer

MODEL = "claude-3-5-sonnet-20241022"
SOURCE = f"llm/arm-rewrite-both/{MODEL}"
CLAIMS = 4
"""How many of the first StorySumm summary's sentences are rewritten; the first CLAIMS - 1 get a change."""
POINTS = ("It names the beach.", "It keeps the time.")
IMP, NEU, WRG = "IMPORTANT", "NEUTRAL", "WRONG"


def _figures(path: Path) -> list:
    with duckdb.connect(str(path), read_only=True) as conn, conn.cursor() as cur:
        return reproduce_arm.arm_figures(cur)


def test_without_sources_every_printed_figure_says_what_to_create(built_db: Path) -> None:
    figures = _figures(built_db)
    printed = {(key, label): values for key, rows in TYPED.items() for label, values in rows.items()}
    assert {(f.table.key, f.row.label): f for f in figures}.keys() == printed.keys()
    assert len(figures) == sum(len(values) for values in printed.values())
    assert {f.status for f in figures} == {"no figure of ours"}
    for figure in figures:
        assert figure.compared.paper.text in printed[figure.table.key, figure.row.label]
        cause, link = figure.compared.cause, figure.link
        if figure.table.key == "table2" or figure.compared.column in ("subj", "subj_or_unfaith"):
            assert "ARM's subjectivity labels" in cause and "no bundled dataset has" in cause
        elif figure.table.key == "table3":
            family = "Claude" if figure.row.key.startswith("claude") else "GPT-4"
            variant = figure.row.key.removeprefix(figure.row.key.split("/")[0] + "/arm-rewrite-")
            assert f"run arm-rewrite ({variant}) with a {family} model on StorySumm's summary sentences" in cause
        else:
            mode = "faithfulness" if figure.row.key in ("agreement", "faithful") else "preference"
            assert f"code an ARM {mode} session" in cause
        if figure.table.key in ("table2", "table3"):
            assert (link.page, link.state.dataset) == ("runs", "storysumm") and link.href() == "/runs?dataset=storysumm"
        else:
            assert link.href() == "/sessions?dataset=storysumm&view=new"


@pytest.fixture
def rewritten(llm_env: LLMServer, db_copy: Path) -> Iterator[tuple[Path, list[tuple[str, str, str]]]]:
    """The first CLAIMS sentences of the first summary whose gold labels them both faithful and unfaithful
    (raw file), asked of Claude with ARM's "both" prompt; returns the (unit, sentence, rewrite) triples."""
    records = raw.storysumm_records()
    first = next(
        i
        for i, r in records.items()
        if len({*r["errors"][:CLAIMS]}) == 2 and all(s.strip().endswith(".") for s in r["summary"][:CLAIMS])
    )
    conn = store.connect(db_copy)
    done = []
    for position in range(CLAIMS):
        unit = target(conn, "storysumm", f"{first}#s{position}")
        rewrite = unit.text[:-1] + " indeed." if position < CLAIMS - 1 else unit.text
        if rewrite == unit.text:
            llm_env.queue(f"<answer>{rewrite}</answer>")
        else:
            llm_env.queue(
                f"Sentence {position} reads too much in.\n<answer>{rewrite}</answer>",
                "".join(f"<item>{p}</item>" for p in POINTS),
            )
        answer = ask.ask(conn, unit, asking(llm_env, "arm-rewrite", "anthropic", variant="both"), ME)
        assert answer.status == "ok" and answer.rewrite == rewrite, (position, answer.points, answer.raw_output)
        done.append((unit.target_id, unit.text, rewrite))
    conn.close()
    yield db_copy, done


def _expected_table3(done: list[tuple[str, str, str]]) -> dict[str, float]:
    """# rewrites, the mean of 1 / (tokens + 1) over them (one word inserted), and balanced accuracy of
    r != s against the raw file's gold sentence labels."""
    changed = [(s, r) for _, s, r in done if s != r]
    distance = sum(1 / len(nltk.word_tokenize(r, preserve_line=True)) for _, r in changed) / len(changed)
    record = raw.storysumm_records()[done[0][0].split("#")[0]]
    gold = [raw.BINARY[record["errors"][int(unit.split("#s")[1])]] for unit, _, _ in done]
    flagged = ["unfaithful" if s != r else "faithful" for _, s, r in done]
    both = len(set(gold)) == 2
    return {
        "rewrites": len(changed),
        "avg_edit_distance": distance,
        "unfaith": 100 * balanced_accuracy_score(gold, flagged) if both else None,
    }


def test_a_claude_rewrite_source_stands_beside_the_papers_claude_both_row(rewritten) -> None:
    path, done = rewritten
    figures = [f for f in _figures(path) if f.table.key == "table3"]
    ours = [f for f in figures if f.row.label.startswith("Claude both: ours")]
    assert {f.row.label for f in ours} == {f"Claude both: ours {SOURCE} (storysumm, {CLAIMS} sentences)"}
    expected = _expected_table3(done)
    assert expected["unfaith"] is not None, "the gold labels of these sentences hold both classes"
    got = {f.compared.column: f for f in ours}
    for column, value in expected.items():
        assert got[column].compared.ours == (value if value is None else pytest.approx(value)), column
    assert [got[c].compared.paper.text for c in ("rewrites", "avg_edit_distance", "unfaith")] == [
        TYPED["table3"]["Claude both"][i] for i in (3, 4, 1)
    ]
    for column in ("rewrites", "avg_edit_distance"):
        assert (
            got[column].status == "differs" and f"{CLAIMS} sentences rewritten by {MODEL}" in got[column].compared.cause
        )
    assert got["subj"].status == "no figure of ours" and "subjectivity labels" in got["subj"].compared.cause
    assert f"{CLAIMS} sentences of storysumm rewritten by {MODEL} here, scored against its gold labels" in (
        got["unfaith"].compared.cause
    )
    assert ours[0].link.href() == "/rewrite?dataset=storysumm"
    others = [f for f in figures if f not in ours]
    assert others and all(f.status == "no figure of ours" for f in others), "other models and prompts: none yet"


def test_a_preference_session_gives_table_4s_preferred_row_and_table_5(rewritten) -> None:
    path, done = rewritten
    conn = store.connect(path)
    spec = SessionSpec("armpref", "storysumm", "sentence", "arm-preference", "arm-preference", suggestions=SOURCE)
    made = sessions.create(conn, ADMIN, spec)
    units = [unit for unit, s, r in done if s != r]
    assert sorted(made.units) == sorted(units), "the sentences the source rewrote"
    plan = {
        ("ann", units[0]): ("rewrite", [IMP, NEU]),
        ("bob", units[0]): ("rewrite", [IMP, WRG]),
        ("ann", units[1]): ("original", None),
        ("bob", units[1]): ("rewrite", [NEU, NEU]),
    }
    for (coder, unit), (code, marks) in plan.items():
        coders.code(conn, made, coder, Submission(unit, (code,), None, {"points": marks}))
    conn.close()
    figures = [f for f in _figures(path) if f.table.key in ("table4", "table5")]
    ours = {(f.table.key, f.row.key, f.compared.column): f for f in figures if "session armpref" in f.row.label}
    # Preferred by the coders' majority, of the coded units: units[0] rewrite (2 of 2); units[1] a tie.
    assert ours["table4", "preferred", "rewrites"].compared.ours == pytest.approx(50)
    assert ours["table4", "preferred", "original"].compared.ours == 0
    # Individual: three marked explanations, IMPORTANT shares 1/2, 1/2, 0; WRONG 0, 1/2, 0.
    individual = {c: ours["table5", "individual", c].compared.ours for c in ("pct_important", "pct_wrong")}
    assert individual == {"pct_important": pytest.approx(100 / 3), "pct_wrong": pytest.approx(100 / 6)}
    assert ours["table5", "individual", "pct_none_important"].compared.ours == pytest.approx(100 / 3)
    # Majority of units[0]'s two coders: point 1 IMPORTANT (both); point 2 none. units[1]: bob alone marked.
    assert ours["table5", "majority", "pct_important"].compared.ours == pytest.approx(100 * (1 / 2 + 0) / 2)
    differing = [f for f in ours.values() if f.status == "differs"]
    assert differing and all("three Upwork annotators" in f.compared.cause for f in differing)
    assert {f.link.href() for f in ours.values()} == {"/sessions?dataset=storysumm&session=armpref"}
    faithfulness = [f for f in figures if f.row.key in ("agreement", "faithful")]
    assert {f.status for f in faithfulness} == {"no figure of ours"}, "no ARM faithfulness session yet"
