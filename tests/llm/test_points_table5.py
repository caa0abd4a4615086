"""ARM Table 5 end to end at the core: a rewrite run on the scripted server (the real ask path, one of its
explanation-point splits answered from another unit's cached call), an ARM preference session made
through `faithlens.coding.sessions`, three coders' IMPORTANT / NEUTRAL / WRONG marks saved through
`faithlens.coding.events`, and the session's Table 5 figures (Individual and majority vote, as the
Sessions page shows them through `faithlens.views.coding` and `faithlens.views.arm_tables`) checked
against the figures worked by hand below from ARM section 4.3's definitions."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithlens import store
from faithlens.coding import modes, report, sessions
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.filters import Filters
from faithlens.llm.runs import engine, log
from faithlens.llm.runs.spec import RunSpec, Selection
from faithlens.views import arm_tables, coding
from tests import coders, raw
from tests.coders import ADMIN
from tests.llm.conftest import ME, rows
from tests.llmserver import LLMServer, Reply

MODEL = "gpt-4o"
SOURCE = f"llm/arm-rewrite-both/{MODEL}"
IMP, NEU, WRG = "IMPORTANT", "NEUTRAL", "WRONG"
SUMMARY = next(i for i, r in sorted(raw.storysumm_records().items()) if "honeycomb" in " ".join(r["summary"]).lower())
SENTENCES = [s.strip() for s in raw.storysumm_records()[SUMMARY]["summary"]]
SHARED, OWN = "The summary assumes a detail.", "The summary skips the cause."
"""Sentences 0 and 1 are rewritten with the same explanation (one split, cached), sentence 2 with its own."""
SPLITS = {SHARED: ("It assumes a detail.", "It names no source."), OWN: ("It skips the cause.", "It adds a time.", "It drops a name.")}  # fmt: skip


def _respond(request) -> Reply:
    text = request.last_user_text()
    for why, items in SPLITS.items():
        if text.rstrip().endswith(why):  # ARM A.3's prompt ends with the explanation it splits
            return Reply("".join(f"<item>{item}</item>" for item in items))
    sentence = text.rsplit("Sentence: ", 1)[1].strip()
    why = OWN if SENTENCES.index(sentence) == 2 else SHARED
    return Reply(f"{why}\n<answer>{sentence.removesuffix('.')} as the story tells it.</answer>")


@pytest.fixture
def session(llm_env: LLMServer, db_copy: Path):
    llm_env.responder = _respond
    conn = store.connect(db_copy)
    wanted = RunSpec("storysumm", "sentence", "arm-rewrite", "openai", MODEL, "both", base_url=llm_env.openai_base_url)
    run_id = engine.create_run(conn, wanted, Selection(filters=Filters(search=SENTENCES[0])), ME)
    with conn.cursor() as cur:
        now = engine.Runner(conn, log.load(cur, run_id), ME).execute()
    assert (now.done, now.failed, now.points_failed) == (3, 0, 0)
    splits = rows(conn, "SELECT target_id FROM llm_call WHERE prompt_name = 'arm-explanation-points'")
    assert len(splits) == 2, "sentences 0 and 1 share one split: the second came from the cache"
    made = sessions.create(
        conn,
        ADMIN,
        SessionSpec("table5", "storysumm", "sentence", "arm-preference", "arm-preference", suggestions=SOURCE),
    )
    yield conn, made
    conn.close()


def test_marks_on_points_give_table_5s_figures_worked_by_hand(session) -> None:
    conn, made = session
    units = [f"{SUMMARY}#s{n}" for n in range(3)]
    assert sorted(made.units) == units
    with conn.cursor() as cur:
        shown = [modes.context(cur, made, unit).points for unit in units]
    assert shown == [SPLITS[SHARED], SPLITS[SHARED], SPLITS[OWN]], "every rewrite has its points, cached or not"
    marks = {
        ("ann", units[0]): ("rewrite", [IMP, NEU]),
        ("bob", units[0]): ("rewrite", [IMP, WRG]),
        ("cat", units[0]): ("original", None),
        ("ann", units[1]): ("rewrite", [NEU, NEU]),
        ("bob", units[1]): ("rewrite", [IMP, IMP]),
        ("cat", units[1]): ("rewrite", [IMP, NEU]),
        ("ann", units[2]): ("rewrite", [IMP, WRG, NEU]),
        ("bob", units[2]): ("neutral", None),
        ("cat", units[2]): ("rewrite", [WRG, WRG, IMP]),
    }
    for (coder, unit), (code, points) in marks.items():
        coders.code(conn, made, coder, Submission(unit, (code,), None, {"points": points}))
    arm = report.session_agreement(conn, made).arm
    # Individual (ARM 4.3): R = the 7 marked explanations. Share of IMPORTANT points per explanation:
    # 1/2, 1/2, 0, 1, 1/2, 1/3, 1/3 -> mean 19/42; with no IMPORTANT point: 1 of 7 (ann's on units[1]).
    # WRONG: 0, 1/2, 0, 0, 0, 1/3, 2/3 -> mean 3/14; with no WRONG point: 4 of 7.
    individual = {"pct_important": 19 / 42, "pct_none_important": 1 / 7, "pct_wrong": 3 / 14, "pct_none_wrong": 4 / 7}
    # Majority vote (more than half of a unit's 3 coders, so 2 marks): units[0] [IMP, -]; units[1] [IMP, NEU];
    # units[2] [-, WRG, -]. IMPORTANT shares 1/2, 1/2, 0 -> 1/3; none important 1 of 3. WRONG 0, 0, 1/3 -> 1/9;
    # none wrong 2 of 3.
    majority = {"pct_important": 1 / 3, "pct_none_important": 1 / 3, "pct_wrong": 1 / 9, "pct_none_wrong": 2 / 3}
    assert arm["explanations"] == 7 and arm["majority_explanations"] == 3
    for key, share in individual.items():
        assert arm[key] == pytest.approx(100 * share), key
    for key, share in majority.items():
        assert arm[f"majority_{key}"] == pytest.approx(100 * share), key
    shown_rows = {row["metric"]: row["value"] for row in coding.arm_rows(arm)}
    assert shown_rows[coding.ARM_WORDS["pct_important"]] == pytest.approx(100 * 19 / 42)
    table5 = {(r["row"], r["figures"]): r for r in arm_tables.table5_rows(arm)}
    ours = table5["Maj. vote", "this session"]
    assert [ours[c] for c in ("% important", "% none important", "% wrong", "% none wrong")] == pytest.approx(
        [100 * majority[k] for k in ("pct_important", "pct_none_important", "pct_wrong", "pct_none_wrong")]
    )
    # ARM section 5.4, Table 5, "Maj. vote" row as printed, beside ours.
    paper = table5["Maj. vote", "paper (Table 5)"]
    assert [paper[c] for c in ("% important", "% none important", "% wrong", "% none wrong")] == [
        68.72,
        24.39,
        0.56,
        98.78,
    ]
