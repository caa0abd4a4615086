"""Issue 28 in the coding core: every coding write takes the acting person and is refused before anything
is written when they may not (the rows of every coding table are counted before and after), and a coder
of a blind session that is still open never reads another coder's codes, the gold label or the comments
that would give them away, through any of the reads the pages make; once an admin closes it, they do."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithlens.access import PermissionDenied
from faithlens.coding import closing, comments, events, exchange, library, report, sessions, visible
from faithlens.coding.checks import CodingError
from faithlens.coding.codebook import parse
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.views import coding_unit
from tests import coders
from tests.coders import ADMIN
from tests.coding.support import COUNTED, connected
from tests.coding.test_exchange import LAB_ERRORS

TABLES = (*COUNTED, "coding_comment", "coding_close")
F, U = "faithful", "unfaithful"


def counts(conn) -> dict[str, int]:
    return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}


def _blind(conn, name: str = "blind", blind: bool = True) -> sessions.Session:
    spec = SessionSpec(name, "storysumm", "summary", "storysumm-faithfulness", sample=4, seed=3, blind=blind)
    made = sessions.create(conn, ADMIN, spec)
    coders.code(conn, made, "alice", Submission(made.units[0], (F,)))
    coders.code(conn, made, "alice", Submission(made.units[1], (U,), "alice's secret reason"))
    coders.comment(conn, made, made.units[1], "alice says the ending is wrong", "alice", "coder")
    coders.joined(conn, made, "bob")
    return sessions.get(conn, name)


def _refused(conn, call, match: str) -> None:
    before = counts(conn)
    with pytest.raises(PermissionDenied, match=match):
        call()
    assert counts(conn) == before, "a refused action writes nothing"


def test_refused_writes_write_nothing(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _blind(conn)
        unit = made.units[1]
        bob, viewer = coders.person("bob"), coders.person("vic", "viewer")
        outsider = coders.person("olga")
        _refused(conn, lambda: events.save(conn, viewer, made, Submission(unit, (F,))), "a viewer does not code")
        _refused(conn, lambda: sessions.join(conn, viewer, made), "a viewer does not code")
        _refused(conn, lambda: events.save(conn, outsider, made, Submission(unit, (F,))), "not joined this session")
        _refused(conn, lambda: events.undo(conn, bob, made, unit, coder="alice"), "the code is someone else's")
        _refused(conn, lambda: report.adjudicate(conn, bob, made, unit, (F,), None), "only adjudicators and admins")
        _refused(conn, lambda: comments.add(conn, bob, made, unit, "as the judge", "adjudicator"), "only adjudicators")
        _refused(conn, lambda: comments.add(conn, viewer, made, unit, "hello", "coder"), "a viewer does not code")
        spec = SessionSpec("mine", "storysumm", "summary", "storysumm-faithfulness", sample=2)
        _refused(conn, lambda: sessions.create(conn, bob, spec), "only admins create or change sessions")
        _refused(conn, lambda: closing.close(conn, bob, made), "only admins close sessions")
        book = parse(LAB_ERRORS, "test")
        _refused(conn, lambda: library.save(conn, coders.person("bob", "adjudicator"), book), "only admins change")
        codes = [("alice", Submission(unit, (F,)))]
        _refused(conn, lambda: events.save_many(conn, bob, made, codes), "only admins create or change sessions")
        assert events.latest(conn, made, "alice", unit).codes == (U,), "alice's code is as she left it"


def test_a_code_is_always_the_actors_own(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _blind(conn)
        bob = coders.person("bob")
        events.save(conn, bob, made, Submission(made.units[1], (F,)))
        rows = conn.execute(
            "SELECT coder, made_by FROM coding_event WHERE session_id = ? AND unit_id = ? ORDER BY event_id",
            [made.session_id, made.units[1]],
        ).fetchall()
        assert rows == [("alice", "alice"), ("bob", "bob")]
        assert events.undo(conn, bob, made, made.units[1]) is None, "bob's undo takes back bob's code"
        assert events.latest(conn, made, "alice", made.units[1]).codes == (U,)


def test_a_coder_of_an_open_blind_session_reads_only_their_own_work(db_copy: Path, tmp_path: Path) -> None:
    with connected(db_copy) as conn:
        made = _blind(conn)
        bob = coders.person("bob")
        unit = made.units[1]
        assert visible.latest(conn, bob, made, "bob", unit) is None, "bob's own (empty) work is his to read"
        reads = {
            "alice's code": lambda: visible.latest(conn, bob, made, "alice", unit),
            "alice's units": lambda: visible.coded_units(conn, bob, made, "alice"),
            "every code": lambda: visible.everyone(conn, bob, made),
            "the gold label": lambda: coding_unit.gold_labels(conn.cursor(), bob, made, unit),
            "the export": lambda: exchange.export(conn, bob, made, "csv", tmp_path / "codes.csv"),
        }
        for what, read in reads.items():
            with pytest.raises(PermissionDenied, match="blind until an admin closes it"):
                read()
            assert not (tmp_path / "codes.csv").exists(), what
        for read in (visible.agreement, visible.by_unit, visible.sentence_codes, visible.disagreements):
            with pytest.raises(PermissionDenied, match="agreement is shown to adjudicators and admins"):
                read(conn, bob, made)
        assert comments.threads(conn, made, made.units, bob) == {}, "alice's comment stays hers"
        judge = coders.person("jo", "adjudicator")
        assert visible.everyone(conn, judge, made)[("alice", unit)].note == "alice's secret reason"
        assert [c.author for c in comments.thread(conn, made, unit, judge)] == ["alice"]
        assert visible.agreement(conn, judge, made).overall.coders == ("alice",)


def test_once_an_admin_closes_the_session_coders_see_everything_and_nothing_changes(
    db_copy: Path, tmp_path: Path
) -> None:
    with connected(db_copy) as conn:
        made = _blind(conn)
        coders.code(conn, made, "bob", Submission(made.units[1], (F,)))
        closed = closing.close(conn, ADMIN, made)
        assert (closed.closed, closed.closed_by) == (True, ADMIN.id)
        assert closing.close(conn, ADMIN, closed) == closed, "closing twice changes nothing"
        bob, unit = coders.person("bob"), made.units[1]
        assert visible.latest(conn, bob, closed, "alice", unit).note == "alice's secret reason"
        assert [d.unit for d in visible.disagreements(conn, bob, closed)] == [unit]
        assert exchange.export(conn, bob, closed, "csv", tmp_path / "codes.csv") == 3
        assert [c.author for c in comments.thread(conn, closed, unit, bob)] == ["alice"]
        for write in (
            lambda: events.save(conn, bob, closed, Submission(made.units[2], (F,))),
            lambda: events.undo(conn, bob, closed, unit),
            lambda: report.adjudicate(conn, ADMIN, closed, unit, (F,), None),
            lambda: sessions.join(conn, coders.person("cy"), closed),
            lambda: comments.add(conn, bob, closed, unit, "late", "coder"),
        ):
            _refused(conn, write, "the session is closed")
        before = counts(conn)
        with pytest.raises(CodingError, match="is closed"):
            events.save_many(conn, ADMIN, closed, [("cy", Submission(unit, (F,)))])
        assert counts(conn) == before


def test_an_adjudication_and_a_session_record_who_made_them(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _blind(conn, "open one", blind=False)
        coders.code(conn, made, "bob", Submission(made.units[1], (F,)))
        report.adjudicate(conn, coders.person("jo", "adjudicator"), made, made.units[1], (F,), None)
        decided = conn.execute(
            "SELECT coder, made_by, action FROM coding_event WHERE session_id = ? ORDER BY event_id DESC LIMIT 1",
            [made.session_id],
        ).fetchone()
        maker = conn.execute("SELECT made_by FROM coding_session WHERE name = 'open one'").fetchone()
    assert decided == (sessions.ADJUDICATED, "jo", "adjudicate")
    assert maker == (ADMIN.id,)
