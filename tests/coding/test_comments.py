"""The discussion of a session's units: comments appended and read back oldest first, refused when empty
or off the session, blind for a coder in a blind session, escaped in markup, and exported with the session."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from faithlens.coding import comments, exchange, sessions
from faithlens.coding.events import CodingError
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import FaithLensError
from faithlens.views import coding
from tests import coders
from tests.coders import ADMIN
from tests.coding.support import connected, row_counts

HOSTILE = '<img src=x onerror="alert(1)"> & **bold** </div>'


def _session(conn, name: str, blind: bool) -> sessions.Session:
    spec = SessionSpec(
        name, "storysumm", "summary", "storysumm-faithfulness", sample=3, seed=2, ordering="fixed", blind=blind,
        coders=("ann", "bob"),
    )  # fmt: skip
    return sessions.create(conn, ADMIN, spec)


def _talk(conn, made: sessions.Session) -> None:
    unit = made.units[0]
    coders.comment(conn, made, unit, "I read line 3 as commentary.", "ann", "coder")
    coders.comment(conn, made, unit, "Line 3 contradicts the ending.", "bob", "coder")
    coders.comment(conn, made, unit, "Bob, which sentence of the ending?", "dee", "adjudicator")
    coders.comment(conn, made, made.units[1], "Unsure here.", "ann", "coder")


def _said(found: list[comments.Comment]) -> list[tuple[str, str]]:
    return [(c.author, c.role) for c in found]


def test_a_blind_session_shows_a_coder_only_their_own_comments(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _session(conn, "blind", blind=True)
        _talk(conn, made)
        unit = made.units[0]
        assert _said(comments.thread(conn, made, unit, coders.reader("ann"))) == [("ann", "coder")]
        assert _said(comments.thread(conn, made, unit, coders.reader("bob"))) == [("bob", "coder")]
        assert comments.thread(conn, made, unit, coders.reader("cy")) == []
        every = comments.thread(conn, made, unit, coders.reader(None))
        assert _said(every) == [("ann", "coder"), ("bob", "coder"), ("dee", "adjudicator")]
        assert [c.text for c in every][2] == "Bob, which sentence of the ending?"
        assert {u: len(t) for u, t in comments.threads(conn, made, made.units, coders.reader("ann")).items()} == {
            made.units[0]: 1,
            made.units[1]: 1,
        }


def test_an_open_session_shows_every_comment_to_every_coder(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _session(conn, "open", blind=False)
        _talk(conn, made)
        found = comments.thread(conn, made, made.units[0], coders.reader("ann"))
    assert _said(found) == [("ann", "coder"), ("bob", "coder"), ("dee", "adjudicator")]
    assert found[0].comment_id < found[1].comment_id < found[2].comment_id


def test_a_refused_comment_writes_nothing(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _session(conn, "refused", blind=True)
        other = next(
            uid for (uid,) in conn.execute("SELECT summary_id FROM summary").fetchall() if uid not in made.units
        )
        before = row_counts(conn), conn.execute("SELECT count(*) FROM coding_comment").fetchone()
        with pytest.raises(CodingError, match="empty"):
            coders.comment(conn, made, made.units[0], "   \n", "ann", "coder")
        with pytest.raises(CodingError, match="is not in session"):
            coders.comment(conn, made, other, "hello", "ann", "coder")
        with pytest.raises(CodingError, match="characters"):
            coders.comment(conn, made, made.units[0], "x" * (comments.MAX_CHARS + 1), "ann", "coder")
        with pytest.raises(FaithLensError, match="not usable"):
            coders.comment(conn, made, made.units[0], "hello", "adjudicated", "coder")
        after = row_counts(conn), conn.execute("SELECT count(*) FROM coding_comment").fetchone()
    assert after == before


def test_comment_text_and_author_are_escaped_in_markup(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _session(conn, "escaped", blind=False)
        coders.comment(conn, made, made.units[0], HOSTILE, "ann", "coder")
        markup = coding.comments_markup(comments.thread(conn, made, made.units[0], coders.reader(None)))
    assert "<img" not in markup and HOSTILE not in markup
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; **bold** &lt;/div&gt;" in markup


def test_the_export_holds_every_comment_with_its_author_role_and_time(db_copy: Path, tmp_path: Path) -> None:
    with connected(db_copy) as conn:
        made = _session(conn, "export", blind=True)
        _talk(conn, made)
        coders.comment(conn, made, made.units[0], HOSTILE, "bob", "coder")
        written = {
            fmt: exchange.export(conn, ADMIN, made, fmt, tmp_path / f"c.{fmt}", "comments") for fmt in exchange.FORMATS
        }
        parquet = conn.execute(f"SELECT * FROM read_parquet('{tmp_path / 'c.parquet'}')").fetchall()
    assert written == {"csv": 5, "jsonl": 5, "parquet": 5}
    with (tmp_path / "c.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(comments.EXPORT_COLUMNS)
    # The units in reading order, each thread oldest first; the blind session's export holds all of them.
    assert [(r["unit_id"], r["author"], r["role"]) for r in rows] == [
        (made.units[0], "ann", "coder"),
        (made.units[0], "bob", "coder"),
        (made.units[0], "dee", "adjudicator"),
        (made.units[0], "bob", "coder"),
        (made.units[1], "ann", "coder"),
    ]
    assert rows[3]["text"] == HOSTILE and all(r["session"] == "export" and r["created_at"] for r in rows)
    lines = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == [{**r, "comment_id": int(r["comment_id"])} for r in rows]
    assert [row[3] for row in parquet] == [int(r["comment_id"]) for r in rows]
