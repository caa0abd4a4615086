"""Users' own data in the canonical JSON Lines format lands whole in the model, ambiguity types
included (as tags Explore's filter offers)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from faithlens import filter_options, store
from faithlens.build import ingest
from faithlens.vocab import AMBIGUITY_FAMILY

LINES = [
    {
        "document_id": "story-1",
        "document": "Ann sailed north. The storm came at dawn.",
        "summary_id": "sum-a",
        "model": "gpt-x",
        "split": "test",
        "sentences": [
            {
                "text": "Ann sailed south.",
                "label": "unfaithful",
                "explanation": "She sailed north.",
                "error_types": ["Contradiction"],
            },
            {"text": "A storm came.", "label": "faithful"},
        ],
        "claims": [
            {"text": "Ann sailed.", "label": "faithful"},
            {"text": "The storm came at night.", "label": "ambiguous"},
        ],
        "label": "unfaithful",
    },
    {"document_id": "story-1", "summary_id": "sum-b", "sentences": [{"text": "Ann went to sea."}]},
]


def test_canonical_lines_keep_every_field(db_copy: Path, tmp_path: Path) -> None:
    path = tmp_path / "my_eval.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in LINES) + "\n", encoding="utf-8")
    ingest.import_file(db_copy, path, "canonical")
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        assert conn.execute("SELECT document_id, text FROM document WHERE dataset='my_eval'").fetchall() == [
            ("story-1", LINES[0]["document"])
        ]
        assert conn.execute(
            "SELECT summary_id, model, split FROM summary WHERE dataset='my_eval' ORDER BY 1"
        ).fetchall() == [
            ("sum-a", "gpt-x", "test"),
            ("sum-b", None, None),
        ]
        units = conn.execute(
            "SELECT kind, position, text FROM unit WHERE dataset='my_eval' AND summary_id='sum-a' ORDER BY kind DESC, position"
        ).fetchall()
        assert units == [
            ("sentence", 0, "Ann sailed south."),
            ("sentence", 1, "A storm came."),
            ("claim", 0, "Ann sailed."),
            ("claim", 1, "The storm came at night."),
        ]
        labels = conn.execute(
            "SELECT level, target_id, value::VARCHAR, explanation FROM current_label WHERE dataset='my_eval' ORDER BY level, target_id"
        ).fetchall()
        assert labels == [
            ("claim", "sum-a#c0", "faithful", None),
            ("claim", "sum-a#c1", "ambiguous", None),
            ("sentence", "sum-a#s0", "unfaithful", "She sailed north."),
            ("sentence", "sum-a#s1", "faithful", None),
            ("summary", "sum-a", "unfaithful", None),
        ]
        assert conn.execute("SELECT target_id, kind, value FROM tag WHERE dataset='my_eval'").fetchall() == [
            ("sum-a#s0", "error_type", "Contradiction")
        ]
    finally:
        conn.close()


AMBIGUOUS = [
    {
        "document_id": "story-2",
        "summary_id": "sum-c",
        "sentences": [
            {"text": "Ann hesitated.", "label": "ambiguous", "ambiguity_types": ["1", "3", "1"]},
            {"text": "Bob left.", "label": "unfaithful", "error_types": ["Contradiction"]},
        ],
        "claims": [{"text": "Ann was unsure.", "ambiguity_types": ["2"]}],
    },
    {"document_id": "story-2", "summary_id": "sum-d", "sentences": [{"text": "Bob stayed.", "ambiguity_types": []}]},
]
"""Ambiguity types on a sentence (one given twice) and a claim, beside an error type."""


def _import_lines(db: Path, tmp_path: Path, lines: list[dict]) -> str:
    path = tmp_path / "ambiguous.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    ingest.import_file(db, path, "canonical")
    return path.stem


def _given_tags(lines: list[dict], field: str) -> set[tuple[str, str, str]]:
    """(level, unit id, value) of every value of `field` on a sentence or claim of `lines`."""
    return {
        (kind, f"{line['summary_id']}#{kind[0]}{position}", value)
        for line in lines
        for kind, key in (("sentence", "sentences"), ("claim", "claims"))
        for position, unit in enumerate(line.get(key, []))
        for value in unit.get(field, [])
    }


def test_ambiguity_types_become_tags_beside_error_types(db_copy: Path, tmp_path: Path) -> None:
    dataset = _import_lines(db_copy, tmp_path, AMBIGUOUS)
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        tags = conn.execute(
            "SELECT kind, level, target_id, value, source FROM tag WHERE dataset = ? ORDER BY ALL", [dataset]
        ).fetchall()
    finally:
        conn.close()
    ambiguity = [row for row in tags if row[0] == AMBIGUITY_FAMILY]
    expected = _given_tags(AMBIGUOUS, "ambiguity_types")
    assert len(ambiguity) == len(expected), "one tag per distinct type of a unit"
    assert {row[1:4] for row in ambiguity} == expected
    assert {row[1:4] for row in tags if row[0] == "error_type"} == _given_tags(AMBIGUOUS, "error_types")
    assert {row[4] for row in tags} == {"gold"}, "ambiguity types get the source error types get"


def test_imported_ambiguity_types_are_offered_in_the_tags_filter(db_copy: Path, tmp_path: Path) -> None:
    dataset = _import_lines(db_copy, tmp_path, AMBIGUOUS)
    conn = store.connect(db_copy)
    try:
        with conn.cursor() as cur:
            options = filter_options.filter_options(cur, dataset)
    finally:
        conn.close()
    assert "ambiguity_type: 1" in options.tags
    given = {value for _, _, value in _given_tags(AMBIGUOUS, "ambiguity_types")}
    assert set(options.tags) == {f"{AMBIGUITY_FAMILY}: {value}" for value in given}


def test_fables_books_carry_their_booklist_metadata(built_db: Path) -> None:
    conn = duckdb.connect(str(built_db), read_only=True)
    try:
        text, note, attributes = conn.execute(
            "SELECT text, text_note, attributes FROM document WHERE dataset='fables' AND document_id='yellowface'"
        ).fetchone()
    finally:
        conn.close()
    assert text is None and "copyrighted" in note
    assert json.loads(attributes)["author"] == "R.F. Kuang"


def test_tofueval_transcripts_attach_from_a_csv(db_copy: Path, tmp_path: Path) -> None:
    docs = tmp_path / "transcripts.csv"
    docs.write_text('doc_id,source\nNPR-5615,"HOST: The new helicopters cost $400 million each."\n', encoding="utf-8")
    ingest.import_file(db_copy, docs, "tofueval-docs")
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        rows = conn.execute(
            "SELECT document_id, text_note FROM document WHERE dataset='tofueval' AND text IS NOT NULL"
        ).fetchall()
    finally:
        conn.close()
    assert rows == [("NPR-5615", None)]


def test_every_fables_book_finds_its_booklist_row(built_db: Path) -> None:
    conn = duckdb.connect(str(built_db), read_only=True)
    try:
        missing = conn.execute(
            "SELECT document_id FROM document WHERE dataset='fables' AND attributes IS NULL"
        ).fetchall()
    finally:
        conn.close()
    assert missing == []
