"""A blind session's codes reach the read side (Explore, Compare, Errors, exports: every reader of label
sources) only when an admin closes it, and meanwhile its coders are blindfolded on the pages that show
every unit's labels (`faithlens.coding.closing`, `faithlens.coding.blindfold`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithlens import filter_options
from faithlens.coding import blindfold, closing, events, report, sessions
from faithlens.coding.sessions import SessionSpec
from faithlens.llm.runs.spec import Selection
from tests import coders, raw
from tests.coders import ADMIN
from tests.coding.support import connected, current_label, storysumm_ids, tags_of

F, U = "faithful", "unfaithful"


def _coding_rows(conn, session: str) -> dict[str, int]:
    """How many rows of each read-side table name the session's label sources."""
    like = f"coding/{session}/%"
    return {
        table: conn.execute(f"SELECT count(*) FROM {table} WHERE source LIKE ?", [like]).fetchone()[0]
        for table in ("label_source", "label", "tag")
    }


def test_a_blind_session_writes_its_labels_at_the_close_as_each_coder_last_left_them(db_copy: Path):
    units = storysumm_ids("val")[:3]
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, SessionSpec("quiet", "storysumm", "summary", "storysumm-faithfulness",
                                                        selection=Selection("val"), sample=3, seed=1, ordering="fixed",
                                                        units=tuple(units), coders=("ann", "bob")))  # fmt: skip
        coders.code(conn, made, "ann", events.Submission(units[0], (U,), "ann's why"))
        coders.code(conn, made, "ann", events.Submission(units[1], (F,)))
        coders.code(conn, made, "ann", events.Submission(units[2], (F,)))
        coders.undo(conn, made, "ann", units[2])
        coders.code(conn, made, "bob", events.Submission(units[0], (F,)))
        report.adjudicate(conn, coders.person("lead", "adjudicator"), made, units[0], (U,), "settled")
        while_open = _coding_rows(conn, "quiet")
        with conn.cursor() as cur:
            offered = filter_options.filter_options(cur, "storysumm").sources
        closed = closing.close(conn, ADMIN, made)
        after = _coding_rows(conn, "quiet")
        closing.close(conn, ADMIN, closed)
        again = _coding_rows(conn, "quiet")
        labels = {
            (coder, unit): current_label(conn, "storysumm", made.source(coder), "summary", unit)
            for coder in ("ann", "bob", sessions.ADJUDICATED)
            for unit in units
        }
    assert while_open == {"label_source": 0, "label": 0, "tag": 0}, "nothing of the open session is readable"
    assert not [s for s in offered if s.startswith("coding/quiet/")], "Explore offers no source of it"
    assert after == {"label_source": 3, "label": 4, "tag": 0}, "ann's two codes, bob's one, the settled one"
    assert again == after, "closing twice writes nothing more"
    assert labels == {
        ("ann", units[0]): (U, U, "ann's why", "ann"),
        ("ann", units[1]): (F, F, None, "ann"),
        ("ann", units[2]): None,
        ("bob", units[0]): (F, F, None, "bob"),
        ("bob", units[1]): None,
        ("bob", units[2]): None,
        (sessions.ADJUDICATED, units[0]): (U, U, "settled", "lead"),
        (sessions.ADJUDICATED, units[1]): None,
        (sessions.ADJUDICATED, units[2]): None,
    }


def test_a_tag_codebooks_blind_codes_become_tags_at_the_close(db_copy: Path):
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, SessionSpec("tags", "tofueval", "sentence", "tofueval-errors",
                                                        selection=Selection(), sample=2, seed=5, ordering="fixed"))  # fmt: skip
        first, second = made.units
        coders.joined(conn, made, "ann")
        coders.code(conn, made, "ann", events.Submission(first, ("Extrinsic Information", "Reasoning Error"), "why"))
        coders.code(conn, made, "ann", events.Submission(second, ("none",)))
        before = tags_of(conn, "tofueval", "sentence", first, made.source("ann"))
        closing.close(conn, ADMIN, made)
        after = {unit: tags_of(conn, "tofueval", "sentence", unit, made.source("ann")) for unit in made.units}
    assert before == set()
    assert after == {
        first: {("error_type", "Extrinsic Information"), ("error_type", "Reasoning Error")},
        second: set(),
    }


def test_a_coder_is_blindfolded_on_their_open_blind_sessions_summaries_only(db_copy: Path):
    records = raw.storysumm_records()
    summary_id = storysumm_ids("test")[0]
    sentences = [f"{summary_id}#s{i}" for i in range(len(records[summary_id]["summary"]))][:2]
    with connected(db_copy) as conn:
        blind = sessions.create(conn, ADMIN, SessionSpec("b", "storysumm", "sentence", "storysumm-faithfulness",
                                                         units=tuple(sentences), coders=("ann",)))  # fmt: skip
        sessions.create(conn, ADMIN, SessionSpec("open", "storysumm", "summary", "storysumm-faithfulness",
                                                 units=(storysumm_ids("test")[1],), coders=("ann",), blind=False))  # fmt: skip
        folds = {
            who: blindfold.blindfold(conn, actor)
            for who, actor in {
                "ann": coders.person("ann"),
                "vic": coders.person("vic", "viewer"),
                "lead": coders.person("lead", "adjudicator"),
            }.items()
        }
        closing.close(conn, ADMIN, blind)
        after = blindfold.blindfold(conn, coders.person("ann"))
    ann = folds["ann"]
    assert ann.hidden_summaries("storysumm") == {summary_id}, "the summary of the two sentences, not the open session's"
    assert ann.hidden_summaries("fables") == frozenset()
    assert "you code this summary blind in session b" in ann.summary_refusal("storysumm", summary_id).message
    assert ann.summary_refusal("storysumm", storysumm_ids("test")[1]) is None
    assert "you code 2 sentences of storysumm blind (session b)" in ann.dataset_refusal("storysumm").message
    assert ann.dataset_refusal("tofueval") is None
    assert folds["vic"].hidden_summaries("storysumm") == frozenset(), "a viewer codes nothing"
    assert folds["lead"].dataset_refusal("storysumm") is None, "an adjudicator sees every label of the session"
    assert after.dataset_refusal("storysumm") is None, "closed: nothing is hidden any more"


def test_a_code_saved_from_a_page_that_read_the_session_before_its_close_is_refused(db_copy: Path):
    unit = storysumm_ids("val")[0]
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, SessionSpec("late", "storysumm", "summary", "storysumm-faithfulness",
                                                        units=(unit,), coders=("ann",)))  # fmt: skip
        closing.close(conn, ADMIN, made)
        events_before = conn.execute("SELECT count(*) FROM coding_event").fetchone()[0]
        with pytest.raises(events.CodingError, match="session 'late' is closed"):
            coders.code(conn, made, "ann", events.Submission(unit, (F,)))  # `made` still reads open
        events_after = conn.execute("SELECT count(*) FROM coding_event").fetchone()[0]
    assert not made.closed and events_after == events_before
