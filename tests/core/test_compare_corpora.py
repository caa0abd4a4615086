"""Compare's TofuEval rows per corpus (MediaSum / MeetingBank) and per corpus and topic type, the
cells of TofuEval's Table 3. Expected sizes come from the raw CSVs, each document's split and corpus
read from `document_ids_dev_test_split.json` (the loader takes them from the CSV file names, so the
two sources check each other), topic types from `topic_category/`.

The release carries no evaluator predictions, so Table 3's evaluator figures cannot be recomputed;
its Baseline row (a constant prediction, 50.0 balanced accuracy in every cell) can."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from faithlens.errors import NotFoundError
from faithlens.views import compare
from tests import raw

TOFU = raw.DATA / "tofueval"
CORPORA = ("mediasum", "meetingbank")
TOPIC_TYPES = ("main", "marginal")
# TofuEval Table 3: the Baseline row's balanced accuracy in every cell (always one label).
PAPER_TABLE_3_BASELINE = 50.0


def _raw_sizes() -> tuple[Counter, Counter]:
    """(sentences, summaries) per (split, corpus, topic type), from the CSVs (exact duplicate rows once)."""
    where = {
        doc_id: (split, corpus)
        for split, by_corpus in json.loads((TOFU / "document_ids_dev_test_split.json").read_text()).items()
        for corpus, doc_ids in by_corpus.items()
        for doc_id in doc_ids
    }
    types = {}
    for corpus in CORPORA:
        types.update(json.loads((TOFU / "topic_category" / f"{corpus}_topic_category.json").read_text()))
    sentences, summaries, seen = Counter(), set(), set()
    for path in sorted((TOFU / "factual_consistency").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if tuple(row.values()) in seen:
                    continue
                seen.add(tuple(row.values()))
                split, corpus = where[row["doc_id"]]
                assert path.name == f"{corpus}_factual_eval_{split}.csv"
                key = (split, corpus, types[row["topic"]])
                sentences[key] += 1
                summaries.add((*key, row["doc_id"], row["topic"], row["model_name"]))
    return sentences, Counter(summary[:3] for summary in summaries)


def _expected(sizes: Counter, split: str, group: compare.Group) -> int:
    return sum(
        n
        for (s, corpus, topic_type), n in sizes.items()
        if split in ("all", s) and group.corpus in ("all", corpus) and group.topic_type in ("all", topic_type)
    )


@pytest.fixture
def coder(db_copy: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A copy of the bundled database with 'coder:copy', a copy of TofuEval's sentence gold."""
    conn = duckdb.connect(str(db_copy))
    with conn.cursor() as cur:
        cur.execute("INSERT INTO label_source (dataset, source, kind) VALUES ('tofueval', 'coder:copy', 'coder')")
        cur.execute(
            "INSERT INTO label (dataset, source, level, target_id, value) SELECT dataset, 'coder:copy', level, "
            "target_id, value FROM current_label WHERE dataset = 'tofueval' AND source = 'gold' AND level = 'sentence'"
        )
        yield cur
    conn.close()


@pytest.mark.parametrize("level", ["sentence", "summary"])
def test_rows_per_corpus_and_topic_type_count_the_raw_csvs(coder, level: str) -> None:
    sizes = _raw_sizes()[0 if level == "sentence" else 1]
    result = compare.compare(coder, "tofueval", level, sources=["coder:copy"], by_topic=True)
    per_corpus = [compare.Group(c, t) for c in CORPORA for t in ("all", *TOPIC_TYPES)]
    assert result.groups == (compare.Group(), *(compare.Group(topic_type=t) for t in TOPIC_TYPES), *per_corpus)
    pair = result.pairs[0]
    assert len(pair.rows) == 3 * len(result.groups)
    for split in ("all", "dev", "test"):
        for group in result.groups:
            assert pair.row(split, group.name).metrics.n == _expected(sizes, split, group), (split, group)
    row = pair.row("test", "mediasum main").as_json(with_group=True)
    assert (row["split"], row["corpus"], row["topic_type"]) == ("test", "mediasum", "main")
    assert pair.row("test", "meetingbank").as_json(with_group=True)["topic_type"] is None


def test_rows_without_by_topic_stay_per_split(coder) -> None:
    result = compare.compare(coder, "tofueval", "sentence", sources=["coder:copy"])
    assert result.groups == (compare.Group(),)
    assert [row.split for row in result.pairs[0].rows] == ["all", "dev", "test"]
    assert all("corpus" not in row for row in result.json_rows())


@pytest.mark.parametrize("level", ["sentence", "summary"])
def test_table_3_baseline_row_is_reproduced(coder, level: str) -> None:
    """A source that calls every sentence consistent: balanced accuracy 50.0 in every test-split cell
    of Table 3 (at summary level its labels are aggregated from sentences, as Table 3's LLM rows)."""
    coder.execute("UPDATE label SET value = 'faithful' WHERE dataset = 'tofueval' AND source = 'coder:copy'")
    pair = compare.compare(coder, "tofueval", level, sources=["coder:copy"], by_topic=True).pairs[0]
    for corpus in CORPORA:
        for topic_type in TOPIC_TYPES:
            row = pair.row("test", f"{corpus} {topic_type}")
            assert row.metrics.balanced_accuracy == PAPER_TABLE_3_BASELINE, (corpus, topic_type)


def test_drill_down_on_one_corpus_and_topic_type(coder) -> None:
    summary_id = coder.execute(
        "SELECT s.summary_id FROM summary s JOIN document d USING (dataset, document_id) WHERE s.dataset = 'tofueval' "
        "AND s.split = 'test' AND s.topic_type = 'marginal' AND d.source = 'meetingbank' ORDER BY 1 LIMIT 1"
    ).fetchone()[0]
    coder.execute(
        "UPDATE label SET value = 'unfaithful' WHERE dataset = 'tofueval' AND source = 'coder:copy' AND target_id = ?",
        [f"{summary_id}#s0"],
    )
    sizes = _raw_sizes()[0]
    examples = {
        (ref, cmp): compare.drill_down(
            coder, "tofueval", "sentence", "gold", "coder:copy", ref, cmp, split="test", group="meetingbank marginal"
        )
        for ref in ("faithful", "unfaithful")
        for cmp in ("faithful", "unfaithful")
    }
    group = compare.Group("meetingbank", "marginal")
    assert sum(len(units) for units in examples.values()) == _expected(sizes, "test", group)
    assert f"{summary_id}#s0" in {e.unit_id for units in examples.values() for e in units}
    assert all(e.split == "test" and e.topic_type == "marginal" for units in examples.values() for e in units)
    with pytest.raises(NotFoundError):
        compare.drill_down(coder, "tofueval", "sentence", "gold", "coder:copy", "faithful", "faithful", group="nope")
