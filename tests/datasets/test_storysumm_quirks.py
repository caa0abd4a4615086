"""The published StorySumm defects are mended, recorded, and nothing is misaligned or dropped."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests import raw

REPAIRED_LINE = 1455


@pytest.fixture(scope="module")
def cur(built_db: Path):
    conn = duckdb.connect(str(built_db), read_only=True)
    yield conn
    conn.close()


def _summary_at_line(line: int) -> str:
    """The id of the record whose text spans `line` of the raw file."""
    text = (raw.DATA / "storysumm" / "storysumm.json").read_text(encoding="utf-8")
    offset = sum(len(part) + 1 for part in text.split("\n")[: line - 1])
    opening = text.rfind('\n    "', 0, offset)
    return text[opening + 6 : text.index('"', opening + 6)]


def test_repaired_record_is_present_with_every_sentence_in_order(cur) -> None:
    summary_id = _summary_at_line(REPAIRED_LINE)
    expected = raw.storysumm_records()[summary_id]["summary"]
    rows = cur.execute(
        "SELECT text FROM unit WHERE dataset = 'storysumm' AND summary_id = ? AND kind = 'sentence' ORDER BY position",
        [summary_id],
    ).fetchall()
    assert [r[0] for r in rows] == expected
    assert all("\n" not in sentence for sentence in expected)
    labels = cur.execute(
        "SELECT count(*) FROM current_label WHERE dataset = 'storysumm' AND source = 'gold' AND level = 'sentence' AND target_id LIKE ?",
        [summary_id + "#s%"],
    ).fetchone()[0]
    assert labels == len(expected)


def test_repair_is_recorded_in_the_ingest_log(cur) -> None:
    rows = cur.execute(
        "SELECT position, message FROM ingest_log WHERE dataset = 'storysumm' AND kind = 'repair'"
    ).fetchall()
    assert any(position == f"line {REPAIRED_LINE}" and "stray" in message for position, message in rows)


def test_summary_level_error_keeps_its_explanation_on_the_summary(cur) -> None:
    records = raw.storysumm_records()
    (summary_id,) = [k for k, r in records.items() if r["label"] == 0 and 0 not in r["errors"]]
    value, explanation = cur.execute(
        "SELECT value, explanation FROM current_label WHERE dataset='storysumm' AND source='gold' AND level='summary' AND target_id=?",
        [summary_id],
    ).fetchone()
    assert value == "unfaithful"
    assert explanation == records[summary_id]["explanations"][0]
    unfaithful_sentences = cur.execute(
        "SELECT count(*) FROM current_label WHERE dataset='storysumm' AND source='gold' AND level='sentence' AND target_id LIKE ? AND value='unfaithful'",
        [summary_id + "#s%"],
    ).fetchone()[0]
    assert unfaithful_sentences == 0


def test_explanations_sit_on_the_sentences_marked_zero(cur) -> None:
    records = raw.storysumm_records()
    rows = cur.execute(
        "SELECT target_id, explanation FROM current_label WHERE dataset='storysumm' AND source='gold' AND level='sentence' AND value='unfaithful'"
    ).fetchall()
    found = dict(rows)
    for summary_id, record in records.items():
        if len(record["errors"]) != len(record["summary"]):
            continue
        flagged = [i for i, e in enumerate(record["errors"]) if e == 0]
        for i, explanation in zip(flagged, record["explanations"], strict=False):
            assert found[f"{summary_id}#s{i}"] == explanation


def test_unalignable_sentence_labels_are_logged_not_guessed(cur) -> None:
    records = raw.storysumm_records()
    mismatched = [k for k, r in records.items() if len(r["errors"]) != len(r["summary"])]
    assert mismatched
    for summary_id in mismatched:
        attached = cur.execute(
            "SELECT count(*) FROM label WHERE dataset='storysumm' AND source='gold' AND level='sentence' AND target_id LIKE ?",
            [summary_id + "#s%"],
        ).fetchone()[0]
        assert attached == 0
        logged = cur.execute(
            "SELECT count(*) FROM ingest_log WHERE dataset='storysumm' AND position = ?", [f"record {summary_id!r}"]
        ).fetchone()[0]
        assert logged == 1


def test_score_sources_keep_scores_without_inventing_labels(cur) -> None:
    predictions = raw.storysumm_predictions()
    for source in ("alignscore-roberta-large", "unieval"):
        rows = dict(
            cur.execute(
                "SELECT target_id, score FROM current_label WHERE dataset='storysumm' AND source=? AND level='summary' AND value IS NULL",
                [source],
            ).fetchall()
        )
        assert rows == {k: pytest.approx(v["probs"]) for k, v in predictions[source].items()}


def test_cot_reasoning_is_kept_as_explanation(cur) -> None:
    predictions = raw.storysumm_predictions()["gpt-4-0125-preview/cot"]
    rows = dict(
        cur.execute(
            "SELECT target_id, explanation FROM current_label WHERE dataset='storysumm' AND source='gpt-4-0125-preview/cot'"
        ).fetchall()
    )
    assert rows == {k: v["probs"] for k, v in predictions.items()}


def test_minicheck_sentence_scores_are_attached_where_segmentation_agrees(cur) -> None:
    records = raw.storysumm_records()
    predictions = raw.storysumm_predictions()["minicheck-flan-t5-large"]
    expected = {
        f"{k}#s{i}": score
        for k, p in predictions.items()
        if len(p["sentence_labels"]) == len(records[k]["summary"])
        for i, score in enumerate(p["probs"])
    }
    rows = dict(
        cur.execute(
            "SELECT target_id, score FROM current_label WHERE dataset='storysumm' AND source='minicheck-flan-t5-large' AND level='sentence'"
        ).fetchall()
    )
    assert rows == pytest.approx(expected)


def test_difficulty_tags_match_the_raw_file(cur) -> None:
    expected = {k: r["difficulty"] for k, r in raw.storysumm_records().items() if r["difficulty"]}
    rows = dict(
        cur.execute("SELECT target_id, value FROM tag WHERE dataset='storysumm' AND kind='difficulty'").fetchall()
    )
    assert rows == expected
