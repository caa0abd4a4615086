"""Saving codes: each code is a `coding_event` and, in the same transaction, a label event (or tags) of
the coder's source `coding/<session>/<coder>`, which is what Explore and Compare read; undo walks back
one code at a time; a refused code changes nothing; an import is all or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithlens.coding import events, library, sessions
from faithlens.coding.events import CodingError, Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import FaithLensError
from faithlens.llm.runs.spec import Selection
from tests import coders
from tests.coders import ADMIN
from tests.coding.support import connected, current_label, current_value, row_counts, storysumm_ids, tags_of

BOOK = "storysumm-faithfulness"


def _session(conn, name: str = "s1", **fields) -> sessions.Session:
    spec = {"name": name, "dataset": "storysumm", "level": "summary", "codebook": BOOK, "selection": Selection("val")}
    spec["blind"] = False  # labels are written as each code is saved (a blind session writes them at close)
    return sessions.create(conn, ADMIN, SessionSpec(**{**spec, **fields}))


def _events(conn, session) -> list[tuple]:
    return conn.execute(
        "SELECT coder, unit_id, action, codes, note, codebook_version, made_by FROM coding_event "
        "WHERE session_id = ? ORDER BY event_id",
        [session.session_id],
    ).fetchall()


# --- a code becomes a label ------------------------------------------------------------------------


def test_a_saved_code_is_an_event_and_the_coders_current_label(db_copy: Path):
    unit = storysumm_ids("val")[2]
    with connected(db_copy) as conn:
        made = _session(conn)
        event_id = coders.code(conn, made, "ann", Submission(unit, ("unfaithful",), "  he never leaves the ship  "))
        version = library.builtin()[BOOK].version
        assert _events(conn, made) == [
            ("ann", unit, "code", ["unfaithful"], "he never leaves the ship", version, "ann")
        ]
        assert current_label(conn, "storysumm", "coding/s1/ann", "summary", unit) == (
            "unfaithful",
            "unfaithful",
            "he never leaves the ship",
            "ann",
        )
        source = conn.execute(
            "SELECT kind, origin, coder, codebook FROM label_source WHERE dataset = 'storysumm' AND source = ?",
            ["coding/s1/ann"],
        ).fetchone()
        now = events.current(conn, made, "ann")
    assert source == ("coder", "app", "ann", f"{BOOK}@{version}")
    assert list(now) == [unit]
    assert (now[unit].codes, now[unit].note, now[unit].event_id) == (
        ("unfaithful",),
        "he never leaves the ship",
        event_id,
    )


def test_saving_again_changes_the_current_code(db_copy: Path):
    first, second = storysumm_ids("val")[:2]
    with connected(db_copy) as conn:
        made = _session(conn)
        coders.code(conn, made, "ann", Submission(first, ("faithful",)))
        coders.code(conn, made, "ann", Submission(second, ("na",)))
        coders.code(conn, made, "ann", Submission(first, ("unfaithful",), "wrong name"))
        coders.code(conn, made, "bob", Submission(first, ("faithful",)))
        assert current_label(conn, "storysumm", "coding/s1/ann", "summary", first) == (
            "unfaithful",
            "unfaithful",
            "wrong name",
            "ann",
        )
        assert current_value(conn, "storysumm", "coding/s1/ann", "summary", second) == "n/a"
        assert current_value(conn, "storysumm", "coding/s1/bob", "summary", first) == "faithful"
        everyone = events.current(conn, made)
    assert {key: code.codes for key, code in everyone.items()} == {
        ("ann", first): ("unfaithful",),
        ("ann", second): ("na",),
        ("bob", first): ("faithful",),
    }


def test_undo_goes_back_one_code_at_a_time_then_does_nothing(db_copy: Path):
    unit, other = storysumm_ids("val")[:2]
    source = "coding/s1/ann"
    with connected(db_copy) as conn:
        made = _session(conn)
        coders.code(conn, made, "ann", Submission(other, ("na",)))
        coders.code(conn, made, "ann", Submission(unit, ("faithful",)))  # A
        coders.code(conn, made, "ann", Submission(unit, ("unfaithful",), "the dog is a cat"))  # B
        coders.code(conn, made, "ann", Submission(unit, ("na",)))  # C
        seen = []
        for _ in range(3):
            back = coders.undo(conn, made, "ann", unit)
            label = current_label(conn, "storysumm", source, "summary", unit)
            seen.append((back.codes if back else None, label[:3]))
        count = len(_events(conn, made))
        assert coders.undo(conn, made, "ann", unit) is None
        assert len(_events(conn, made)) == count
        assert unit not in events.current(conn, made, "ann")
        assert current_value(conn, "storysumm", source, "summary", unit) is None
        assert current_value(conn, "storysumm", source, "summary", other) == "n/a"
        actions = [row[2] for row in _events(conn, made)]
    assert seen == [
        (("unfaithful",), ("unfaithful", "unfaithful", "the dog is a cat")),
        (("faithful",), ("faithful", "faithful", None)),
        (None, (None, None, None)),
    ]
    assert actions == ["code"] * 4 + ["undo"] * 3


def test_a_new_code_after_an_undo_is_undone_to_the_code_before_it(db_copy: Path):
    unit = storysumm_ids("val")[0]
    with connected(db_copy) as conn:
        made = _session(conn)
        coders.code(conn, made, "ann", Submission(unit, ("faithful",)))  # A
        coders.code(conn, made, "ann", Submission(unit, ("na",)))  # B
        coders.undo(conn, made, "ann", unit)  # back to A
        coders.code(conn, made, "ann", Submission(unit, ("unfaithful",), "no"))  # C
        assert coders.undo(conn, made, "ann", unit).codes == ("faithful",)
        assert coders.undo(conn, made, "ann", unit) is None  # back to uncoded: A was the first code
        assert unit not in events.current(conn, made, "ann")
        assert current_value(conn, "storysumm", "coding/s1/ann", "summary", unit) is None


def test_undo_of_a_unit_never_coded_does_nothing(db_copy: Path):
    unit = storysumm_ids("val")[0]
    with connected(db_copy) as conn:
        made = _session(conn)
        before = row_counts(conn)
        assert coders.undo(conn, made, "ann", unit) is None
        assert row_counts(conn) == before


# --- refusals change nothing -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("unit_index", "codes", "note", "words"),
    [
        (0, ("consistent",), None, "unknown code"),
        (0, ("unfaithful",), None, "needs an explanation"),
        (0, ("unfaithful",), "   ", "needs an explanation"),
        (None, ("faithful",), None, "not in session"),
        (0, ("faithful", "na"), None, "exactly one code"),
        (0, ("faithful", "faithful"), None, "twice"),
        (0, (), None, "exactly one code"),
    ],
    ids=["unknown", "no-explanation", "blank-explanation", "outside", "two-codes", "same-twice", "none"],
)
def test_a_refused_code_raises_and_changes_no_table(db_copy: Path, unit_index, codes, note, words):
    with connected(db_copy) as conn:
        made = _session(conn)
        unit = made.units[unit_index] if unit_index is not None else storysumm_ids("test")[0]
        coders.code(conn, made, "ann", Submission(made.units[1], ("faithful",)))
        before = row_counts(conn)
        with pytest.raises(CodingError) as caught:
            coders.code(conn, made, "ann", Submission(unit, codes, note))
        assert row_counts(conn) == before
    assert words in str(caught.value)


def test_a_refused_undo_target_and_bad_coder_change_nothing(db_copy: Path):
    with connected(db_copy) as conn:
        made = _session(conn)
        before = row_counts(conn)
        with pytest.raises(FaithLensError):
            coders.code(conn, made, "adjudicated ", Submission(made.units[0], ("faithful",)))
        with pytest.raises(FaithLensError):
            coders.code(conn, made, "", Submission(made.units[0], ("faithful",)))
        assert row_counts(conn) == before


# --- tag codebooks ---------------------------------------------------------------------------------


def test_a_tag_codebook_writes_tags_of_its_family_and_replaces_them(db_copy: Path):
    with connected(db_copy) as conn:
        made = _session(conn, "amb", level="claim", codebook="arm-ambiguity", sample=5, seed=2)
        unit, other = made.units[:2]
        source = "coding/amb/ann"
        labels_before = conn.execute("SELECT count(*) FROM label").fetchone()[0]
        coders.code(conn, made, "ann", Submission(unit, ("2",), "assumes he is alone"))
        coders.code(conn, made, "ann", Submission(other, ("5",)))
        coders.code(conn, made, "bob", Submission(unit, ("1",)))
        assert tags_of(conn, "storysumm", "claim", unit, source) == {("ambiguity_type", "2")}
        coders.code(conn, made, "ann", Submission(unit, ("4",)))
        assert tags_of(conn, "storysumm", "claim", unit, source) == {("ambiguity_type", "4")}
        coders.undo(conn, made, "ann", unit)
        assert tags_of(conn, "storysumm", "claim", unit, source) == {("ambiguity_type", "2")}
        coders.undo(conn, made, "ann", unit)
        assert tags_of(conn, "storysumm", "claim", unit, source) == set()
        assert tags_of(conn, "storysumm", "claim", other, source) == {("ambiguity_type", "5")}
        assert tags_of(conn, "storysumm", "claim", unit, "coding/amb/bob") == {("ambiguity_type", "1")}
        assert conn.execute("SELECT count(*) FROM label").fetchone()[0] == labels_before
        with pytest.raises(CodingError):
            coders.code(conn, made, "ann", Submission(unit, ("2", "3")))  # single choice


def test_a_multi_choice_tag_codebook_writes_every_chosen_tag(db_copy: Path):
    with connected(db_copy) as conn:
        made = _session(
            conn,
            "tofu",
            dataset="tofueval",
            level="sentence",
            codebook="tofueval-errors",
            selection=Selection(),
            sample=4,
        )
        unit = made.units[0]
        source = "coding/tofu/ann"
        gold = conn.execute("SELECT * FROM tag WHERE source = 'gold' ORDER BY ALL").fetchall()
        coders.code(conn, made, "ann", Submission(unit, ("Reasoning Error", "Contradiction")))
        assert events.current(conn, made, "ann")[unit].codes == ("Contradiction", "Reasoning Error")
        assert tags_of(conn, "tofueval", "sentence", unit, source) == {
            ("error_type", "Contradiction"),
            ("error_type", "Reasoning Error"),
        }
        coders.code(conn, made, "ann", Submission(unit, ("Mis-Referencing",)))
        assert tags_of(conn, "tofueval", "sentence", unit, source) == {("error_type", "Mis-Referencing")}
        coders.undo(conn, made, "ann", unit)
        assert tags_of(conn, "tofueval", "sentence", unit, source) == {
            ("error_type", "Contradiction"),
            ("error_type", "Reasoning Error"),
        }
        before = row_counts(conn)
        for codes in (("Contradiction", "Contradiction"), (), ("Made Up",)):
            with pytest.raises(CodingError):
                coders.code(conn, made, "ann", Submission(unit, codes))
        assert row_counts(conn) == before
        assert conn.execute("SELECT * FROM tag WHERE source = 'gold' ORDER BY ALL").fetchall() == gold


# --- imports: all or nothing -----------------------------------------------------------------------


def test_save_many_writes_all_or_nothing(db_copy: Path):
    with connected(db_copy) as conn:
        made = _session(conn)
        units = made.units
        good = [
            ("ann", Submission(units[0], ("faithful",))),
            ("bob", Submission(units[0], ("unfaithful",), "the ending")),
            ("ann", Submission(units[1], ("na",))),
        ]
        before = row_counts(conn)
        for bad in (
            ("bob", Submission(units[1], ("unfaithful",))),  # no explanation
            ("bob", Submission(storysumm_ids("test")[0], ("faithful",))),  # outside the session
            ("adjudicated", Submission(units[1], ("faithful",))),  # not a coder
        ):
            with pytest.raises(FaithLensError):
                events.save_many(conn, ADMIN, made, [*good, bad])
            assert row_counts(conn) == before
        ids = events.save_many(conn, ADMIN, made, good)
        rows = conn.execute(
            "SELECT event_id, coder, unit_id, action, codes, made_by FROM coding_event WHERE session_id = ? "
            "ORDER BY event_id",
            [made.session_id],
        ).fetchall()
        assert current_label(conn, "storysumm", "coding/s1/bob", "summary", units[0]) == (
            "unfaithful",
            "unfaithful",
            "the ending",
            ADMIN.id,
        )
        assert current_value(conn, "storysumm", "coding/s1/ann", "summary", units[1]) == "n/a"
    assert [row[0] for row in rows] == ids
    assert [row[1:] for row in rows] == [
        ("ann", units[0], "import", ["faithful"], ADMIN.id),
        ("bob", units[0], "import", ["unfaithful"], ADMIN.id),
        ("ann", units[1], "import", ["na"], ADMIN.id),
    ]


def test_the_codes_mode_keeps_no_detail(db_copy: Path):
    unit = storysumm_ids("val")[0]
    with connected(db_copy) as conn:
        made = _session(conn)
        coders.code(conn, made, "ann", Submission(unit, ("faithful",), detail={"ignored": True}))
        stored = conn.execute("SELECT detail FROM coding_event WHERE session_id = ?", [made.session_id]).fetchone()[0]
    assert stored is None
