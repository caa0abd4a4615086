"""A multi-choice codebook's none code ("No error" in tofueval-errors): read from the file or added,
alone on a unit, no tag written, counted by progress and agreement like any other code; and a stored
codebook from before the none code keeps its version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from faithlens.coding import agreement, codebook, events, library, report, sessions
from faithlens.coding.codebook import Codebook, parse
from faithlens.coding.events import CodingError, Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import InputError
from faithlens.llm.runs.spec import Selection
from tests import coders
from tests.coders import ADMIN
from tests.coding.support import connected, row_counts, tags_of

LAB = {
    "name": "lab-types",
    "title": "Lab types",
    "choice": "multi",
    "family": "lab_type",
    "codes": [
        {"key": "a", "name": "Type A", "definition": "The first kind."},
        {"key": "b", "name": "Type B", "definition": "The second kind."},
    ],
}


def test_tofueval_errors_has_no_error_as_its_none_code() -> None:
    book = library.builtin()["tofueval-errors"]
    assert book.none == "none" and book.keys[-1] == "none"
    assert book.code("none").name == "No error" and book.code("none").verdict is None
    assert len(book.keys) == 8, "the seven error types of TofuEval Figure 3, then No error"


def test_a_multi_choice_file_without_one_gets_none_applies_and_a_key_of_its_own_is_kept() -> None:
    added = parse(LAB, "lab.yaml")
    assert (added.none, added.keys) == ("none", ("a", "b", "none"))
    assert added.code("none").name == "None applies"
    own = parse(LAB | {"none": "b"}, "lab.yaml")
    assert (own.none, own.keys) == ("b", ("a", "b")), "a listed code named by `none` is the none code"
    with pytest.raises(InputError, match="single-choice codebook has no none code"):
        parse(LAB | {"choice": "single", "none": "a"}, "lab.yaml")
    with pytest.raises(InputError, match="reserved"):
        parse(LAB | {"none": "skip"}, "lab.yaml")


def test_the_none_code_survives_the_database_and_an_older_stored_codebook_keeps_its_version() -> None:
    book = parse(LAB, "lab.yaml")
    again = Codebook.from_json(book.to_json())
    assert again == book and again.version == book.version
    # A multi-choice codebook stored before the none code existed: its JSON has no `none` key.
    older = json.loads(book.to_json())
    older["codes"] = [code for code in older["codes"] if code["key"] != "none"]
    del older["none"]
    stored = json.dumps(older, sort_keys=True, ensure_ascii=False)
    read = Codebook.from_json(stored)
    assert read.none is None and read.keys == ("a", "b")
    assert read.to_json() == stored, "the version a session recorded is the hash of exactly this text"


def test_a_yaml_file_may_name_its_none_code(tmp_path: Path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(
        "name: lab\ntitle: Lab\nchoice: multi\nfamily: kind\nnone: nothing\ncodes:\n"
        "  - {key: x, name: X, definition: An x.}\n  - {key: y, name: Y, definition: A y.}\n",
        encoding="utf-8",
    )
    book = codebook.read_file(path)
    assert (book.none, book.keys, book.code("nothing").name) == ("nothing", ("x", "y", "nothing"), "None applies")


def _tofu(conn, name: str = "tofu", coders: tuple[str, ...] = ("ann", "bob")) -> sessions.Session:
    spec = SessionSpec(
        name, "tofueval", "sentence", "tofueval-errors", selection=Selection(), sample=4, seed=3, ordering="fixed",
        coders=coders, blind=False,
    )  # fmt: skip
    return sessions.create(conn, ADMIN, spec)


def test_none_is_alone_writes_no_tag_and_clears_the_coders_tags(db_copy: Path) -> None:
    with connected(db_copy) as conn:
        made = _tofu(conn)
        unit = made.units[0]
        source = made.source("ann")
        coders.code(conn, made, "ann", Submission(unit, ("Contradiction",)))
        assert tags_of(conn, "tofueval", "sentence", unit, source) == {("error_type", "Contradiction")}
        before = row_counts(conn)
        with pytest.raises(CodingError, match="No error excludes the other codes"):
            coders.code(conn, made, "ann", Submission(unit, ("none", "Contradiction")))
        assert row_counts(conn) == before, "a refused code writes nothing"
        coders.code(conn, made, "ann", Submission(unit, ("none",)))
        assert events.current(conn, made, "ann")[unit].codes == ("none",)
        assert tags_of(conn, "tofueval", "sentence", unit, source) == set(), "No error is no error type"
        with pytest.raises(CodingError, match="No error when none applies"):
            coders.code(conn, made, "ann", Submission(unit, ()))


def test_progress_reaches_n_of_n_and_agreement_counts_both_said_no_error(db_copy: Path) -> None:
    ann = [("none",), ("none",), ("Contradiction",), ("none",)]
    bob = [("none",), ("Reasoning Error",), ("Contradiction",), ("none",)]
    with connected(db_copy) as conn:
        made = _tofu(conn)
        for coder, codes in (("ann", ann), ("bob", bob)):
            for unit, chosen in zip(made.units, codes, strict=True):
                coders.code(conn, made, coder, Submission(unit, chosen))
        progress = {p.coder: (p.coded, p.total) for p in report.progress(conn, made)}
        found = report.session_agreement(conn, made)
    assert progress == {"ann": (4, 4), "bob": (4, 4)}
    values = {"ann": ["|".join(c) for c in ann], "bob": ["|".join(c) for c in bob]}
    assert found.overall.complete == 4
    assert found.overall.pairs[0].kappa == pytest.approx(cohen_kappa_score(values["ann"], values["bob"]))
    assert found.overall.pct_all_agree == pytest.approx(75.0), "3 of 4 units agree, two of them on No error"
    per_code = dict(found.per_code)
    said_none = {c: [int(v == "none") for v in vs] for c, vs in values.items()}
    assert per_code["none"].pairs[0].kappa == pytest.approx(cohen_kappa_score(said_none["ann"], said_none["bob"]))
    assert per_code["none"].pct_all_agree == pytest.approx(75.0)
    assert agreement.all_agree({"ann": "none", "bob": "none"})
