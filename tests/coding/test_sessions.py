"""Coding sessions: the unit set fixed at creation (a split, an Explore filter, a seeded sample) equals
what the raw files give, each coder's order is their own and stable, bad specs are refused, coders
join by name; and what a session reports: progress, disagreements, adjudication and agreement."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from faithlens.coding import closing, events, report, sessions
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.filters import Filters
from faithlens.llm.runs.spec import Selection
from tests import coders, raw
from tests.coders import ADMIN
from tests.coding.support import (
    connected,
    current_label,
    row_counts,
    storysumm_claim_count,
    storysumm_ids,
    storysumm_sentence_count,
)

BOOK = "storysumm-faithfulness"


def _spec(name: str = "s1", **fields) -> SessionSpec:
    return SessionSpec(**{"name": name, "dataset": "storysumm", "level": "summary", "codebook": BOOK, **fields})


# --- the unit set ----------------------------------------------------------------------------------


def test_a_split_session_holds_exactly_that_splits_summaries(db_copy: Path):
    expected = storysumm_ids("test")
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(selection=Selection(split="test")))
        again = sessions.get(conn, "s1")
    assert made == again
    assert list(made.units) == expected
    assert len(made.units) == sum(r["split"] == "test" for r in raw.storysumm_records().values())
    assert made.selection == f"{len(expected)} summaries where split is test"
    assert (made.dataset, made.level, made.mode, made.codebook) == ("storysumm", "summary", "codes", BOOK)


def test_a_sentence_session_holds_every_sentence_of_the_splits_summaries(db_copy: Path):
    summaries = storysumm_ids("val")
    expected = [f"{sid}#s{i}" for sid in summaries for i in range(storysumm_sentence_count(sid))]
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(level="sentence", selection=Selection(split="val")))
    assert list(made.units) == expected
    assert made.selection.startswith(f"{len(expected):,} sentences of {len(summaries)} summaries")


def test_an_explore_filter_session_holds_the_filtered_summaries(db_copy: Path):
    records = raw.storysumm_records()
    expected = sorted(sid for sid, r in records.items() if r["split"] == "test" and r["label"] == 0)
    chosen = Selection(filters=Filters(split="test", label="unfaithful"))
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(selection=chosen))
    assert list(made.units) == expected
    assert made.selection.startswith(f"{len(expected)} summaries where split is test and ")
    assert "unfaithful" in made.selection


def test_a_filtered_claim_session_holds_the_claims_of_the_filtered_summaries(db_copy: Path):
    records = raw.storysumm_records()
    summaries = sorted(sid for sid, r in records.items() if r["split"] == "val" and r["label"] == 1)
    expected = [f"{sid}#c{i}" for sid in summaries for i in range(storysumm_claim_count(sid))]
    chosen = Selection(split="val", filters=Filters(label="faithful"))
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(level="claim", selection=chosen))
    assert list(made.units) == expected
    assert f"{len(expected):,} claims" in made.selection


def test_a_seeded_sample_is_n_units_of_the_set_in_reading_order(db_copy: Path):
    everything = storysumm_ids()
    with connected(db_copy) as conn:
        first = sessions.create(conn, ADMIN, _spec("a", sample=10, seed=3))
        same = sessions.create(conn, ADMIN, _spec("b", sample=10, seed=3))
        other = sessions.create(conn, ADMIN, _spec("c", sample=10, seed=4))
    assert len(first.units) == 10 and len(set(first.units)) == 10
    assert set(first.units) <= set(everything)
    assert list(first.units) == sorted(first.units)
    assert first.units == same.units
    assert other.units != first.units and set(other.units) <= set(everything)
    assert first.selection == f"10 summaries drawn at random (seed 3) from all {len(everything)} summaries"


def test_a_sample_as_large_as_the_set_keeps_every_unit(db_copy: Path):
    expected = storysumm_ids("val")
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(selection=Selection(split="val"), sample=len(expected) + 5, seed=1))
    assert list(made.units) == expected


# --- each coder's order ------------------------------------------------------------------------------


def test_seeded_order_is_each_coders_own_and_stable(db_copy: Path):
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(selection=Selection(split="test"), seed=11))
        ann, bob = made.order_for("ann"), made.order_for("bob")
        assert sessions.get(conn, "s1").order_for("ann") == ann
    assert sorted(ann) == sorted(made.units) == sorted(bob)
    assert made.order_for("ann") == ann
    assert ann != bob
    assert ann != made.units


def test_fixed_order_is_the_reading_order_for_everyone(db_copy: Path):
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(selection=Selection(split="test"), ordering="fixed"))
    assert made.order_for("ann") == made.order_for("bob") == made.units == tuple(storysumm_ids("test"))


# --- refusals ----------------------------------------------------------------------------------------


def _refused(conn, spec: SessionSpec) -> FaithLensError:
    before = row_counts(conn)
    with pytest.raises(FaithLensError) as caught:
        sessions.create(conn, ADMIN, spec)
    assert row_counts(conn) == before
    return caught.value


def test_a_duplicate_session_name_is_refused(db_copy: Path):
    with connected(db_copy) as conn:
        sessions.create(conn, ADMIN, _spec(selection=Selection(split="val")))
        error = _refused(conn, _spec(selection=Selection(split="test")))
        assert sessions.get(conn, "s1").units == tuple(storysumm_ids("val"))
    assert "exists" in str(error)


@pytest.mark.parametrize("coder", ["adjudicated", "Adjudicated", "", "   ", "-dash", "a/b"])
def test_bad_coder_names_are_refused_at_creation_and_when_joining(db_copy: Path, coder: str):
    with connected(db_copy) as conn:
        _refused(conn, _spec("bad", coders=("ann", coder)))
        made = sessions.create(conn, ADMIN, _spec("good", coders=("ann",)))
        before = row_counts(conn)
        with pytest.raises(FaithLensError):
            sessions.join(conn, coders.person(coder), made)
        assert row_counts(conn) == before


def test_line_by_line_at_sentence_level_is_refused(db_copy: Path):
    with connected(db_copy) as conn:
        error = _refused(conn, _spec(level="sentence", mode="line-by-line"))
    assert "sentence" in str(error)


@pytest.mark.parametrize(
    "fields",
    [
        {"mode": "hybrid"},  # needs an LLM source of suggestions
        {"mode": "codes", "suggestions": "llm/some/model"},
        {"mode": "line-by-line", "codebook": "arm-ambiguity"},  # tags, not verdicts
        {"mode": "no-such-mode"},
        {"level": "paragraph"},
        {"ordering": "random"},
        {"sample": 0},
        {"name": "/bad name"},
        {"selection": Selection(split="no-such-split")},
    ],
    ids=[
        "hybrid-no-source",
        "codes-with-source",
        "tags-line-by-line",
        "mode",
        "level",
        "ordering",
        "sample",
        "name",
        "empty",
    ],
)
def test_other_unusable_specs_are_refused(db_copy: Path, fields: dict):
    with connected(db_copy) as conn:
        _refused(conn, _spec(**fields))


def test_an_unknown_session_or_codebook_is_not_found(db_copy: Path):
    with connected(db_copy) as conn:
        with pytest.raises(NotFoundError):
            sessions.get(conn, "nothing")
        with pytest.raises(NotFoundError):
            sessions.create(conn, ADMIN, _spec(codebook="no-such-codebook"))


# --- coders ------------------------------------------------------------------------------------------


def test_join_is_idempotent_and_coders_lists_invited_then_joined(db_copy: Path):
    with connected(db_copy) as conn:
        made = sessions.create(conn, ADMIN, _spec(coders=("dan", "ann", "dan")))
        assert made.coders == ("dan", "ann")
        assert sessions.join(conn, coders.person(" zoe "), made) == "zoe"
        assert sessions.join(conn, coders.person("zoe"), made) == "zoe"
        sessions.join(conn, coders.person("carl"), made)
        sessions.join(conn, coders.person("ann"), made)
        rows = conn.execute(
            "SELECT coder, count(*) FROM coding_coder WHERE session_id = ? GROUP BY coder ORDER BY coder",
            [made.session_id],
        ).fetchall()
        assert rows == [("carl", 1), ("zoe", 1)], "ann was invited: joining changes nothing"
        assert sessions.coders(conn.cursor(), made) == ("dan", "ann", "zoe", "carl")


def test_sessions_are_listed_newest_first_by_dataset(db_copy: Path):
    with connected(db_copy) as conn:
        sessions.create(conn, ADMIN, _spec("one"))
        sessions.create(conn, ADMIN, _spec("two"))
        sessions.create(conn, ADMIN, _spec("tofu", dataset="tofueval", sample=3))
        cur = conn.cursor()
        assert [s.name for s in sessions.listed(cur, "storysumm")] == ["two", "one"]
        assert [s.name for s in sessions.listed(cur)] == ["tofu", "two", "one"]


# --- what a session reports -------------------------------------------------------------------------

F, U, NA = "faithful", "unfaithful", "na"
CODES = {  # coder -> codes of the session's first units, in reading order (None: not coded)
    "ann": [F, F, U, NA, F, U],
    "bob": [F, U, U, NA, F, None],
    "cat": [F, F, U, F, None, None],
}


def _coded_session(conn) -> sessions.Session:
    made = sessions.create(conn, ADMIN, _spec("rep", selection=Selection(split="val"), coders=("dan", "ann")))
    sessions.join(conn, coders.person("bob"), made)
    for coder, codes in CODES.items():
        for unit, code in zip(made.units, codes, strict=False):
            if code is not None:
                note = f"{coder} on {unit[:6]}" if code == U else None
                coders.code(conn, made, coder, events.Submission(unit, (code,), note))
    return made


def test_progress_counts_each_coders_coded_units(db_copy: Path):
    total = len(storysumm_ids("val"))
    with connected(db_copy) as conn:
        made = _coded_session(conn)
        found = report.progress(conn, made)
    assert [(p.coder, p.coded, p.total) for p in found] == [
        ("dan", 0, total),
        ("ann", 6, total),
        ("bob", 5, total),
        ("cat", 4, total),
    ]


def test_disagreements_are_exactly_the_units_where_coders_differ(db_copy: Path):
    with connected(db_copy) as conn:
        made = _coded_session(conn)
        found = report.disagreements(conn, made)
    units = made.units
    # u1: ann F, bob U, cat F; u3: ann NA, bob NA, cat F. u0, u2, u4 agree; u5 has one coder.
    assert [d.unit for d in found] == [units[1], units[3]]
    first = found[0]
    assert {coder: code.codes for coder, code in first.codes.items()} == {"ann": (F,), "bob": (U,), "cat": (F,)}
    assert {coder: code.note for coder, code in first.codes.items()} == {
        "ann": None,
        "bob": f"bob on {units[1][:6]}",
        "cat": None,
    }
    assert {coder: code.codes for coder, code in found[1].codes.items()} == {"ann": (NA,), "bob": (NA,), "cat": (F,)}
    assert first.adjudicated is None and found[1].adjudicated is None


def test_adjudication_writes_the_sessions_settled_label_and_shows_on_the_disagreement(db_copy: Path):
    with connected(db_copy) as conn:
        made = _coded_session(conn)
        unit = made.units[1]
        before = row_counts(conn)
        with pytest.raises(events.CodingError):
            report.adjudicate(
                conn, coders.person("lead", "adjudicator"), made, unit, (U,), None
            )  # unfaithful needs its why
        assert row_counts(conn) == before
        report.adjudicate(conn, coders.person("lead", "adjudicator"), made, unit, (U,), "the story never says so")
        while_open = current_label(conn, "storysumm", "coding/rep/adjudicated", "summary", unit)
        closing.close(conn, ADMIN, made)
        settled = current_label(conn, "storysumm", "coding/rep/adjudicated", "summary", unit)
        event = conn.execute(
            "SELECT coder, action, codes, made_by FROM coding_event WHERE session_id = ? ORDER BY event_id DESC LIMIT 1",
            [made.session_id],
        ).fetchone()
        found = report.disagreements(conn, made)
        progress = report.progress(conn, made)
    assert while_open is None, "a blind session's labels wait for its close"
    assert settled == ("unfaithful", U, "the story never says so", "lead")
    assert event == ("adjudicated", "adjudicate", [U], "lead")
    assert found[0].unit == unit
    assert found[0].adjudicated.codes == (U,) and found[0].adjudicated.made_by == "lead"
    assert found[1].adjudicated is None
    assert "adjudicated" not in found[0].codes
    assert [p.coder for p in progress] == ["dan", "ann", "bob", "cat"]


def test_session_agreement_matches_sklearn_on_the_saved_codes(db_copy: Path):
    with connected(db_copy) as conn:
        made = _coded_session(conn)
        report.adjudicate(
            conn, coders.person("lead", "adjudicator"), made, made.units[1], (F,), None
        )  # the adjudicator is no coder
        found = report.session_agreement(conn, made)
    assert found.session == "rep" and found.session_units == len(storysumm_ids("val"))
    assert found.overall.coders == ("ann", "bob", "cat")
    assert found.overall.units == 6
    expected = []
    for a, b in (("ann", "bob"), ("ann", "cat"), ("bob", "cat")):
        both = [(x, y) for x, y in zip(CODES[a], CODES[b], strict=True) if x is not None and y is not None]
        kappa = cohen_kappa_score([x for x, _ in both], [y for _, y in both])
        expected.append((a, b, len(both), pytest.approx(kappa)))
    assert [(p.a, p.b, p.n, p.kappa) for p in found.overall.pairs] == expected
    assert found.overall.complete == 4  # u0-u3 were coded by all three
    assert found.overall.pct_all_agree == pytest.approx(100 * 2 / 4)  # u0 and u2 unanimous
