"""Codebooks as a lab meets them: the built-in files load under their own names with stable versions,
a faulty file is one InputError line naming the file and where, JSON works like YAML, and a lab's
edits make new versions while a session keeps reading the version it was made with."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from faithlens.coding import codebook, events, library, sessions
from faithlens.coding.codebook import Codebook
from faithlens.errors import InputError, NotFoundError
from faithlens.vocab import VERDICTS
from tests import coders
from tests.coders import ADMIN
from tests.coding.support import connected, current_label, storysumm_ids

BUILTIN_DIR = Path(codebook.__file__).resolve().parent / "codebooks"
BUILTIN_FILES = sorted(BUILTIN_DIR.glob("*.yaml"))


def _valid_yaml() -> str:
    return """\
name: lab-yesno
title: Lab yes/no
choice: single
codes:
  - key: ok
    name: Consistent
    verdict: faithful
    definition: Everything the line says is in the story.
  - key: bad
    name: Inconsistent
    verdict: unfaithful
    definition: The line says something the story does not.
    explanation: required
"""


def _valid_body() -> dict:
    return yaml.safe_load(_valid_yaml())


def _one_line_error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        codebook.read_file(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    assert caught.value.file == str(path)
    return caught.value


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- built-in codebooks ------------------------------------------------------------------------------


def test_there_are_built_in_codebook_files():
    names = {path.stem for path in BUILTIN_FILES}
    assert {"storysumm-faithfulness", "arm-status", "arm-ambiguity", "arm-preference", "tofueval-errors"} <= names


@pytest.mark.parametrize("path", BUILTIN_FILES, ids=lambda p: p.stem)
def test_every_built_in_file_loads_under_its_own_name(path: Path):
    book = codebook.read_file(path)
    assert book.name == path.stem
    assert library.builtin()[path.stem] == book
    body = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert book.keys == tuple(str(code["key"]) for code in body["codes"])
    if body.get("family") is None:
        assert all(code.verdict in VERDICTS for code in book.codes)
    else:
        assert all(code.verdict is None for code in book.codes)


def test_library_lists_exactly_the_built_in_files():
    assert sorted(library.builtin()) == [path.stem for path in BUILTIN_FILES]


@pytest.mark.parametrize("path", BUILTIN_FILES, ids=lambda p: p.stem)
def test_built_in_versions_are_stable_across_loads_and_storage(path: Path):
    first, second = codebook.read_file(path), codebook.read_file(path)
    assert first.version == second.version
    assert len(first.version) == 12
    assert first.label == f"{first.name}@{first.version}"
    assert Codebook.from_json(first.to_json()).version == first.version
    assert library.builtin()[first.name].version == first.version


def test_a_changed_definition_changes_the_version(tmp_path: Path):
    path = BUILTIN_DIR / "storysumm-faithfulness.yaml"
    original = codebook.read_file(path)
    text = path.read_text(encoding="utf-8")
    edited = _write(tmp_path, "storysumm-faithfulness.yaml", text.replace("select N/A.", "select N/A, please."))
    assert text != edited.read_text(encoding="utf-8")
    changed = codebook.read_file(edited)
    assert changed.keys == original.keys
    assert changed.version != original.version
    assert codebook.read_file(edited).version == changed.version


def test_storysumm_unfaithful_requires_an_explanation():
    book = library.builtin()["storysumm-faithfulness"]
    assert book.code("unfaithful").explanation == "required"
    assert book.code("faithful").explanation == "optional"


# --- faulty files: one InputError line naming the file and the position -----------------------------


def test_a_repeated_key_is_refused_with_its_line(tmp_path: Path):
    text = _valid_yaml().replace("title: Lab yes/no\n", "title: Lab yes/no\ntitle: Again\n")
    error = _one_line_error(_write(tmp_path, "twice.yaml", text))
    assert error.position == "line 3"
    assert "'title'" in error.expected and "twice" in error.expected and "line 2" in error.expected


def test_a_repeated_key_inside_a_code_is_refused_with_its_line(tmp_path: Path):
    text = _valid_yaml().replace("    name: Consistent\n", "    name: Consistent\n    name: Again\n")
    error = _one_line_error(_write(tmp_path, "twice.yaml", text))
    assert error.position == "line 7"
    assert "'name'" in error.expected


def test_an_unknown_codebook_field_suggests_the_closest(tmp_path: Path):
    text = _valid_yaml().replace("title:", "titel:")
    error = _one_line_error(_write(tmp_path, "typo.yaml", text))
    assert "'titel'" in error.expected and "did you mean 'title'?" in error.expected


def test_an_unknown_code_field_names_the_code_and_suggests_the_closest(tmp_path: Path):
    text = _valid_yaml().replace("    definition: The line says", "    defintion: The line says")
    error = _one_line_error(_write(tmp_path, "typo.yaml", text))
    assert error.position == "codes[1]"
    assert "'defintion'" in error.expected and "did you mean 'definition'?" in error.expected


def test_a_verdict_outside_the_vocabulary_is_refused(tmp_path: Path):
    text = _valid_yaml().replace("verdict: unfaithful", "verdict: wrongish")
    error = _one_line_error(_write(tmp_path, "verdict.yaml", text))
    assert error.position == "codes[1]"
    assert "'wrongish'" in error.expected and "unfaithful" in error.expected


def test_a_code_without_a_verdict_in_a_verdict_codebook_is_refused(tmp_path: Path):
    text = _valid_yaml().replace("    verdict: unfaithful\n", "")
    error = _one_line_error(_write(tmp_path, "noverdict.yaml", text))
    assert error.position == "codes"
    assert "'bad'" in error.expected and "no verdict" in error.expected


def test_a_multi_choice_verdict_codebook_is_refused(tmp_path: Path):
    text = _valid_yaml().replace("choice: single", "choice: multi")
    error = _one_line_error(_write(tmp_path, "multi.yaml", text))
    assert error.position == "choice"
    assert "family" in error.expected


def test_two_codes_with_the_same_key_are_refused(tmp_path: Path):
    text = _valid_yaml().replace("key: bad", "key: ok")
    error = _one_line_error(_write(tmp_path, "samekey.yaml", text))
    assert error.position == "codes"
    assert "'ok'" in error.expected and "twice" in error.expected


def test_invalid_yaml_is_one_line_with_its_position(tmp_path: Path):
    error = _one_line_error(_write(tmp_path, "broken.yaml", "name: x\ncodes: [\n"))
    assert error.position.startswith("line ")


def test_unquoted_yes_and_no_keys_are_read_as_the_text_written(tmp_path: Path):
    text = _valid_yaml().replace("key: ok", "key: yes").replace("key: bad", "key: no")
    assert codebook.read_file(_write(tmp_path, "yesno.yaml", text)).keys == ("yes", "no")


# --- JSON codebooks --------------------------------------------------------------------------------


def test_a_json_codebook_loads_like_its_yaml(tmp_path: Path):
    from_yaml = codebook.read_file(_write(tmp_path, "lab.yaml", _valid_yaml()))
    from_json = codebook.read_file(_write(tmp_path, "lab.json", json.dumps(_valid_body(), indent=2)))
    assert from_json == from_yaml
    assert from_json.version == from_yaml.version
    assert from_json.keys == ("ok", "bad")


def test_a_json_repeated_key_is_refused_with_its_position(tmp_path: Path):
    text = json.dumps(_valid_body(), indent=2).replace('"title": "Lab yes/no",', '"title": "A", "title": "B",')
    error = _one_line_error(_write(tmp_path, "twice.json", text))
    assert error.position.startswith("line ")
    assert "'title'" in error.expected and "twice" in error.expected


@pytest.mark.parametrize(
    ("change", "position", "words"),
    [
        (lambda b: b.update(titel=b.pop("title")), "", "did you mean 'title'?"),
        (lambda b: b["codes"][1].update(verdict="wrongish"), "codes[1]", "'wrongish'"),
        (lambda b: b["codes"][1].pop("verdict"), "codes", "no verdict"),
        (lambda b: b.update(choice="multi"), "choice", "family"),
        (lambda b: b["codes"][1].update(key="ok"), "codes", "twice"),
    ],
    ids=["unknown-field", "verdict", "no-verdict", "multi-choice", "same-key"],
)
def test_a_json_codebook_is_checked_like_a_yaml_one(tmp_path: Path, change, position: str, words: str):
    body = _valid_body()
    change(body)
    error = _one_line_error(_write(tmp_path, "lab.json", json.dumps(body)))
    assert error.position == position
    assert words in error.expected


# --- the lab's own codebooks -----------------------------------------------------------------------


def test_saving_under_a_built_in_name_is_refused(db_copy: Path):
    book = dataclasses.replace(library.builtin()["storysumm-faithfulness"], title="My edited copy")
    with connected(db_copy) as conn:
        before = conn.execute("SELECT count(*) FROM codebook").fetchone()[0]
        with pytest.raises(InputError) as caught:
            library.save(conn, ADMIN, book)
        assert conn.execute("SELECT count(*) FROM codebook").fetchone()[0] == before
    assert "built-in" in str(caught.value)


def test_an_edit_saves_a_new_version_and_the_newest_is_current(db_copy: Path, tmp_path: Path):
    first = codebook.read_file(_write(tmp_path, "lab.yaml", _valid_yaml()))
    edited = _valid_yaml().replace("Everything the line says", "All the line says")
    second = codebook.read_file(_write(tmp_path, "lab2.yaml", edited))
    assert second.version != first.version
    with connected(db_copy) as conn:
        library.save(conn, ADMIN, first)
        library.save(conn, ADMIN, first)  # saving it unchanged adds no version
        assert conn.execute("SELECT count(*) FROM codebook WHERE name = 'lab-yesno'").fetchone()[0] == 1
        library.save(conn, ADMIN, second)
        stored = conn.execute(
            "SELECT version, origin FROM codebook WHERE name = 'lab-yesno' ORDER BY version"
        ).fetchall()
        cur = conn.cursor()
        assert sorted(stored) == sorted([(first.version, "custom"), (second.version, "custom")])
        assert library.get(cur, "lab-yesno") == second
        assert library.get(cur, "lab-yesno", first.version) == first
        assert library.available(cur)["lab-yesno"] == second
        library.save(conn, ADMIN, first)  # reverting the edit makes the first version current again
        assert library.get(conn.cursor(), "lab-yesno") == first
        assert conn.execute("SELECT count(*) FROM codebook WHERE name = 'lab-yesno'").fetchone()[0] == 2


def test_a_session_keeps_the_version_it_was_made_with_after_an_edit(db_copy: Path, tmp_path: Path):
    first = codebook.read_file(_write(tmp_path, "lab.yaml", _valid_yaml()))
    # The edit renames the code 'bad' to 'wrong': a session made before it still takes 'bad'.
    second = codebook.read_file(_write(tmp_path, "lab2.yaml", _valid_yaml().replace("key: bad", "key: wrong")))
    unit = storysumm_ids("val")[0]
    with connected(db_copy) as conn:
        library.save(conn, ADMIN, first)
        session = sessions.create(
            conn,
            ADMIN,
            sessions.SessionSpec(name="lab", dataset="storysumm", level="summary", codebook="lab-yesno", blind=False),
        )
        library.save(conn, ADMIN, second)
        session = sessions.get(conn, "lab")
        assert session.codebook_version == first.version
        assert library.get(conn.cursor(), "lab-yesno", session.codebook_version) == first
        assert library.get(conn.cursor(), "lab-yesno").keys == ("ok", "wrong")
        coders.code(conn, session, "ann", events.Submission(unit, ("bad",), "the ending differs"))
        with pytest.raises(events.CodingError):
            coders.code(conn, session, "ann", events.Submission(unit, ("wrong",), "the ending differs"))
        assert current_label(conn, "storysumm", "coding/lab/ann", "summary", unit) == (
            "unfaithful",
            "bad",
            "the ending differs",
            "ann",
        )
        recorded = conn.execute(
            "SELECT codebook FROM label_source WHERE dataset = 'storysumm' AND source = 'coding/lab/ann'"
        ).fetchone()[0]
        assert recorded == first.label


def test_a_stored_version_is_found_even_when_missing_from_the_files(db_copy: Path):
    with connected(db_copy) as conn:
        with pytest.raises(NotFoundError):
            library.get(conn.cursor(), "storysumm-faithfulness", "000000000000")
        with pytest.raises(NotFoundError):
            library.get(conn.cursor(), "no-such-codebook")
