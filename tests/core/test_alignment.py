"""Sentence-to-passage alignment: a copied sentence finds its own passage, a paraphrase still
finds its support, and ingest/import store the alignments for every document that has text."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import duckdb
import pytest

from faithlens import access, store
from faithlens.build import alignment, ingest
from faithlens.build.rankers import DEFAULT, registry
from faithlens.store import migrations
from tests.raw import storysumm_records

# The StorySumm story of summary 1e21553b..., with summary sentences written by the generators and
# the words of the story passage that supports each (checked by reading the story).
DANIEL_SUMMARY = "1e21553b47944b67bc2cdf67860d8e15"
PARAPHRASES = [
    ("He hears a beautiful song coming from just beyond what he can see and goes to investigate.", "A song calling"),
    (
        "He finds a mermaid sitting on a rock, but the sky suddenly goes black and time stands still.",
        "the sky went black",
    ),
    ("He panics and crashes the boat, knocking himself unconscious.", "knocking Daniel unconscious"),
    ("He wakes up again on the beach and the seal is there, singing the same song.", "again he was on the beach"),
    ("Daniel smiles and brings them back to the beach.", "Daniel smiled wide"),
    ("A seal, not a mermaid, was singing; up close it turned out large and gray.", "decidedly gray"),
]


def _story(summary_id: str) -> str:
    return storysumm_records()[summary_id]["story"]


# Copied sentences each ranker may miss (best passage elsewhere), and paraphrases whose support it may
# rank second or third rather than first: the embedding model alone is allowed one of each more, as a
# near-copy elsewhere in the story can sit as close in meaning as the sentence's own passage.
ALLOWED_MISSES = {
    "token_set_ratio": (0, 1),
    "bm25": (0, 1),
    "semantic": (1, 2),
    "hybrid": (0, 1),
    "hybrid_lexical": (0, 1),
}


@pytest.mark.parametrize("ranker", list(ALLOWED_MISSES))
def test_a_sentence_copied_from_the_story_aligns_to_its_own_passage(ranker: str) -> None:
    story = _story(DANIEL_SUMMARY)
    copied = [s for s in re.split(r"(?<=[.!?])\s+", story) if len(s.split()) >= 8]
    assert len(copied) > 20
    results = alignment.align(copied, story, ranker=ranker)
    misses = []
    for sentence, matches in zip(copied, results, strict=True):
        best = matches[0]
        start = story.index(sentence)
        end = start + len(sentence)
        # Our splitter may cut where this naive split did not (after a closing quote), so the best
        # passage must overlap the copied sentence.
        if not (best.start < end and start < best.end):
            misses.append((sentence, story[best.start : best.end]))
        elif ranker == "token_set_ratio":
            assert best.score >= 90, "and the lexical ranker scores it as a near-perfect match"
    assert len(misses) <= ALLOWED_MISSES[ranker][0], misses


@pytest.mark.parametrize("ranker", list(ALLOWED_MISSES))
def test_a_paraphrase_still_finds_its_supporting_passage(ranker: str) -> None:
    story = _story(DANIEL_SUMMARY)
    results = alignment.align([sentence for sentence, _ in PARAPHRASES], story, top_k=3, ranker=ranker)
    firsts = 0
    for (sentence, support), matches in zip(PARAPHRASES, results, strict=True):
        found = [m.rank for m in matches if support in story[m.start : m.end]]
        assert found, f"{sentence!r}: none of the top 3 passages holds {support!r}"
        firsts += found[0] == 1
    assert firsts >= len(PARAPHRASES) - ALLOWED_MISSES[ranker][1]


def test_passages_are_ordered_disjoint_and_cover_every_sentence() -> None:
    story = _story(DANIEL_SUMMARY)
    spans = alignment.passages(story)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    covered = "".join(story[start:end] for start, end in spans)
    assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", story)
    short = "Yes. No. He ran to the marina to find a boat he could borrow."
    assert [short[s:e] for s, e in alignment.passages(short)] == [short]


def test_run_on_text_is_cut_into_windows() -> None:
    text = " ".join(f"word{i}" for i in range(alignment.MAX_PASSAGE_TOKENS * 2 + 5))
    spans = alignment.passages(text)
    assert len(spans) == 3
    assert all(len(text[s:e].split()) <= alignment.MAX_PASSAGE_TOKENS for s, e in spans)


def test_ingest_stores_top_passages_for_every_storysumm_sentence_and_claim_by_the_default_ranker(
    built_db: Path,
) -> None:
    records = storysumm_records()
    expected_units = sum(len(r["summary"]) + len(r["claims"]) for r in records.values())
    stories = {r["story-id"] for r in records.values()}
    conn = duckdb.connect(str(built_db), read_only=True)
    try:
        rows = conn.execute(
            """
            SELECT a.unit_id, list(a.rank ORDER BY a.rank), list(a.score ORDER BY a.rank),
                   bool_and(a.start_char >= 0 AND a.end_char <= length(d.text) AND a.start_char < a.end_char)
            FROM alignment a
            JOIN unit u ON u.dataset = a.dataset AND u.unit_id = a.unit_id
            JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
            JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
            WHERE a.dataset = 'storysumm' GROUP BY a.unit_id
            """
        ).fetchall()
        other = conn.execute("SELECT count(*) FROM alignment WHERE dataset <> 'storysumm'").fetchone()[0]
        rankers = conn.execute("SELECT DISTINCT ranker FROM alignment").fetchall()
        recorded = conn.execute(
            "SELECT dataset, ranker, version, count(*) FROM alignment_ranker GROUP BY ALL"
        ).fetchall()
    finally:
        conn.close()
    assert rankers == [(DEFAULT,)] and DEFAULT == "bm25"
    assert recorded == [("storysumm", "bm25", registry()["bm25"].version, len(stories))]
    assert len(rows) == expected_units
    for _, ranks, scores, inside in rows:
        assert ranks == list(range(1, alignment.TOP_K + 1))
        assert scores == sorted(scores, reverse=True)
        assert inside
    assert other == 0, "FABLES and TofuEval ship no source text, so nothing can be aligned"


def test_attaching_tofueval_transcripts_aligns_their_summaries(db_copy: Path, tmp_path: Path) -> None:
    with (Path(__file__).parents[2] / "data/tofueval/factual_consistency/mediasum_factual_eval_dev.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        rows = list(csv.DictReader(handle))
    doc_id = rows[0]["doc_id"]
    sentences = [row["summ_sent"] for row in rows if row["doc_id"] == doc_id]
    transcript = "HOST: Welcome back to the program.\n" + "\n".join(f"GUEST: {s}" for s in sentences)
    docs = tmp_path / "transcripts.csv"
    with docs.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["doc_id", "source"])
        writer.writerow([doc_id, transcript])
    ingest.import_file(db_copy, docs, "tofueval-docs")
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        aligned = conn.execute(
            """
            SELECT u.text, d.text[a.start_char + 1 : a.end_char]
            FROM alignment a JOIN unit u ON u.dataset = a.dataset AND u.unit_id = a.unit_id
            JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
            JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
            WHERE a.dataset = 'tofueval' AND a.rank = 1
            """
        ).fetchall()
        documents = conn.execute(
            """
            SELECT DISTINCT s.document_id FROM alignment a
            JOIN unit u ON u.dataset = a.dataset AND u.unit_id = a.unit_id
            JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id WHERE a.dataset = 'tofueval'
            """
        ).fetchall()
    finally:
        conn.close()
    assert documents == [(doc_id,)]
    assert len(aligned) == len(sentences)
    assert all(sentence in passage for sentence, passage in aligned)


@pytest.mark.parametrize("with_text", [True, False])
def test_canonical_import_aligns_only_documents_with_text(db_copy: Path, tmp_path: Path, with_text: bool) -> None:
    line = {
        "document_id": "d1",
        "summary_id": "s1",
        "sentences": [{"text": "The storm came at dawn."}, {"text": "Ann sailed north with her brother."}],
    }
    if with_text:
        line["document"] = "Ann sailed north with her brother. Nobody expected it. The storm came at dawn."
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ingest.import_file(db_copy, path, "canonical")
    conn = duckdb.connect(str(db_copy), read_only=True)
    try:
        best = conn.execute(
            "SELECT a.unit_id, a.start_char, a.end_char FROM alignment a WHERE dataset = 'mine' AND rank = 1 ORDER BY 1"
        ).fetchall()
    finally:
        conn.close()
    if with_text:
        # "Nobody expected it." is too short to stand alone, so it is merged with the next sentence.
        assert best == [("s1#s0", 35, 78), ("s1#s1", 0, 34)]
    else:
        assert best == []


def test_computing_an_alignment_on_demand_is_refused_on_a_demo_server_and_stores_it_for_a_viewer(db_copy: Path):
    conn = store.connect(db_copy)
    try:
        document = conn.execute("SELECT min(document_id) FROM document WHERE dataset = 'storysumm'").fetchone()[0]
        units_of = (
            "SELECT u.unit_id FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id "
            "WHERE u.dataset = 'storysumm' AND s.document_id = ?"
        )
        count = f"SELECT count(*) FROM alignment WHERE dataset = 'storysumm' AND unit_id IN ({units_of})"
        stored = conn.execute(count, [document]).fetchone()[0]
        conn.execute(f"DELETE FROM alignment WHERE dataset = 'storysumm' AND unit_id IN ({units_of})", [document])
        with pytest.raises(access.PermissionDenied, match="nothing is written or paid for on a demo server"):
            alignment.align_and_store(conn, access.demo_actor(), "storysumm", [document])
        refused = conn.execute(count, [document]).fetchone()[0]
        viewer = access.Actor(access.Person("vic", "Vic"), "viewer")
        written = alignment.align_and_store(conn, viewer, "storysumm", [document])
        after = conn.execute(count, [document]).fetchone()[0]
    finally:
        conn.close()
    assert stored > 0 and refused == 0
    assert written == after == stored, "the viewer's on-demand alignment is what ingest stored"


def test_the_alignments_ingest_computes_while_it_writes_are_those_the_database_gives(db_copy: Path):
    rows = "SELECT unit_id, rank, start_char, end_char, score FROM alignment WHERE dataset = 'storysumm' ORDER BY ALL"
    conn = store.connect(db_copy)
    try:
        from_ingest = conn.execute(rows).fetchall()
        with store.write(conn, "realign", local=True) as cur:
            alignment.align_documents(cur, "storysumm")
        from_the_database = conn.execute(rows).fetchall()
    finally:
        conn.close()
    assert from_ingest and from_ingest == from_the_database


def _document_units(conn: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    document = conn.execute("SELECT min(document_id) FROM document WHERE dataset = 'storysumm'").fetchone()[0]
    units_of = (
        "SELECT u.unit_id FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id "
        "WHERE u.dataset = 'storysumm' AND s.document_id = ?"
    )
    return document, units_of


def test_an_alignment_by_another_ranker_is_stored_beside_the_default_with_its_version(db_copy: Path):
    rows = "SELECT unit_id, rank, start_char, end_char, score FROM alignment WHERE ranker = ? ORDER BY ALL"
    conn = store.connect(db_copy)
    try:
        document, units_of = _document_units(conn)
        default_before = conn.execute(rows, [DEFAULT]).fetchall()
        viewer = access.Actor(access.Person("vic", "Vic"), "viewer")
        written = alignment.align_and_store(conn, viewer, "storysumm", [document], "token_set_ratio")
        lexical = conn.execute(rows, ["token_set_ratio"]).fetchall()
        units = {unit for (unit,) in conn.execute(units_of, [document]).fetchall()}
        recorded = conn.execute(
            "SELECT document_id, version FROM alignment_ranker WHERE ranker = 'token_set_ratio'"
        ).fetchall()
        default_after = conn.execute(rows, [DEFAULT]).fetchall()
    finally:
        conn.close()
    assert written == len(lexical) == len(units) * alignment.TOP_K
    assert {row[0] for row in lexical} == units, "every sentence and claim of that document, and no other"
    assert all(0 <= row[4] <= 100 for row in lexical), "token_set_ratio's own 0..100 score"
    assert recorded == [(document, registry()["token_set_ratio"].version)]
    assert default_after == default_before, "the default ranker's rows are left as they were"


def test_a_database_aligned_before_rankers_were_recorded_keeps_its_alignments_under_token_set_ratio(db_copy: Path):
    """An older file's `alignment` table had no ranker column: opening it moves the rows over, in one go."""
    conn = duckdb.connect(str(db_copy))
    old_rows = conn.execute(
        "SELECT dataset, unit_id, rank, start_char, end_char, score FROM alignment ORDER BY ALL"
    ).fetchall()
    documents = conn.execute("SELECT count(DISTINCT document_id) FROM alignment_ranker").fetchone()[0]
    conn.execute("DROP TABLE alignment")
    conn.execute("DROP TABLE alignment_ranker")
    conn.execute(
        "CREATE TABLE alignment (dataset VARCHAR NOT NULL, unit_id VARCHAR NOT NULL, rank INTEGER NOT NULL, "
        "start_char INTEGER NOT NULL, end_char INTEGER NOT NULL, score DOUBLE NOT NULL, "
        "PRIMARY KEY (dataset, unit_id, rank))"
    )
    conn.executemany("INSERT INTO alignment VALUES (?, ?, ?, ?, ?, ?)", old_rows)
    conn.execute("DELETE FROM meta WHERE key = ?", [store.connection.SCHEMA_DIGEST_KEY])
    conn.close()
    conn = store.connect(db_copy)
    try:
        moved = conn.execute(
            "SELECT dataset, unit_id, rank, start_char, end_char, score FROM alignment "
            "WHERE ranker = 'token_set_ratio' ORDER BY ALL"
        ).fetchall()
        recorded = conn.execute("SELECT ranker, version, count(*) FROM alignment_ranker GROUP BY ALL").fetchall()
    finally:
        conn.close()
    assert moved == old_rows
    assert recorded == [("token_set_ratio", migrations.UNRECORDED, documents)]
